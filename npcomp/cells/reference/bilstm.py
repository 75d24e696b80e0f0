r"""Bidirectional LSTM, time step by time step (Tai, Socher & Manning 2015,
Sec. 2.2 and footnote 2; Graves et al. 2013).

Two chain LSTMs (Tai eq. 1, ``lstm.py``) read the sentence x_1 .. x_T, one
forwards and one backwards:

    h^F_t = LSTM_F(x_t, h^F_{t-1}),   h^F_0 = 0                   (1)
    h^B_t = LSTM_B(x_t, h^B_{t+1}),   h^B_{T+1} = 0               (1)

and the cell outputs their concatenation; the sentence (the chain's root,
the last word) is the two final states, each having read every word:

    out_t = [ h^F_t ; h^B_t ]  (t < T),    out_T = [ h^F_T ; h^B_1 ]

Footnote 2: both directions share W, U, b (the default); ``untied=True``
gives the backward LSTM its own ``W_backward``, ``U_backward``,
``b_backward``.  Recurrent dropout: ``masks=[m^F, m^B]``, one (d,) row per
direction (two connections, two masks, even with tied weights).  With
``embedding_masks="per-direction"`` the cell reads x (T, 2 d_x): the forward
LSTM the first d_x columns, the backward one the last.

``forward(x, params, untied=False, output_gate=True, masks=None)`` returns
every key of ``lstm.forward`` per direction, suffixed ``^F`` and ``^B``
(``i^F``, ``c^B``, ``h^B``, ...; row t of a ``^B`` quantity is step t of the
backward reading, which has read words T..t), each (T, d), and ``out``
(T, 2d) as above.
"""

from __future__ import annotations

import numpy as np

from . import lstm

BACKWARD = "_backward"
OPTIONS = ("untied", "output_gate")


def direction_parameters(params: dict, names, untied: bool) -> tuple:
    """The forward and the backward direction's parameters under the
    direction cell's own ``names`` (untied: the backward's ``*_backward``)."""
    forward = {name: params[name] for name in names}
    backward = {name: params[name + (BACKWARD if untied else "")] for name in names}
    return forward, backward


def bidirectional(
    x: np.ndarray, params: dict, untied: bool, direction, names, n_masks: int, masks=None, **options
) -> dict:
    """``direction(x, params, masks=..., **options)`` run forwards and
    backwards over the sentence, its keys suffixed ^F and ^B, and ``out``.
    ``names``: the direction cell's parameter names; ``n_masks``: its
    recurrent connections."""
    forward_params, backward_params = direction_parameters(params, names, untied)
    d_x = np.asarray(params["W"]).shape[0]
    x_F, x_B = (x[:, :d_x], x[:, d_x:]) if x.shape[1] == 2 * d_x else (x, x)
    masks_F, masks_B = (None, None) if masks is None else (list(masks[:n_masks]), list(masks[n_masks:]))
    F = direction(x_F, forward_params, masks=masks_F, **options)  # reads x_1 .. x_T
    B = direction(x_B[::-1], backward_params, masks=masks_B, **options)  # reads x_T .. x_1
    result = {f"{key}^F": value for key, value in F.items() if key != "out"}
    result.update({f"{key}^B": value[::-1].copy() for key, value in B.items() if key != "out"})
    out_B = B["out"][::-1]  # row t: the backward reading at word t
    out = np.concatenate([F["out"], out_B], axis=1)
    out[-1, F["out"].shape[1] :] = out_B[0]  # the sentence: h^B after every word
    result["out"] = out
    return result


def forward(x: np.ndarray, params: dict, untied: bool = False, output_gate: bool = True, masks=None) -> dict:
    """Eq. 1 both ways over one sentence.  x: (T, d_x), or (T, 2 d_x) a block
    per direction; params: the cell's ``W``, ``U``, ``b`` (and ``*_backward``
    untied); masks: None or [m^F, m^B], each (d,)."""
    return bidirectional(x, params, untied, lstm.forward, ("W", "U", "b"), 1, masks, output_gate=output_gate)
