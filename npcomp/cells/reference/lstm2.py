r"""2-layer (stacked) LSTM, time step by time step (Tai, Socher & Manning
2015, Sec. 2.2 "Multilayer LSTM"; Graves et al. 2013).

"The hidden state of an LSTM unit in layer l is used as input to the LSTM
unit in layer l+1 in the same time step": two chain LSTMs (Tai eq. 1,
``lstm.py``), h1_0 = c1_0 = h2_0 = c2_0 = 0:

    h1_t = LSTM_1(x_t,  h1_{t-1})     parameters W, U, b               (1)
    h2_t = LSTM_2(h1_t, h2_{t-1})     parameters W_2, U_2, b_2         (1)
    out_t = h2_t,  or [h1_t ; h2_t] with ``layer_outputs="all"``

Recurrent dropout: ``masks=[m1, m2]``, each (d,), on h1_{t-1} and h2_{t-1}
where they enter their own layer; layer 2 reads the unmasked h1_t.

``forward(x, params, output_gate=True, layer_outputs="top", masks=None)``
returns every key of ``lstm.forward`` per layer, suffixed 1 and 2 (``i1``,
``c1``, ``h1``, ``h2``, ...), each (T, d), and ``out`` (T, d or 2d).
"""

from __future__ import annotations

import numpy as np

from . import lstm

OPTIONS = ("output_gate", "layer_outputs")
NAMES = ("W", "U", "b", "W_2", "U_2", "b_2")  # the cell's parameter names


def forward(x: np.ndarray, params: dict, output_gate: bool = True, layer_outputs: str = "top", masks=None) -> dict:
    """Eq. 1 stacked twice over one sentence.  x: (T, d_x); params: the
    cell's ``W``, ``U``, ``b``, ``W_2``, ``U_2``, ``b_2``; masks: None or
    [m1, m2]."""
    if layer_outputs not in ("top", "all"):
        raise ValueError(f"layer_outputs must be 'top' or 'all', not {layer_outputs!r}")
    m1, m2 = (None, None) if masks is None else ([masks[0]], [masks[1]])
    layer_1 = lstm.forward(x, {name: params[name] for name in ("W", "U", "b")}, output_gate, m1)
    layer_2 = lstm.forward(layer_1["h"], {name: params[name + "_2"] for name in ("W", "U", "b")}, output_gate, m2)
    result = {f"{key}1": value for key, value in layer_1.items() if key != "out"}
    result.update({f"{key}2": value for key, value in layer_2.items() if key != "out"})
    result["out"] = (
        np.concatenate([layer_1["h"], layer_2["h"]], axis=1) if layer_outputs == "all" else layer_2["h"].copy()
    )
    return result
