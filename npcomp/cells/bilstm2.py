r"""2-layer bidirectional LSTM (Tai, Socher & Manning 2015, Sec. 2.2, Table 1
"Bidirectional 2-layer" and footnote 2).

"These two variants can be combined as a Multilayer Bidirectional LSTM"
(Tai Sec. 2.2).  Here each direction is a 2-layer LSTM of its own
(``lstm2.py``), and the two directions share all their weights: this cell
is ``BiLSTM`` (``bilstm.py``) with ``StackedLSTM`` as the per-direction
sequence cell instead of ``ChainLSTM``.

Forward.  Every LSTM is Tai eq. 1 (``lstm.py``), row-vector orientation
(``x @ W`` is the paper's W x), columns i|o|u|f, h_0 = c_0 = 0:

    layer 1:  z1_t = x_t  W   + h1_prev U   + b    -> i, o, u, f -> c1_t, h1_t     (1)
    layer 2:  z2_t = h1_t W_2 + h2_prev U_2 + b_2  -> i, o, u, f -> c2_t, h2_t     (1)

run once forwards (t = 1..T, h_prev = h_{t-1}) and once backwards over the
same words (t = T..1, h_prev = h_{t+1}; ``forest.reverse_chains``):

    h1F_t = LSTM_1(x_t,   h1F_{t-1}),     h2F_t = LSTM_2(h1F_t, h2F_{t-1})
    h1B_t = LSTM_1(x_t,   h1B_{t+1}),     h2B_t = LSTM_2(h1B_t, h2B_{t+1})
    out_t = [ h2F_t ; h2B_t ]  for t < T,   out_T = [ h2F_T ; h2B_1 ]

Layer 2 of each direction reads that direction's own layer-1 state (d
inputs); the two directions meet only in the output, which is ``bilstm``'s
with layer 2's states: the sentence (the chain's root, out_T) is the two
final layer-2 states, each having read every word.  Footnote 2: "the
parameters of the forward and backward transition functions are shared"
(the default: both directions use W, U, b, W_2, U_2, b_2); with
``untied=True`` the backward stack has weights of its own (``*_backward``).

Why this wiring: Table 1 gives the "Bidirectional 2-layer" row the same
parameter count as the "2-layer" row (relatedness d = 108: 203,472;
sentiment d = 120: 318,720).  With d_x = 300 and d = 120, a 2-layer stack
with one bias per gate (ours) has

    4 (d_x + d + 1) d + 4 (d + d + 1) d = 4*421*120 + 4*241*120
                                        = 202,080 + 115,680 = 317,760,

and with Tai's two biases per gate (one on x W, one on h U, as Torch's
``nn.Linear`` pairs; +4d = 480 per LSTM layer, +960 in all)

    4 (d_x + d + 2) d + 4 (d + d + 2) d = 202,560 + 116,160 = 318,720,

Table 1's count for both rows.  A shared-weight bidirectional model has the
2-layer count only if layer 2 reads d inputs, i.e. each direction's own
layer 1, as in the authors' released Torch code (``stanfordnlp/treelstm``:
the backward model is a second ``num_layers = 2`` LSTM sharing every weight
of the forward one, run on the reversed input).  The other reading of
"Multilayer Bidirectional LSTM" is Graves et al. 2013's deep bidirectional
LSTM, whose layer 2 reads [h1F_t ; h1B_t] (2d inputs) in both directions;
its W_2 is (2d, 4d) and at d = 120 it has 4 (300 + 120 + 1) 120 +
4 (240 + 120 + 1) 120 = 375,360 parameters (376,320 with two biases), not
Table 1's count, so it is not the model Tai measured.

Backward (``BiLSTM.backward`` with ``StackedLSTM.backward`` per direction):

    d_out splits into eps_h2F (first d columns, every row) and eps_h2B (last
        d columns: row t to h2B_t, the root's row to h2B_1)
    forward stack, over the chains:  layer 2 back from eps_h2F -> dW_2, dU_2,
        db_2 and eps_h1F_t = delta2F_t W_2^T; layer 1 back from eps_h1F ->
        dW, dU, db and d x_t
    backward stack, over the reversed chains, the same from eps_h2B (into
        the same gradients when tied, into the ``*_backward`` ones when untied)
    d x = the two stacks' d x, summed per distinct word

Recurrent dropout (Gal 2015, one mask per sequence): ``recurrent_widths()
== [d, d, d, d]``, masks [m1F, m2F, m1B, m2B] (sentences, d): the forward
stack's layer 1 and layer 2, then the backward stack's, each on the previous
state of its own LSTM where it enters the gates (lstm.py).  Neither h1 nor
out is masked.

Parameters (d = hidden_dim, d_x = input_dim):

==========================  ==========================================  =========================
paper                       code                                        shape
==========================  ==========================================  =========================
layer 1 W, U, b of eq. 1    ``W``, ``U``, ``b``                         (d_x, 4d), (d, 4d), (4d,)
layer 2 W, U, b of eq. 1    ``W_2``, ``U_2``, ``b_2``                   (d, 4d), (d, 4d), (4d,)
backward layer 1, untied    ``W_backward``, ``U_backward``,             (d_x, 4d), (d, 4d), (4d,)
                            ``b_backward``
backward layer 2, untied    ``W_2_backward``, ``U_2_backward``,         (d, 4d), (d, 4d), (4d,)
                            ``b_2_backward``
==========================  ==========================================  =========================

(``lstm2``'s names, plus ``_backward`` for the untied backward stack; gate
sub-blocks for reports ``W_2.i``, ``W_2.i_backward``, ...)
"""

from __future__ import annotations

from .bilstm import BiLSTM
from .lstm2 import StackedLSTM


class StackedBiLSTM(BiLSTM):
    """Two 2-layer LSTMs, one per direction, weights shared unless ``untied``."""

    name = "bilstm2"
    direction_cell = StackedLSTM
