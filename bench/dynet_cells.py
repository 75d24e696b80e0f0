r"""npcomp's Constituency and Child-Sum Tree-LSTMs in DyNet with autobatching:
the second baseline ``bench_treelstm.py`` measures npcomp against, in the
same run as the PyTorch one.

Each model is written the way DyNet is meant to be used.  A minibatch's
computation graph is built node by node in Python, in the forest's order
(children before parents, ``npcomp/forest.py``), each node's equations as
vector expressions of its own, and DyNet's autobatching (switched on before
DyNet loads, below) finds the operations of different nodes and trees that
can run as one batched operation.  As in npcomp and ``torch_cells.py``, a
leaf's states (and the Child-Sum cell's W x + b) are computed once per
distinct word of the minibatch.  DyNet does the backward; two
``AdagradTrainer`` update the weights and the embedding table.

Column vectors, as DyNet's: a DyNet matrix holds the transpose of npcomp's
(``W x`` here is npcomp's ``x @ W``); vectors are the same.  Parameters keep
npcomp's names (``cell.W``, ``softmax.b``, ``similarity.W_p``, ``embedding``),
so ``load_npcomp`` copies an npcomp model's weights and ``npcomp_gradients``
hands DyNet's gradients back in npcomp's layout; ``check_against_npcomp``
compares the two on one forest.

Constituency Tree-LSTM (``npcomp/cells/treelstm_nary.py``, Tai et al. eqs.
9-14, N = 2, inputs at the leaves only; h = c = 0 for the missing child of a
unary node; sigma the logistic function)::

    leaf:   [i | o | u] = W x + b_iou,   c = i * u,   h = o * tanh(c)
    inner:  [i | o | u | f_1 | f_2] = U [h_1; h_2] + [b_iou; b_f; b_f]       (9)-(12)
            c = i * u + f_1 * c_1 + f_2 * c_2                                (13)
            h = o * tanh(c)                                                  (14)

Child-Sum Tree-LSTM (``treelstm_childsum.py``, eqs. 2-8; W x = 0 where a node
reads no word)::

    h~ = sum_k h_k                                                           (2)
    [i | o | u] = W_iou x + U h~ + b_iou                                     (3), (5), (6)
    f_k = sigma(W_f x + U_f h_k + b_f)                                       (4)
    c = i * u + sum_k f_k * c_k,   h = o * tanh(c)                           (7), (8)

Objectives (``npcomp/models/``, ``npcomp/heads.py``), lambda/2 ||theta||^2
over every weight but the embedding table added to each as a term of the
loss (DyNet's own weight decay shrinks the weights at every update instead,
another rule)::

    softmax at every labelled node, over the B trees of the forest (npcomp's
    average="sentences"; inverted dropout on h_j while training):
        J = (1/B) sum_j -log softmax(W_s h_j + b_s)[y_j]
    similarity of each of the m pairs (Tai et al. eq. 15):
        h_x = h_L * h_R,   h_+ = |h_L - h_R|,   h_s = sigma(W_times h_x + W_plus h_+ + b_h)
        p_hat = softmax(W_p h_s + b_p),   J = (1/m) sum KL(p || p_hat)
        p: Tai's sparse target, y - floor(y) on class floor(y) + 1, the rest on floor(y)

AdaGrad: DyNet's ``AdagradTrainer`` divides by sqrt(G + eps), npcomp by
sqrt(G) + eps; eps = 1e-20 under the root matches npcomp's 1e-10 outside it.
DyNet's trainers clip the gradient's norm at 5 unless told otherwise: here
they do not clip, as npcomp does not.  DyNet computes in float32 only; the
CPU build on PyPI (``pip install dynet38``: DyNet 2.1's sources, published
as 2.2; not an npcomp dependency) runs on one thread.
"""

from __future__ import annotations

import sys

import numpy as np

from counterparts import comparison, softmax_model_sizes

if "dynet" in sys.modules:
    # dynet_config only takes effect before DyNet's first import
    raise ImportError(
        "dynet_cells switches DyNet's autobatching on, which must happen "
        "before dynet is first imported; import dynet_cells first"
    )
import dynet_config  # noqa: E402

# autobatching on; a fixed seed for the dropout masks; the memory pools grow
# from 1 GB when a forest needs more
dynet_config.set(autobatch=1, random_seed=1, mem="1024")
import dynet as dy  # noqa: E402

ADAGRAD_EPSILON = 1e-20
# DyNet's float32 against npcomp's float64 from the same float32 weights, on
# one forest: relative differences within a few hundred float32 roundings
# (epsilon 1.2e-7); the gradients' relative to each parameter's largest entry
LOSS_TOLERANCE = 1e-6
GRADIENT_TOLERANCE = 2e-5


def version() -> str:
    """The installed DyNet's version as PyPI names it, with its sources'."""
    from importlib.metadata import PackageNotFoundError, version as package_version

    try:
        published = package_version("dyNET38")
    except PackageNotFoundError:
        published = dy.__version__
    return f"{published} ({dy.__gitversion__})"


class Weights:
    """A model's DyNet parameters under npcomp's names and shapes ({name:
    shape} of npcomp's layout, the embedding table apart); the weights and the
    embedding table are separate collections, so each gets a trainer."""

    def __init__(self, shapes: dict, vocab_size: int, input_dim: int):
        self.collection = dy.ParameterCollection()
        self.dense = self.collection.add_subcollection("weights")
        self.words = self.collection.add_subcollection("words")
        self.shapes = dict(shapes)
        self.parameters = {name: self.dense.add_parameters(tuple(reversed(shape))) for name, shape in shapes.items()}
        self.embedding = self.words.add_lookup_parameters((vocab_size, input_dim))

    def expressions(self) -> dict:
        """Every weight as an expression of the current computation graph
        (``expr``'s default, update=False, would hold it constant)."""
        return {name: parameter.expr(True) for name, parameter in self.parameters.items()}

    def squared_norm(self, expressions: dict) -> dy.Expression:
        """||theta||^2 over every weight but the embedding table."""
        return dy.esum([dy.squared_norm(expressions[name]) for name in self.parameters])

    def load_npcomp(self, params) -> None:
        """Copies npcomp's parameters (``npcomp.params.Parameters``)."""
        for name, parameter in self.parameters.items():
            parameter.set_value(np.ascontiguousarray(np.asarray(params[name]).T, dtype=np.float32))
        self.embedding.init_from_array(np.asarray(params["embedding"], dtype=np.float32))

    def npcomp_gradients(self) -> dict:
        """The gradients DyNet's backward left, under npcomp's names and layout."""
        out = {
            name: parameter.grad_as_array().T.reshape(self.shapes[name]) for name, parameter in self.parameters.items()
        }
        out["embedding"] = self.embedding.grad_as_array()
        return out

    def trainer(self, lr: float, embedding_lr: float | None) -> "Trainer":
        """AdaGrad on the weights at ``lr`` and on the embedding rows a
        minibatch reads at ``embedding_lr`` (None: the table stays fixed)."""
        return Trainer(self, lr, embedding_lr)


class Trainer:
    """Two DyNet AdaGrad trainers, weights and embedding table, no clipping."""

    def __init__(self, weights: Weights, lr: float, embedding_lr: float | None):
        self.trainers = [dy.AdagradTrainer(weights.dense, lr, ADAGRAD_EPSILON)]
        if embedding_lr is not None:
            self.trainers.append(dy.AdagradTrainer(weights.words, embedding_lr, ADAGRAD_EPSILON))
        for trainer in self.trainers:
            trainer.set_clip_threshold(0.0)  # 0 switches DyNet's clipping off

    def step(self, loss: dy.Expression) -> float:
        """Forward (autobatched), backward and the update; the loss."""
        value = loss.value()
        loss.backward()
        for trainer in self.trainers:
            trainer.update()
        return value


def _word_vectors(embedding, fixed: bool):
    """word id -> its vector, one look-up per distinct word of the graph."""
    vectors = {}

    def vector(word: int) -> dy.Expression:
        if word not in vectors:
            vectors[word] = dy.lookup(embedding, word, update=not fixed)
        return vectors[word]

    return vector


def _tree_states(forest, leaf_state, inner_state) -> list:
    """h of every node of ``forest``, in its order (children before parents):
    ``leaf_state(word)`` gives (h, c) of a leaf reading ``word``, built once
    per distinct word; ``inner_state(j, kids, h, c)`` gives (h, c) of inner
    node j from those of its children ``kids`` (the lists ``h``, ``c``)."""
    h, c = [None] * forest.n_nodes, [None] * forest.n_nodes
    leaf_states = {}
    for j, word in enumerate(forest.word[: forest.n_leaves].tolist()):
        if word not in leaf_states:
            leaf_states[word] = leaf_state(word)
        h[j], c[j] = leaf_states[word]
    children = forest.children.tolist()
    for j in range(forest.n_leaves, forest.n_nodes):
        h[j], c[j] = inner_state(j, [k for k in children[j] if k >= 0], h, c)
    return h


class _TreeLSTM:
    """A Tree-LSTM of the sizes of the npcomp cell ``name`` it copies."""

    name = ""

    def __init__(self, input_dim: int, hidden_dim: int):
        self.input_dim = input_dim
        self.hidden_dim = self.output_dim = hidden_dim


class NaryTreeLSTM(_TreeLSTM):
    """Constituency Tree-LSTM (treelstm_nary.py, N = 2, inputs at the leaves)."""

    name = "treelstm-nary"

    def parameter_shapes(self) -> dict:
        d = self.hidden_dim
        return {"W": (self.input_dim, 3 * d), "U": (2 * d, 5 * d), "b": (4 * d,)}

    def states(self, weights: dict, forest, word_vector) -> list:
        """h of every node of ``forest``, in its order; ``weights`` the cell's
        expressions by npcomp name, ``word_vector`` a word's x."""
        if forest.max_children > 2:
            raise ValueError("the Constituency Tree-LSTM reads binary trees")
        if np.any(forest.word[forest.n_leaves :] >= 0):
            raise ValueError("the Constituency Tree-LSTM reads words at its leaves only")
        d = self.hidden_dim
        W, U, b = weights["W"], weights["U"], weights["b"]
        b_iou, b_f = dy.pick_range(b, 0, 3 * d), dy.pick_range(b, 3 * d, 4 * d)
        inner_bias = dy.concatenate([b_iou, b_f, b_f])
        zero = dy.zeros(d)

        def leaf_state(word):  # no children: eqs. 9, 11-14 without their sums
            z = dy.affine_transform([b_iou, W, word_vector(word)])
            gates = dy.logistic(dy.pick_range(z, 0, 2 * d))
            i, o = dy.pick_range(gates, 0, d), dy.pick_range(gates, d, 2 * d)
            c_leaf = dy.cmult(i, dy.tanh(dy.pick_range(z, 2 * d, 3 * d)))
            return dy.cmult(o, dy.tanh(c_leaf)), c_leaf

        def inner_state(j, kids, h, c):
            h_kids = [h[k] for k in kids] + [zero] * (2 - len(kids))
            z = dy.affine_transform([inner_bias, U, dy.concatenate(h_kids)])  # (9)-(12)
            gates = dy.logistic(z)  # one sigma over the five blocks; u's goes unused
            i, o = dy.pick_range(gates, 0, d), dy.pick_range(gates, d, 2 * d)
            u = dy.tanh(dy.pick_range(z, 2 * d, 3 * d))
            carried = [
                dy.cmult(dy.pick_range(gates, (3 + slot) * d, (4 + slot) * d), c[k]) for slot, k in enumerate(kids)
            ]  # f_k * c_k
            c_j = dy.esum([dy.cmult(i, u)] + carried)  # (13)
            return dy.cmult(o, dy.tanh(c_j)), c_j  # (14)

        return _tree_states(forest, leaf_state, inner_state)


class ChildSumTreeLSTM(_TreeLSTM):
    """Child-Sum Tree-LSTM (treelstm_childsum.py, eqs. 2-8)."""

    name = "treelstm-childsum"

    def parameter_shapes(self) -> dict:
        d = self.hidden_dim
        return {"W": (self.input_dim, 4 * d), "U": (d, 3 * d), "U_f": (d, d), "b": (4 * d,)}

    def states(self, weights: dict, forest, word_vector) -> list:
        """h of every node of ``forest``, in its order (as ``NaryTreeLSTM.states``)."""
        d = self.hidden_dim
        W, U, U_f, b = weights["W"], weights["U"], weights["U_f"], weights["b"]
        inputs = {}

        def node_input(word: int) -> dy.Expression:
            """W x + b of eqs. 3-6, once per distinct word; b alone without one."""
            if word < 0:
                return b
            if word not in inputs:
                inputs[word] = dy.affine_transform([b, W, word_vector(word)])
            return inputs[word]

        def update(iou, carried):
            """(h, c) from the i|o|u pre-activations and the children's f_k * c_k."""
            gates = dy.logistic(dy.pick_range(iou, 0, 2 * d))
            c = dy.esum(
                [dy.cmult(dy.pick_range(gates, 0, d), dy.tanh(dy.pick_range(iou, 2 * d, 3 * d)))] + carried
            )  # (7)
            return dy.cmult(dy.pick_range(gates, d, 2 * d), dy.tanh(c)), c  # (8)

        def leaf_state(word):  # h~ = 0 and no forget gate
            if word < 0:
                raise ValueError("a leaf of the Child-Sum Tree-LSTM must read a word")
            return update(dy.pick_range(node_input(word), 0, 3 * d), [])

        words = forest.word.tolist()

        def inner_state(j, kids, h, c):
            x_terms = node_input(words[j])
            h_tilde = dy.esum([h[k] for k in kids])  # (2)
            # (3), (5), (6)
            iou = dy.affine_transform([dy.pick_range(x_terms, 0, 3 * d), U, h_tilde])
            x_forget = dy.pick_range(x_terms, 3 * d, 4 * d)
            # a sum, not affine_transform: DyNet's autobatched affine_transform
            # fails in the backward ("broadcasting over columns with
            # mini-batched inputs is not implemented yet") when siblings share
            # its bias term
            carried = [dy.cmult(dy.logistic(x_forget + U_f * h[k]), c[k]) for k in kids]  # (4), (7)
            return update(iou, carried)

        return _tree_states(forest, leaf_state, inner_state)


CELLS = {"treelstm-nary": NaryTreeLSTM, "treelstm-childsum": ChildSumTreeLSTM}
# the options of npcomp's cells the counterparts follow only at these values
REQUIRED = {
    "treelstm-nary": {"arity": 2, "inner_inputs": False, "output_gate": True},
    "treelstm-childsum": {"output_gate": True},
}


def counterpart_cell(npcomp_cell):
    """The DyNet cell of an npcomp cell."""
    name = npcomp_cell.name
    if name not in CELLS:
        raise ValueError(f"no DyNet counterpart of {name}; there are {sorted(CELLS)}")
    for option, value in REQUIRED[name].items():
        have = getattr(npcomp_cell, option, value)
        if have != value:
            raise ValueError(f"the DyNet {name} needs {option}={value!r}, not {have!r}")
    return CELLS[name](npcomp_cell.input_dim, npcomp_cell.hidden_dim)


def _new_graph(weights: Weights, cell, forest, fixed_embeddings: bool) -> tuple:
    """A new computation graph: (every weight's expression by npcomp name, h
    of every node of ``forest`` by ``cell``, the word vectors held fixed if
    ``fixed_embeddings``)."""
    dy.renew_cg()
    expressions = weights.expressions()
    cell_weights = {name[len("cell.") :]: value for name, value in expressions.items() if name.startswith("cell.")}
    return expressions, cell.states(cell_weights, forest, _word_vectors(weights.embedding, fixed_embeddings))


class DynetTreeModel:
    """Embedding table + cell + softmax at the labelled nodes: npcomp's
    ``TreeModel`` with the softmax head."""

    def __init__(self, cell, vocab_size: int, input_dim: int, n_classes: int):
        self.cell = cell
        shapes = {"cell." + name: shape for name, shape in cell.parameter_shapes().items()}
        shapes.update({"softmax.W": (cell.output_dim, n_classes), "softmax.b": (n_classes,)})
        self.weights = Weights(shapes, vocab_size, input_dim)

    @classmethod
    def of(cls, model) -> "DynetTreeModel":
        """The counterpart of an npcomp ``TreeModel`` (softmax head)."""
        return cls(counterpart_cell(model.cell), *softmax_model_sizes(model, "DyNet"))

    def _graph(self, forest) -> tuple:
        """A new computation graph: (weight expressions, h of every node)."""
        return _new_graph(self.weights, self.cell, forest, fixed_embeddings=False)

    def loss(self, forest, dropout: float = 0.0, l2: float = 0.0) -> dy.Expression:
        """J of ``forest`` on a new computation graph: the summed negative
        log-likelihood of the labelled nodes over the number of trees, dropout
        on the classifier input, plus (l2/2) ||theta||^2."""
        weights, h = self._graph(forest)
        W_s, b_s = weights["softmax.W"], weights["softmax.b"]
        losses = []
        for j in np.flatnonzero(forest.label >= 0).tolist():
            inputs = dy.dropout(h[j], dropout) if dropout > 0.0 else h[j]
            losses.append(dy.pickneglogsoftmax(dy.affine_transform([b_s, W_s, inputs]), int(forest.label[j])))
        loss = dy.esum(losses) / forest.n_trees
        if l2 > 0.0:
            loss = loss + self.weights.squared_norm(weights) * (0.5 * l2)
        return loss

    def predict(self, forest) -> np.ndarray:
        """The most probable class (n,) of every node of ``forest``."""
        weights, h = self._graph(forest)
        W_s, b_s = weights["softmax.W"], weights["softmax.b"]
        logits = dy.concatenate_cols([dy.affine_transform([b_s, W_s, state]) for state in h])
        return logits.npvalue().reshape(-1, forest.n_nodes).argmax(axis=0)


def sparse_target(scores: np.ndarray, n_classes: int) -> np.ndarray:
    """(m,) scores in [1, K] -> (m, K) Tai's sparse p with r^T p = y, r = 1..K."""
    target = np.zeros((scores.shape[0], n_classes))
    lower = np.minimum(np.floor(scores), n_classes - 1).astype(np.int64)  # a class 1..K-1
    rows = np.arange(scores.shape[0])
    target[rows, lower - 1] = 1.0 - (scores - lower)
    target[rows, lower] = scores - lower
    return target


class DynetPairModel:
    """Embedding table + one cell encoding both sentences of a pair + the
    similarity head: npcomp's ``PairModel``.  ``fixed_embeddings`` keeps the
    word vectors fixed (Tai et al. on SICK): no gradient reaches the table."""

    def __init__(
        self, cell, vocab_size: int, input_dim: int, hidden_dim: int, n_classes: int, fixed_embeddings: bool = True
    ):
        self.cell = cell
        self.n_classes = n_classes
        self.fixed_embeddings = fixed_embeddings
        d = cell.output_dim
        shapes = {"cell." + name: shape for name, shape in cell.parameter_shapes().items()}
        shapes.update(
            {
                "similarity.W_times": (d, hidden_dim),
                "similarity.W_plus": (d, hidden_dim),
                "similarity.b_h": (hidden_dim,),
                "similarity.W_p": (hidden_dim, n_classes),
                "similarity.b_p": (n_classes,),
            }
        )
        self.weights = Weights(shapes, vocab_size, input_dim)

    @classmethod
    def of(cls, model, fixed_embeddings: bool = True) -> "DynetPairModel":
        """The counterpart of an npcomp ``PairModel``."""
        return cls(
            counterpart_cell(model.cell),
            model.vocab_size,
            model.embedding_dim,
            model.head.hidden_dim,
            model.n_classes,
            fixed_embeddings,
        )

    def loss(self, batch, l2: float = 0.0) -> dy.Expression:
        """J of a ``PairBatch`` (left sentences first, then their partners) on
        a new computation graph: the mean KL(p || p_hat) over the pairs, plus
        (l2/2) ||theta||^2."""
        forest, pairs = batch.forest, batch.n_pairs
        weights, h = _new_graph(self.weights, self.cell, forest, self.fixed_embeddings)
        roots = forest.root.tolist()
        target = sparse_target(np.asarray(batch.scores, dtype=np.float64), self.n_classes)
        losses = []
        # KL(p || p_hat) = sum p log p - sum p log p_hat; the first sum is a constant
        entropy = float(np.sum(target[target > 0.0] * np.log(target[target > 0.0])))
        for k in range(pairs):
            h_left, h_right = h[roots[k]], h[roots[pairs + k]]
            h_s = dy.logistic(
                dy.affine_transform(
                    [
                        weights["similarity.b_h"],
                        weights["similarity.W_times"],
                        dy.cmult(h_left, h_right),
                        weights["similarity.W_plus"],
                        dy.abs(h_left - h_right),
                    ]
                )
            )  # (15a)-(15c)
            log_p_hat = dy.log_softmax(
                dy.affine_transform([weights["similarity.b_p"], weights["similarity.W_p"], h_s])
            )  # (15d)
            losses.append(-dy.dot_product(dy.inputTensor(target[k]), log_p_hat))
        loss = (dy.esum(losses) + entropy) / pairs
        if l2 > 0.0:
            loss = loss + self.weights.squared_norm(weights) * (0.5 * l2)
        return loss


def counterpart(model, fixed_embeddings: bool = True):
    """The DyNet model of an npcomp ``TreeModel`` (softmax head) or ``PairModel``."""
    if model.head_name == "similarity":
        return DynetPairModel.of(model, fixed_embeddings)
    return DynetTreeModel.of(model)


def compare(model, params, batch, baseline, l2: float = 0.0) -> dict:
    """npcomp's loss and gradients (float64, from ``params``) against those
    of ``baseline`` (a counterpart holding the same weights) on one forest or
    ``PairBatch``: {"loss", "loss_difference": |J - J_dynet| / |J|,
    "gradient_difference": {name: max |g - g_dynet| / max |g|}}.  No dropout."""
    params = params.astype(np.float64)
    grads = params.zeros_like()
    ours, _ = model.loss_and_gradient(params, batch, grads, l2=l2)
    loss = baseline.loss(batch, l2=l2)
    theirs = loss.value()
    loss.backward()
    return comparison(ours, theirs, baseline.weights.npcomp_gradients(), grads)


def check_against_npcomp(model, params, batch, l2: float = 0.0) -> dict:
    """``compare`` on a new counterpart of ``model`` holding ``params`` in
    float32, npcomp's side computed in float64 from those same float32
    weights, so the differences are DyNet's float32 rounding alone.  The
    embedding table is trainable here, so its gradient is compared too."""
    weights = params.astype(np.float32)
    baseline = counterpart(model, fixed_embeddings=False)
    baseline.weights.load_npcomp(weights)
    return compare(model, weights, batch, baseline, l2)


def passes(result: dict) -> bool:
    """Whether a ``compare`` result is within the tolerances."""
    return (
        result["loss_difference"] < LOSS_TOLERANCE and max(result["gradient_difference"].values()) < GRADIENT_TOLERANCE
    )
