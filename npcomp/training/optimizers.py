"""Optimisers over the flat parameter vector, with explicit state.

Every optimiser updates the dense prefix ``flat[:dense_size]`` (composition
and classifier weights) as a whole and the embedding table only on the rows a
minibatch read (``rows``), with its own learning rate: a dense update of the
whole table is several times slower and, with AdaGrad, would fill untouched
rows with denormal numbers.  After a step the gradient buffer is zeroed on
exactly the entries the step consumed, ready for the next minibatch.

AdaGrad and Adadelta flush every value a step writes (weights and state) to
0 where it would be subnormal.  A weight whose only gradient is the L2 term
(for example the S-LSTM's weights on a right child's cell in left-branching
trees, where that cell is always 0) shrinks by a nearly constant factor each
step and ends as a subnormal number that the factor can no longer change;
arithmetic on subnormals takes a slow path on x86 CPUs, and such weights
made the S-LSTM's training five times slower (``bench/bench_subnormal.py``).
The flush changes no result that matters: a subnormal weight adds less than
half a unit in the last place to any sum with a normal term, and the states
only ever appear beside epsilon.  (SGD's factor, 1 - lr * lambda, would take
millions of steps to get there.)

AdaGrad (Duchi et al. 2011):   G += g^2;  theta -= lr * g / (sqrt(G) + eps)
                               (eps 1e-10 as Torch's optim.adagrad in Tai et al.'s
                               code; ``epsilon`` sets another, e.g. Socher et al.'s
                               1e-3, which damps the steps of small gradients)
Adadelta (Zeiler 2012):        E[g^2] = rho E[g^2] + (1-rho) g^2
                               dx = -sqrt(E[dx^2] + eps) / sqrt(E[g^2] + eps) * g
                               E[dx^2] = rho E[dx^2] + (1-rho) dx^2;  theta += lr * dx
SGD:                           theta -= lr * g

``embedding_rule="sgd"`` updates the embedding rows by plain SGD at
``embedding_lr`` whatever the optimiser of the rest, as Tai et al.'s released
code does (AdaGrad for the weights, SGD for the word vectors): with AdaGrad
the first step moves every touched coordinate by about ``embedding_lr``
however small its gradient, with SGD by lr times the gradient.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from npcomp.configuration.options import OPTIONS

# the option table's choices (``--optimizer``, ``--emb-optimizer``)
OPTIMIZERS = OPTIONS["optimizer"].choices
EMBEDDING_RULES = OPTIONS["emb_optimizer"].choices
_FIRST_ROW = np.zeros(1, dtype=np.int64)


class Optimizer:
    """Base: dense prefix + sparse embedding rows; subclasses define the rule."""

    name = ""
    state_names: tuple = ()

    def __init__(
        self,
        size: int,
        dense_size: int,
        embedding_offset: int,
        embedding_dim: int,
        lr: float,
        embedding_lr: float,
        dtype=np.float32,
        embedding_rule: str = "same",
        epsilon: float | None = None,
    ):
        if embedding_rule not in EMBEDDING_RULES:
            raise ValueError(f"embedding rule must be one of {EMBEDDING_RULES}, not {embedding_rule!r}")
        self.embedding_rule = embedding_rule
        if epsilon is not None:
            self.epsilon = epsilon
        self.dense_size = dense_size
        self.embedding_offset = embedding_offset
        self.embedding_dim = embedding_dim
        self.lr = lr
        self.embedding_lr = embedding_lr
        self.state = {name: np.zeros(size, dtype=dtype) for name in self.state_names}

    @staticmethod
    def for_model(
        model,
        name: str,
        lr: float,
        embedding_lr: float | None = None,
        dtype=np.float32,
        embedding_rule: str = "same",
        epsilon: float | None = None,
    ) -> "Optimizer":
        """The optimiser ``name`` (adagrad, adadelta or sgd) of ``model``'s
        parameters, its state laid out as they are (the dense prefix and the
        embedding table's offset and width read from ``model.layout``).
        ``lr``: the rate of the composition and classifier weights;
        ``embedding_lr``: the word vectors' (default ``lr``); ``dtype``: the
        parameters' (the state's own); ``embedding_rule`` and ``epsilon`` as
        ``make_optimizer`` takes them (module docstring)."""
        embedding = model.layout["embedding"]
        return make_optimizer(
            name,
            size=model.layout.size,
            dense_size=model.dense_size,
            embedding_offset=embedding.offset,
            embedding_dim=embedding.shape[1],
            lr=lr,
            embedding_lr=lr if embedding_lr is None else embedding_lr,
            dtype=dtype,
            embedding_rule=embedding_rule,
            epsilon=epsilon,
        )

    def step(self, params: np.ndarray, grads: np.ndarray, rows: np.ndarray | None) -> None:
        """Update ``params`` (flat) from ``grads`` (flat); ``rows``: embedding rows
        to update, or None to leave the embedding table fixed.  Zeroes what it used."""
        # the dense prefix is updated as one long row, by the same kernel
        dense = slice(0, self.dense_size)
        self._update(
            params[None, dense], grads[None, dense], [s[None, dense] for s in self._states()], _FIRST_ROW, self.lr
        )
        grads[dense] = 0.0
        embedding = slice(self.embedding_offset, None)
        table = params[embedding].reshape(-1, self.embedding_dim)
        gradient = grads[embedding].reshape(-1, self.embedding_dim)
        if rows is not None and rows.shape[0] > 0:
            if self.embedding_rule == "sgd":
                table[rows] -= table.dtype.type(self.embedding_lr) * gradient[rows]
            else:
                states = [s[embedding].reshape(-1, self.embedding_dim) for s in self._states()]
                self._update(table, gradient, states, rows.astype(np.int64), self.embedding_lr)
        if rows is not None:
            gradient[rows] = 0.0

    def reset(self) -> None:
        """Forget the accumulated state (AdaGrad's squared gradients): the
        next steps are as large as the first ones."""
        for value in self.state.values():
            value[...] = 0.0

    def _states(self) -> list:
        return [self.state[name] for name in self.state_names]

    def state_dict(self) -> dict:
        return {f"optimizer.{name}": value for name, value in self.state.items()}

    def load_state_dict(self, arrays) -> None:
        for name in self.state_names:
            self.state[name][...] = arrays[f"optimizer.{name}"]


class AdaGrad(Optimizer):
    name = "adagrad"
    state_names = ("sum_squares",)
    epsilon = 1e-10

    def _update(self, table, gradient, states, rows, lr):
        # scalars of the table's type keep float32 arithmetic (and SIMD) in float32
        scalar = table.dtype.type
        _adagrad_rows(table, gradient, states[0], rows, scalar(lr), scalar(self.epsilon), smallest_normal(table.dtype))


class Adadelta(Optimizer):
    name = "adadelta"
    state_names = ("mean_square_gradient", "mean_square_step")
    rho = 0.95
    epsilon = 1e-6

    def _update(self, table, gradient, states, rows, lr):
        scalar = table.dtype.type
        _adadelta_rows(
            table,
            gradient,
            states[0],
            states[1],
            rows,
            scalar(lr),
            scalar(self.rho),
            scalar(self.epsilon),
            smallest_normal(table.dtype),
        )


class SGD(Optimizer):
    name = "sgd"
    state_names = ()

    def _update(self, table, gradient, states, rows, lr):
        table[rows] -= lr * gradient[rows]


def make_optimizer(name: str, **kwargs) -> Optimizer:
    """The optimiser ``name`` over a flat vector laid out as ``kwargs`` say
    (``Optimizer``'s arguments: size, dense_size, embedding_offset,
    embedding_dim, lr, embedding_lr, ...); ``Optimizer.for_model`` reads
    the layout from a model."""
    classes = {"adagrad": AdaGrad, "adadelta": Adadelta, "sgd": SGD}
    if name not in classes:
        raise ValueError(f"optimizer must be one of {OPTIMIZERS}, not {name!r}")
    return classes[name](**kwargs)


def smallest_normal(dtype):
    """The smallest positive normal number of ``dtype``, as that type."""
    return np.finfo(dtype).smallest_normal


@njit(cache=True, inline="always")
def _flushed(value, smallest):
    """value, or 0 where it is subnormal; NaN and inf are kept."""
    return value * 0 if abs(value) < smallest else value


# error_model="numpy": a division follows IEEE rules instead of testing for a
# zero divisor, which lets the loops compile to SIMD code (7x faster on the
# dense prefix); the divisors here are never 0 (epsilon > 0), so the results
# are bit-for-bit those of the tested form
@njit(cache=True, nogil=True, error_model="numpy")
def _adagrad_rows(table, gradient, sum_squares, rows, lr, epsilon, smallest):
    for row in rows:
        for q in range(table.shape[1]):
            g = gradient[row, q]
            sum_squares[row, q] = _flushed(sum_squares[row, q] + g * g, smallest)
            table[row, q] = _flushed(table[row, q] - lr * g / (np.sqrt(sum_squares[row, q]) + epsilon), smallest)


@njit(cache=True, nogil=True, error_model="numpy")
def _adadelta_rows(table, gradient, mean_g, mean_dx, rows, lr, rho, epsilon, smallest):
    for row in rows:
        for q in range(table.shape[1]):
            g = gradient[row, q]
            mean_g[row, q] = _flushed(rho * mean_g[row, q] + (1 - rho) * g * g, smallest)
            step = -np.sqrt(mean_dx[row, q] + epsilon) / np.sqrt(mean_g[row, q] + epsilon) * g
            mean_dx[row, q] = _flushed(rho * mean_dx[row, q] + (1 - rho) * step * step, smallest)
            table[row, q] = _flushed(table[row, q] + lr * step, smallest)
