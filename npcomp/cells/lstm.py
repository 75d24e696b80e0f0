r"""Chain LSTM (Tai, Socher & Manning 2015, Sec. 2.1, eq. 1; Nayebi & Blundell eq. 4).

A sentence is a chain in the forest (node t reads word t and is the only
child of node t+1), so a minibatch of sequences advances one time step per
level.  Row-vector orientation (``x @ W`` is the paper's W x):

    i_t = sigma( x_t W^(i) + h_{t-1} U^(i) + b^(i) )
    f_t = sigma( x_t W^(f) + h_{t-1} U^(f) + b^(f) )
    o_t = sigma( x_t W^(o) + h_{t-1} U^(o) + b^(o) )                    (1)
    u_t = tanh ( x_t W^(u) + h_{t-1} U^(u) + b^(u) )
    c_t = i_t * u_t + f_t * c_{t-1}
    h_t = o_t * tanh(c_t)

with h_0 = c_0 = 0, and b^(f) starting at ``forget_bias`` plus the uniform
draw (``--forget-bias``: 0 by default, 1 in Nayebi's settings as Keras).
These are exactly the N-ary Tree-LSTM's eqs. 9-14 with N = 1 and a word at
every node (Tai: "the standard LSTM can then be considered a special case
of the Tree-LSTM where each internal node has exactly one child"), so this
cell *is* ``TreeLSTMNary(arity=1, inner_inputs=True)``: the forward, the
backward and their kernels are that module's, and the chain test
(``tests/cells/test_cell_treelstm_childsum.py::test_chain_equals_chain_lstm``)
checks both Tree-LSTMs against eq. 1 written out in NumPy.  The backward,
in the symbols of treelstm_nary.py with one child:

    delta_o = eps_h_t * tanh(c_t) * o(1-o);   eps_c_t += eps_h_t * o (1 - tanh(c_t)^2)
    delta_i = eps_c_t * u i(1-i);  delta_u = eps_c_t * i (1-u^2);  delta_f = eps_c_t * c_{t-1} f(1-f)
    eps_c_{t-1} = eps_c_t * f_t;   eps_h_{t-1} += delta_t U^T;   dx_t = delta_t W^T

Recurrent dropout (Gal 2015: one mask per sequence, the same at every time
step; Nayebi & Blundell Sec. 4.1: "a Dropout level of 0.3 between each
recurrent connection").  ``recurrent_widths() == [d]``; with ``recurrent_masks=[m]``,
m (sentences, d), sentence s reads h_{t-1} through its own mask m_s, fixed
over its time steps:

    h~_{t-1} = h_{t-1} * m_s;   eq. 1 with h~_{t-1} in place of h_{t-1}

while h_t itself (what the classifier or a next layer reads) is not masked.
Backward: eps_h_{t-1} += (delta_t U^T) * m_s and dU = sum_t h~_{t-1}^T delta_t
(treelstm_nary.py, which applies the mask only when one is given).

=========================  ===================  ==========
paper                      code                 shape
=========================  ===================  ==========
W^(i), W^(o), W^(u), W^(f)  ``W`` columns i|o|u|f  (d_x, 4d)
U^(i), U^(o), U^(u), U^(f)  ``U`` columns i|o|u|f  (d, 4d)
b^(i), b^(o), b^(u), b^(f)  ``b``                 (4d,)
=========================  ===================  ==========
"""

from __future__ import annotations

from .interface import EVERY_NODE, LAST_WORD
from .treelstm_nary import TreeLSTMNary


class ChainLSTM(TreeLSTMNary):
    """Tai eq. 1 over chains: the N-ary Tree-LSTM with one child and a word at
    every node."""

    name = "lstm"
    EQUATIONS = dict.fromkeys(("i", "f", "o", "u", "c", "h"), "1")
    # a step's parent is the next step
    NO_PARENT = LAST_WORD

    def __init__(self, input_dim: int, hidden_dim: int, output_gate: bool = True, forget_bias: float = 0.0):
        super().__init__(
            input_dim, hidden_dim, arity=1, inner_inputs=True, output_gate=output_gate, forget_bias=forget_bias
        )
        self.words = EVERY_NODE

    def recurrent_widths(self) -> list:
        """One recurrent connection, h_{t-1} -> step t, d wide."""
        return [self.hidden_dim]
