"""The study layer: a cell's forward and backward laid open.

``npcomp explain`` and its page (``explain.py``, ``explain_page.py``, the
page's files in ``page_files/``), finite differences per parameter and per
node state (and each node's backward on its own: ``local_checks.py``),
the exercises' grader (``grading.py``; the S-LSTM's and LSTM-RNN's nodes in
``peephole_nodes.py``), and the errata the cells cite (``errata.py``, the
pages in ``errata_pages/``).
"""

# the package's public names, each loaded from its module when first named
_HOMES = {
    "check_states": "state_checks",
    "first_disagreement": "state_checks",
    "check_gradients": "finite_differences",
    "render_page": "explain_page",
    "write_page": "explain_page",
    "neighbours": "relatedness",
    "score_pairs": "relatedness",
    "check_local": "local_checks",
    "grade": "grading",
    **{
        name: "grading"
        for name in (
            "NARY_NODE",
            "NARY_ROUTE",
            "NARY_WEIGHTS",
            "RNTN_NODE",
            "RNTN_WEIGHTS",
            "CHILDSUM_NODE",
            "CHILDSUM_ROUTE",
            "CHILDSUM_WEIGHTS",
        )
    },
    **{
        name: "peephole_nodes"
        for name in (
            "SLSTM_NODE",
            "SLSTM_ROUTE",
            "SLSTM_WEIGHTS",
            "LSTM_RNN_NODE",
            "LSTM_RNN_ROUTE",
            "LSTM_RNN_WEIGHTS",
        )
    },
}
__all__ = [
    "check_states",
    "first_disagreement",
    "check_local",
    "check_gradients",
    "render_page",
    "write_page",
    "neighbours",
    "score_pairs",
    "grade",
    "NARY_NODE",
    "NARY_ROUTE",
    "NARY_WEIGHTS",
    "RNTN_NODE",
    "RNTN_WEIGHTS",
    "CHILDSUM_NODE",
    "CHILDSUM_ROUTE",
    "CHILDSUM_WEIGHTS",
    "SLSTM_NODE",
    "SLSTM_ROUTE",
    "SLSTM_WEIGHTS",
    "LSTM_RNN_NODE",
    "LSTM_RNN_ROUTE",
    "LSTM_RNN_WEIGHTS",
]


def __getattr__(name: str):
    if name in _HOMES:
        from importlib import import_module

        home = _HOMES[name]
        module = import_module(f"{__name__}.{home or name}")
        return module if home is None else getattr(module, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list:
    return sorted({*globals(), *__all__})
