r"""2-layer bidirectional LSTM, time step by time step (Tai, Socher & Manning
2015, Sec. 2.2, Table 1 "Bidirectional 2-layer" and footnote 2).

Each direction is a 2-layer LSTM of its own (``lstm2.py``, Tai eq. 1 twice),
run over the words forwards and backwards; layer 2 of a direction reads that
direction's layer 1:

    h1F_t = LSTM_1(x_t, h1F_{t-1}),   h2F_t = LSTM_2(h1F_t, h2F_{t-1})     (1)
    h1B_t = LSTM_1(x_t, h1B_{t+1}),   h2B_t = LSTM_2(h1B_t, h2B_{t+1})     (1)
    out_t = [ h2F_t ; h2B_t ]  (t < T),   out_T = [ h2F_T ; h2B_1 ]

(with ``layer_outputs="all"`` each direction's part is [h1_t ; h2_t]).  The
directions share every weight (footnote 2) unless ``untied=True`` (the
backward stack's ``*_backward``).  Recurrent dropout: ``masks=[m1F, m2F,
m1B, m2B]``, each (d,).

``forward(x, params, untied=False, output_gate=True, layer_outputs="top",
masks=None)`` returns every key of ``lstm2.forward`` per direction, suffixed
``^F`` and ``^B`` (``h1^F``, ``c2^B``, ...), each (T, d), and ``out``.
"""

from __future__ import annotations

import numpy as np

from . import lstm2
from .bilstm import bidirectional

OPTIONS = ("untied", "output_gate", "layer_outputs")


def forward(
    x: np.ndarray, params: dict, untied: bool = False, output_gate: bool = True, layer_outputs: str = "top", masks=None
) -> dict:
    """Two 2-layer stacks over one sentence, forwards and backwards.  x: (T, d_x)
    or (T, 2 d_x) a block per direction; params: the cell's ``W`` .. ``b_2``
    (and ``*_backward`` untied); masks: None or [m1F, m2F, m1B, m2B]."""
    return bidirectional(
        np.asarray(x),
        params,
        untied,
        lstm2.forward,
        lstm2.NAMES,
        2,
        masks,
        output_gate=output_gate,
        layer_outputs=layer_outputs,
    )
