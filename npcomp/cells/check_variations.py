"""The gradient check's variations of a model: lists of keyword arguments
of ``gradcheck.suite.Setting`` (supervision modes, dropout, re-bracketed
trees, activations, sequence dropout), from which each ``Model`` entry of
``registry.py`` declares what ``python -m gradcheck`` must cover.  Like
the registry, this imports neither NumPy nor the cells.
"""

from __future__ import annotations


SUPERVISIONS = ("all", "root", "root+leaves")


def objective_checks(**cell) -> list:
    """Every supervision mode; dropout with L2 and per-node averaging; unary nodes."""
    out = [dict(cell, supervision=mode) for mode in SUPERVISIONS]
    out.append(dict(cell, dropout=0.5, l2=0.1, average="nodes"))
    if cell.get("trees", "binary") == "binary":
        out.append(dict(cell, unary_rate=0.3))
    return out


def rebracketed_checks(**cell) -> list:
    """Zhu's S-LSTM-LR / -RR: re-bracketed trees, root or root+leaf labels."""
    return [
        dict(cell, structure=structure, supervision=mode)
        for structure in ("left", "right")
        for mode in ("root", "root+leaves")
    ]


def activation_tying_checks() -> list:
    """Le & Zuidema's three non-linearities, each with tied leaves (d = d_x)
    and untied ones (d_x = 4)."""
    return [
        dict(activation=activation, untied=untied, input_dim=4 if untied else 3)
        for activation in ("tanh", "sigmoid", "softsign")
        for untied in (False, True)
    ]


def sequence_dropout_check(**options) -> dict:
    """Word-vector and recurrent dropout (one mask per sequence) with a fixed mask."""
    return dict(
        dict(trees="chain", supervision="all", dropout=0.5, embedding_dropout=0.3, recurrent_dropout=0.3), **options
    )


def sequence_checks(activations: tuple = (), dropout: bool = True, **cell) -> list:
    """A chain model: all and root labels, each activation, dropout with L2
    and per-node averaging, the ordinal head, sequence dropout."""
    out = [dict(cell, trees="chain", supervision=mode) for mode in ("all", "root")]
    out += [dict(cell, trees="chain", activation=activation) for activation in activations]
    out.append(dict(cell, trees="chain", dropout=0.5, l2=0.1, average="nodes"))
    out.append(dict(cell, trees="chain", head="ordinal"))
    if dropout:
        out.append(sequence_dropout_check())
    return out


def bidirectional_checks() -> list:
    """Both weight tyings under both supervisions, dropout, word-vector masks per direction."""
    return (
        [dict(trees="chain", untied=untied, supervision=mode) for untied in (False, True) for mode in ("all", "root")]
        + [dict(trees="chain", dropout=0.5, l2=0.1, average="nodes"), sequence_dropout_check(untied=True)]
        + [
            sequence_dropout_check(untied=untied, extra=dict(embedding_masks="per-direction"))
            for untied in (False, True)
        ]
    )
