r"""2-layer (stacked) LSTM (Tai, Socher & Manning 2015, Sec. 2.2 "Multilayer
LSTM" and Table 1 "2-layer"; Graves et al. 2013).

"The hidden state of an LSTM unit in layer l is used as input to the LSTM
unit in layer l+1 in the same time step" (Tai Sec. 2.2).  Two chain LSTMs
(Tai eq. 1, ``lstm.py``), row-vector orientation (``x @ W`` is the paper's
W x), columns i|o|u|f:

    layer 1:  z1_t = x_t  W   + h1_{t-1} U   + b     -> i, o, u, f -> c1_t, h1_t   (1)
    layer 2:  z2_t = h1_t W_2 + h2_{t-1} U_2 + b_2   -> i, o, u, f -> c2_t, h2_t   (1)
    out_t = h2_t

with h_0 = c_0 = 0 in both layers; the classifier reads layer 2 (at a
chain's root, the sentence).  In the forest, layer 2 is the same chain LSTM
run over the same chains with node t "reading word t" = row t of h1
(``word_index = arange(n)``).

Backward (eps = dLoss/d state; each layer's own backward is lstm.py's):

    eps_h2_t = d_out_t                                   (the head's gradient)
    layer 2 back through its chains -> dW_2, dU_2, db_2 and
        eps_h1_t = d x2_t = delta2_t W_2^T               (reverses z2_t's h1_t W_2)
    layer 1 back through its chains with eps_h1 -> dW, dU, db, d x_t

h1_t feeds only layer 2 at step t (its recurrence inside layer 1 is layer 1's
own business), so eps_h1 is exactly layer 2's input gradient.

Recurrent dropout (Gal 2015, one mask per sequence): ``recurrent_widths()
== [d, d]``, masks [m1, m2] (sentences, d) on h1_{t-1} and h2_{t-1} where they
enter their own layer's step t (lstm.py).  Neither layer's output is masked,
so layer 2 reads the unmasked h1_t.

Parameters (d = hidden_dim, d_x = input_dim):

========================  =========================  =========================
paper                     code                       shape
========================  =========================  =========================
layer 1 W, U, b of eq. 1  ``W``, ``U``, ``b``        (d_x, 4d), (d, 4d), (4d,)
layer 2 W, U, b of eq. 1  ``W_2``, ``U_2``, ``b_2``  (d, 4d), (d, 4d), (4d,)
========================  =========================  =========================

(Layer 1's names are the 1-layer ``lstm``'s; layer l > 1 adds ``_l``.)
The quantities and error terms ``npcomp explain`` shows are each layer's own
(lstm.py's symbols) suffixed with the layer: ``i1``, ``h2``, ``eps_h1``,
``delta_f2``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ..forest import Forest
from .interface import (
    Part,
    SequenceCell,
    StateTerm,
    head_part,
    inner_nudge,
    reasons,
)
from .lstm import ChainLSTM


@dataclass
class StackedCache:
    first: object  # layer 1's cache
    second: object  # layer 2's cache (its x is layer 1's output)


def layer_suffix(layer: int) -> str:
    """Suffix of a layer's parameter names: '' for layer 1, '_2' for layer 2."""
    return "" if layer == 1 else f"_{layer}"


class StackedLSTM(SequenceCell):
    """Two chain LSTMs, the second reading the first's h_t at step t.

    ``bilstm2`` (bilstm.py's ``BiLSTM`` with this cell as its direction cell)
    runs this whole stack once per direction."""

    name = "lstm2"

    def __init__(
        self,
        input_dim: int,
        hidden_dim: int,
        output_gate: bool = True,
        layer_outputs: str = "top",
        forget_bias: float = 0.0,
    ):
        self.input_dim = input_dim
        self.hidden_dim = hidden_dim
        self.layer_outputs = layer_outputs
        self.output_dim = hidden_dim * (2 if layer_outputs == "all" else 1)
        self.layers = (
            ChainLSTM(input_dim, hidden_dim, output_gate, forget_bias),
            ChainLSTM(hidden_dim, hidden_dim, output_gate, forget_bias),
        )

    # ---- names: layer l's parameters are the layer cell's names + suffix ----

    def _named(self, layer: int) -> list:
        """[(this cell's name, layer cell's name, shape)] for layer 1 or 2."""
        suffix = layer_suffix(layer)
        return [(name + suffix, name, shape) for name, shape in self.layers[layer - 1].parameter_shapes()]

    def _views(self, params: dict, layer: int) -> dict:
        """Layer ``layer``'s parameters (or gradients: same names) under the layer
        cell's own names; views, so a layer adding into its gradients adds here."""
        return {inner: params[outer] for outer, inner, _ in self._named(layer)}

    def parameter_shapes(self) -> list:
        return [(outer, shape) for layer in (1, 2) for outer, _, shape in self._named(layer)]

    def report_slices(self) -> dict:
        out = {}
        for layer in (1, 2):
            suffix = layer_suffix(layer)
            for sub, (block, index) in self.layers[layer - 1].report_slices().items():
                # "W.i" (block W) -> "W_2.i" (block W_2)
                out[block + suffix + sub[len(block) :]] = (block + suffix, index)
        return out

    def initialise(self, params: dict, rng: np.random.Generator) -> None:
        for layer in (1, 2):
            self.layers[layer - 1].initialise(self._views(params, layer), rng)

    def recurrent_widths(self) -> list:
        """Layer 1's recurrent connections, then layer 2's."""
        return self.layers[0].recurrent_widths() + self.layers[1].recurrent_widths()

    def _split_masks(self, recurrent_masks) -> tuple:
        if recurrent_masks is None:
            return None, None
        first = len(self.layers[0].recurrent_widths())
        if len(recurrent_masks) != len(self.recurrent_widths()):
            raise ValueError(
                f"{self.name} has {len(self.recurrent_widths())} recurrent "
                f"connections, got {len(recurrent_masks)} masks"
            )
        return list(recurrent_masks[:first]), list(recurrent_masks[first:])

    def forward(
        self, params: dict, forest: Forest, x: np.ndarray, word_index: np.ndarray, recurrent_masks=None, nudge=None
    ):
        """x: (U, d_x) distinct words; word_index: (n,) row of x per node;
        recurrent_masks: None or one (sentences, d) mask per recurrent
        connection (``recurrent_widths``).  Returns out (n, output_dim), cache.
        ``nudge`` (interface.Nudge) moves a layer's state: h1, c1, h2, c2."""
        first_masks, second_masks = self._split_masks(recurrent_masks)
        h1, first = self.layers[0].forward(
            self._views(params, 1),
            forest,
            x,
            word_index,
            recurrent_masks=first_masks,
            nudge=inner_nudge(nudge, {"h1": "h", "c1": "c"}),
        )
        # layer 2 reads h1_t at node t: row t of h1 is node t's "word"
        steps = np.arange(forest.n_nodes)
        h2, second = self.layers[1].forward(
            self._views(params, 2),
            forest,
            h1,
            steps,
            recurrent_masks=second_masks,
            nudge=inner_nudge(nudge, {"h2": "h", "c2": "c"}),
        )
        out = np.concatenate([h1, h2], axis=1) if self.layer_outputs == "all" else h2
        return out, StackedCache(first, second)

    def backward(self, params: dict, forest: Forest, cache: StackedCache, d_out: np.ndarray, grads: dict) -> np.ndarray:
        """d_out: (n, output_dim) dLoss/dout.  Adds both layers' parameter gradients
        into ``grads``; returns dLoss/dx (U, d_x)."""
        d = self.hidden_dim
        d_h2 = d_out if self.layer_outputs == "top" else np.ascontiguousarray(d_out[:, d:])
        # layer 2 first: its input gradient, one row per node, is eps_h1
        d_h1 = self.layers[1].backward(self._views(params, 2), forest, cache.second, d_h2, self._views(grads, 2))
        if self.layer_outputs == "all":  # h1_t also reaches the output directly
            d_h1 += d_out[:, :d]
        return self.layers[0].backward(self._views(params, 1), forest, cache.first, d_h1, self._views(grads, 1))

    def forward_terms(self, forest: Forest, cache: StackedCache) -> list:
        """Layer 1's quantities suffixed 1 (``i1`` .. ``h1``), then layer 2's
        suffixed 2, as reference/lstm2.py names them."""
        return _layer_terms(self.layers[0].forward_terms(forest, cache.first), 1) + _layer_terms(
            self.layers[1].forward_terms(forest, cache.second), 2
        )

    def backward_terms(self, forest: Forest, cache: StackedCache) -> list:
        """Layer 2's error terms (``eps_h2``, ``delta_o2``, ...), then layer 1's:
        eps_h1 is layer 2's input gradient plus layer 1's own recurrence."""
        return _layer_terms(self.layers[1].backward_terms(forest, cache.second), 2) + _layer_terms(
            self.layers[0].backward_terms(forest, cache.first), 1
        )

    def state_terms(self, forest: Forest, cache: StackedCache) -> list:
        """Layer 2's h2, c2, then layer 1's h1, c1 (the order the backward
        completes them at a step)."""
        return [
            StateTerm(state + str(layer), symbol + str(layer))
            for layer in (2, 1)
            for state, symbol in (("h", "eps_h"), ("c", "eps_c"))
        ]

    def term_parts(self, params: dict, forest: Forest, cache: StackedCache, d_out: np.ndarray) -> list:
        """Layer 2's parts from the head; layer 1's eps_h1 from layer 2's input
        gates (delta2_t W_2^T, where layer 2 reads h1_t as its x_t) and, with
        ``layer_outputs="all"``, the head's share of h1_t."""
        d, n = self.hidden_dim, forest.n_nodes
        top = self.layer_outputs == "top"
        second = self.layers[1].parts_from(
            self._views(params, 2), forest, cache.second, [head_part(forest, d_out if top else d_out[:, d:])], []
        )
        # layer 2's x_t is h1_t: its input deltas i|o|u|f through W_2 (lstm.py, inner inputs)
        read = cache.second.delta[:n] @ self._views(params, 2)["W"].T
        upstream = [Part("delta2_t (W_2)^T", "reverses 1 (layer 2 reads h1_t as x_t)", read, reasons(n))]
        if not top:
            upstream.append(head_part(forest, d_out[:, :d], "dJ/dh1 from the head (all layers)"))
        first = self.layers[0].parts_from(self._views(params, 1), forest, cache.first, upstream, [])
        return [replace(term, symbol=term.symbol + "2") for term in second] + [
            replace(term, symbol=term.symbol + "1") for term in first
        ]


def _layer_terms(terms: list, layer: int) -> list:
    return [replace(term, symbol=f"{term.symbol}{layer}") for term in terms]
