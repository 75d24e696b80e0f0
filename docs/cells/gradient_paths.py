"""Draw the figures of the gradient paths through one parent and its
children, each arrow labelled with the forward equation it reverses:
docs/cells/slstm_gradient_paths.png (Zhu et al.'s S-LSTM: h, c and the
peepholes) and docs/cells/treelstm_nary_gradient_paths.png (Tai et al.'s
N-ary Tree-LSTM, N = 2: h and c, no peepholes).

    python docs/cells/gradient_paths.py [--out DIR]

Needs matplotlib (the plot extra).  The figures are drawn from the tables
below, so a path or an equation number is changed here, once.
"""

from __future__ import annotations

import argparse
from pathlib import Path

# the three kinds of path, as the legend names them
H_PATH, C_PATH, PEEPHOLE = "#2166ac", "#b2182b", "#1b7837"
GREY = "#666666"

# where each quantity sits (x, y) and how it is written
SLSTM_BOXES = {
    "head": (0.9, 9.2, "the head's dJ/dh_p (8)\n+ p's parent's shares"),
    "eps_h_p": (4.2, 9.2, r"$\epsilon^h_p$"),
    "delta_o": (1.6, 6.9, r"$\delta^o_p$"),
    "eps_c_p": (9.8, 6.9, r"$\epsilon^c_p$"),
    "deltas": (5.6, 5.0, r"$\delta^i_p,\ \delta^{fl}_p,\ \delta^{fr}_p,\ \delta^x_p$"),
    "eps_h_L": (0.9, 0.8, r"$\epsilon^h_L$ (left child)"),
    "eps_c_L": (4.4, 0.8, r"$\epsilon^c_L$"),
    "eps_h_R": (8.0, 0.8, r"$\epsilon^h_R$ (right child)"),
    "eps_c_R": (11.9, 0.8, r"$\epsilon^c_R$"),
}
# (from, to, colour, label, curvature, where along the arrow its label sits)
SLSTM_ARROWS = [
    ("head", "eps_h_p", GREY, "", 0.0, 0.5),
    ("eps_h_p", "delta_o", H_PATH, "tanh(c) o(1-o)\nreverses (7): (9)", 0.0, 0.45),
    ("eps_h_p", "eps_c_p", C_PATH, "o g'(c): reverses (7)\n" + r"Z1: own $\epsilon^h_t$; Z3: g' = tanh'", 0.0, 0.45),
    ("delta_o", "eps_c_p", PEEPHOLE, r"$W_{co}^T$: reverses (6)", -0.12, 0.62),
    ("delta_o", "deltas", H_PATH, "", 0.0, 0.5),
    ("eps_c_p", "deltas", C_PATH, "reverse (5) and (1)-(4):\n(10), (11), (12); Z2", 0.0, 0.5),
    ("eps_c_p", "eps_c_L", C_PATH, "$f^L_p$: reverses (5)\nas (13)", 0.0, 0.3),
    ("eps_c_p", "eps_c_R", C_PATH, "$f^R_p$: reverses (5)\nas (14)", 0.0, 0.45),
    ("deltas", "eps_c_L", PEEPHOLE, r"$W_{ci},W_{cfl},W_{cfr}^{L}$" + "\nreverse (1)-(3):\n(13)", 0.0, 0.55),
    ("deltas", "eps_c_R", PEEPHOLE, r"$W_{ci},W_{cfl},W_{cfr}^{R}$" + "\nreverse (1)-(3): (14)", 0.0, 0.7),
    (
        "deltas",
        "eps_h_L",
        H_PATH,
        r"$W_{hi}..W_{ho}^{L}$ (and $\delta^o_p$)" + "\nreverse (1)-(4), (6);\nnot printed: Z2",
        0.0,
        0.55,
    ),
    (
        "deltas",
        "eps_h_R",
        H_PATH,
        r"$W_{hi}..W_{ho}^{R}$ (and $\delta^o_p$)" + "\nreverse (1)-(4), (6);\nnot printed: Z2",
        0.0,
        0.62,
    ),
]

TREELSTM_BOXES = {
    "head": (0.9, 9.2, "the head's dJ/dh_p\n+ p's parent's shares"),
    "eps_h_p": (4.2, 9.2, r"$\epsilon^h_p$"),
    "delta_o": (1.6, 6.9, r"$\delta^o_p$"),
    "eps_c_p": (9.8, 6.9, r"$\epsilon^c_p$"),
    "deltas": (5.6, 5.0, r"$\delta^i_p,\ \delta^u_p,\ \delta^{f_l}_p,\ \delta^{f_r}_p$"),
    "eps_h_L": (0.9, 0.8, r"$\epsilon^h_l$ (left child)"),
    "eps_c_L": (4.4, 0.8, r"$\epsilon^c_l$"),
    "eps_h_R": (8.0, 0.8, r"$\epsilon^h_r$ (right child)"),
    "eps_c_R": (11.9, 0.8, r"$\epsilon^c_r$"),
}
TREELSTM_ARROWS = [
    ("head", "eps_h_p", GREY, "", 0.0, 0.5),
    ("eps_h_p", "delta_o", H_PATH, "tanh(c) o(1-o)\nreverses (14), (11)", 0.0, 0.45),
    ("eps_h_p", "eps_c_p", C_PATH, "o (1 - tanh(c)^2)\nreverses (14)", 0.0, 0.45),
    ("delta_o", "deltas", H_PATH, "", 0.0, 0.5),
    ("eps_c_p", "deltas", C_PATH, "reverse (13) and\n(9), (12), (10)", 0.0, 0.5),
    ("eps_c_p", "eps_c_L", C_PATH, "$f_{pl}$: reverses (13)", 0.0, 0.3),
    ("eps_c_p", "eps_c_R", C_PATH, "$f_{pr}$: reverses (13)\n(E3: none if missing)", 0.0, 0.45),
    (
        "deltas",
        "eps_h_L",
        H_PATH,
        r"$U_1^{(g)}, U_{k1}^{(f)}$ (and $\delta^o_p$)"
        "\nreverse (9)-(12)",
        0.0,
        0.55,
    ),
    (
        "deltas",
        "eps_h_R",
        H_PATH,
        r"$U_2^{(g)}, U_{k2}^{(f)}$ (and $\delta^o_p$)"
        "\nreverse (9)-(12)",
        0.0,
        0.62,
    ),
]

FIGURES = {
    "slstm_gradient_paths.png": (
        "S-LSTM (Zhu et al.): the error at a parent p reaches its children",
        SLSTM_BOXES,
        SLSTM_ARROWS,
        True,
        "a leaf has no memory block: its c = 0 is a constant, so its eps_c reaches nothing",
    ),
    "treelstm_nary_gradient_paths.png": (
        "N-ary Tree-LSTM (Tai et al., N = 2): the error at a parent p reaches its children",
        TREELSTM_BOXES,
        TREELSTM_ARROWS,
        False,
        "no peepholes: a child's c reaches its parent through (13) alone",
    ),
}


def draw(path: Path, title: str, boxes: dict, arrows: list, peepholes: bool, note: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    figure, axes = plt.subplots(figsize=(12, 7.6), dpi=110)
    axes.set_xlim(-0.6, 13.0)
    axes.set_ylim(-0.2, 10.2)
    axes.axis("off")
    axes.set_title(title, fontsize=12, loc="left")
    handles = {
        key: axes.text(
            x,
            y,
            text,
            ha="center",
            va="center",
            fontsize=12,
            zorder=3,
            bbox=dict(boxstyle="round,pad=0.45", facecolor="#f7f7f7", edgecolor="#444444"),
        )
        for key, (x, y, text) in boxes.items()
    }
    figure.canvas.draw()  # the boxes' outlines, which the arrows stop at
    for start, end, colour, label, bend, where in arrows:
        axes.annotate(
            "",
            xy=boxes[end][:2],
            xytext=boxes[start][:2],
            zorder=2,
            arrowprops=dict(
                arrowstyle="-|>",
                color=colour,
                lw=1.8,
                shrinkA=2,
                shrinkB=2,
                patchA=handles[start].get_bbox_patch(),
                patchB=handles[end].get_bbox_patch(),
                connectionstyle=f"arc3,rad={bend}",
            ),
        )
        if label:
            (x0, y0), (x1, y1) = boxes[start][:2], boxes[end][:2]
            axes.text(
                x0 + (x1 - x0) * where,
                y0 + (y1 - y0) * where,
                label,
                fontsize=8.5,
                color=colour,
                ha="center",
                va="center",
                zorder=4,
                bbox=dict(boxstyle="round,pad=0.2", facecolor="white", edgecolor="none", alpha=0.9),
            )
    axes.plot([-0.5, 12.9], [2.6, 2.6], color="#bbbbbb", lw=0.8, ls="--", zorder=1)
    axes.text(12.9, 2.75, "the parent p above, its two children below", fontsize=8, color=GREY, ha="right")
    legend = [
        Line2D([], [], color=H_PATH, lw=2, label="through h (the hidden states)"),
        Line2D([], [], color=C_PATH, lw=2, label="through c (the memory cells)"),
    ]
    if peepholes:
        legend.append(Line2D([], [], color=PEEPHOLE, lw=2, label="through the peepholes (gates reading c)"))
    axes.legend(handles=legend, loc="upper right", fontsize=9, frameon=False)
    axes.text(-0.5, -0.1, note, fontsize=9, color=GREY, ha="left", va="bottom")
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out",
        type=Path,
        default=Path(__file__).resolve().parent,
        help="the folder the PNGs go to (default: docs/cells)",
    )
    args = parser.parse_args(argv)
    for name, (title, boxes, arrows, peepholes, note) in FIGURES.items():
        draw(args.out / name, title, boxes, arrows, peepholes, note)
        print(args.out / name)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
