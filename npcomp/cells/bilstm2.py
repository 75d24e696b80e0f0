r"""2-layer bidirectional LSTM (Tai, Socher & Manning 2015, Sec. 2.2 and
Table 1 "Bidirectional 2-layer"; Graves et al. 2013's deep bidirectional LSTM).

"These two variants can be combined as a Multilayer Bidirectional LSTM"
(Tai Sec. 2.2).  Layer 1 is a bidirectional LSTM (``bilstm.py``) read at
every step; layer 2 is a bidirectional LSTM whose input at step t is layer
1's state at step t, both directions.  Row-vector orientation, every LSTM
is Tai eq. 1 (``lstm.py``, columns i|o|u|f):

    h1F_t = LSTM_1F(x_t, h1F_{t-1}),          h1B_t = LSTM_1B(x_t, h1B_{t+1})        (1)
    y_t   = [ h1F_t ; h1B_t ]                 (2d, at every step: ``forward_steps``)
    h2F_t = LSTM_2F(y_t, h2F_{t-1}),          h2B_t = LSTM_2B(y_t, h2B_{t+1})        (1)
    out_t = [ h2F_t ; h2B_t ]  for t < T,     out_T = [ h2F_T ; h2B_1 ]

so the sentence (the chain's root, out_T) is layer 2's two final states, as
in ``bilstm``.  Footnote 2: the forward and backward LSTMs of a layer share
their weights (LSTM_1F = LSTM_1B, LSTM_2F = LSTM_2B; the default); with
``untied=True`` each layer's backward LSTM has weights of its own.

Backward (each layer's own backward is bilstm.py's):

    layer 2 back from d_out (root row's h^B part to h2B_1) -> dW_2, dU_2, db_2
        (and the _backward_2 ones when untied) and eps_y_t = d y_t, (n, 2d)
    layer 1 back from eps_y (eps_y_t[:d] to h1F_t, eps_y_t[d:] to h1B_t, the
        root included) -> dW, dU, db (and _backward) and d x_t

Recurrent dropout (Gal 2015, one mask per sequence): ``recurrent_widths()
== [d, d, d, d]``, masks [m1F, m1B, m2F, m2B] (sentences, d) on the previous
state of each of the four LSTMs where it enters its step (lstm.py); y_t and
out_t are not masked.

Parameters (d = hidden_dim, d_x = input_dim):

========================  ======================================  =========================
paper                     code                                    shape
========================  ======================================  =========================
layer 1 W, U, b of eq. 1  ``W``, ``U``, ``b``                     (d_x, 4d), (d, 4d), (4d,)
layer 1 backward, untied  ``W_backward``, ``U_backward``,         the same
                          ``b_backward``
layer 2 W, U, b of eq. 1  ``W_2``, ``U_2``, ``b_2``               (2d, 4d), (d, 4d), (4d,)
layer 2 backward, untied  ``W_backward_2``, ``U_backward_2``,     the same
                          ``b_backward_2``
========================  ======================================  =========================
"""
from __future__ import annotations

from .bilstm import BiLSTM
from .lstm2 import StackedLSTM


class StackedBiLSTM(StackedLSTM):
    """Two bidirectional LSTMs, the second reading the first's [h^F_t ; h^B_t]."""

    name = "bilstm2"
    options = ("untied",)

    def __init__(self, input_dim: int, hidden_dim: int, untied: bool = False):
        self.untied = untied
        self._stack(BiLSTM(input_dim, hidden_dim, untied=untied),
                    BiLSTM(2 * hidden_dim, hidden_dim, untied=untied))

    def _first_forward(self):
        """Layer 1 read at every step, the root included (not bilstm's sentence row)."""
        return self.layers[0].forward_steps
