"""What each erratum a cell's terms cite says, in one line, and where it is
written out in full.

A cell's ``Term`` names the errata that apply to it by id (``Z1``, ``E2``);
``npcomp explain`` prints the id in brackets and its page shows the line
below beside the badge.  Tai et al.'s and the shared readings (E1, E2, ...)
are entries of docs/EQUATIONS.md section 11, every other id an entry of the
cell's own page, docs/cells/MODULE.md, where each gives the printed
equation, what the code does and the planted-bug test backing it
(tests/study/test_explain_terms.py checks that every cited id has its line here
and its entry there).
"""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path, PurePosixPath

SHARED_PAGE = "docs/EQUATIONS.md"
SHARED = re.compile(r"[ES]\d+$")

TEXTS = {
    SHARED_PAGE: {
        "E1": "Eq. 10 prints one forget-gate bias b^(f) for the N forget gates: kept as "
        "printed (Tai's released code has one per gate).",
        "E2": "Input only at the leaves: a leaf has no children, so c = i * u, no forget gate, "
        "and W^(f) is not a parameter.",
        "E3": "A missing child (the right one of a unary node) contributes h = c = 0, which the paper does not print.",
        "E4": "L&Z's untied leaves read literally: a leaf is its d_w-wide word vector, read "
        "through W_leaf; it has no d-wide h.",
    },
    "rntn": {
        "R1": "Eq. 3 prints no bias; npcomp adds Socher et al.'s b.",
        "R2": "A unary node's missing child contributes a zero state (eq. 3 is defined for two children).",
    },
    "mvrnn": {
        "MV3": "(MV1) as restated prints no bias; npcomp adds b_W, as the RNTN's R1.",
        "MV4": "A unary node's missing right child is (0, I): u = I a, A b = 0, and B = I in (MV2).",
    },
    "rae": {
        "RE1": "A unary node's missing c_2 is 0 with n_2 = 0: neither composed nor reconstructed.",
        "RE2": "J sums alpha E_rec over every inner node and (1 - alpha) E_cE over the "
        "labelled ones, over the head's Z; E_rec's targets c_k get its gradient too.",
    },
    "drnn": {
        "DR1": "A unary node's missing child contributes 0 at every layer; a leaf's layer 1 "
        "is its word vector, its layers 2..L read only the layer below.",
    },
    "dtrnn": {
        "DT2": "pos(i, j): l_1..l_K left of the head, nearest first, r_1..r_K right; farther "
        "children share the K-th; a head without a word has them all right.",
        "DT3": "A bias b after the normalisation: Tai et al.'s 'affine-transformed' children.",
    },
    "sdtrnn": {
        "SD1": "A tree without relation labels (a bare parents file), or a child without a "
        "word, reads its children through W_dep, the generic relation.",
    },
    "lstm_rnn": {
        "L1": "(L6)'s W_co c reads the new cell c_p (c is not defined in Sec. 3).",
        "L2": "(L5)'s W_c1 x (.) i_1 is read (W_c1 x) * i_1: each input gate scales its own child's term inside g.",
        "L4": "'Children swapped': (L2) and (L4) are (L1) and (L3) with x and y exchanged, one "
        "weight set for both gates.",
        "L5": "g is applied twice, to the candidate and to c_p, as printed.",
        "L7": "A unary node's only child is x; the missing y has y = c_y = 0.",
    },
    "treelstm_childsum": {
        "CS2": "A node without a word has x_j = 0: its W terms vanish and b remains.",
        "CS3": "At a leaf C(j) is empty: h~_j = 0 and c_j = i_j * u_j.",
    },
    "slstm": {
        "Z1": "Eq. (14) prints eps_{t+1}^h in a node's own term; it is eps_t^h, as in (13).",
        "Z2": "The error reaching the children's h (through all five gates) is not printed, nor is delta_x.",
        "Z3": "g'(c_t) is tanh' at c_t, 1 - tanh(c_t)^2, not 1 - c_t^2.",
        "Z4": "Eq. (2) prints the left forget gate's subscripts as f_i; read as f_l.",
    },
    "lstm_global_attention": {
        "G1": "Eq. 6's softmax runs over the sentence's time steps (its axis is not printed).",
        "G2": "W_a is a row: one score per step.",
        "G3": "Eq. 7 prints no bias; npcomp adds b_c.",
    },
    "lstm_recurrent_attention": {
        "A1": "Eq. 9's softmax runs over the prefix j = 1..t (its axis is not printed).",
        "A2": "One score per step and no bias (it would cancel in the softmax).",
        "A3": "W_r reads h~_t only, as printed.",
        "A4": "The transfer layer is d wide, forced by eq. 10's r_t * m~_t.",
        "A5": "s_0 = k_0 = 0, not printed: at t = 1 the forget gate has nothing to forget.",
        "A6": "Eq. 12's highway as printed: H affine (no non-linearity), T = sigma, C = 1 - T; its input is s_T.",
        "A7": "The transfer layer's recurrent dropout masks s_{t-1} where it enters U_s.",
    },
    "rnn": {
        "I1": "'+' in Irsoy's tables is the rectifier max(0, z).",
        "I2": "h_0 = 0: eq. 3 states no initial state.",
    },
    "mrnn": {
        "M6": "Recurrent dropout masks h_{t-1} once, so the tensor and V both read the masked state.",
    },
    "matrix_space": {
        "MS2": "u is the model's softmax head; h_0 is learned.",
        "MS3": "A chain's node t holds the prefix state h_0 M_{w_1} .. M_{w_t}.",
    },
}


def page(module: str, erratum: str) -> str:
    """Where erratum ``erratum`` of the cell in npcomp/cells/MODULE.py is
    written out: docs/EQUATIONS.md for the shared ids, else its own page."""
    return SHARED_PAGE if SHARED.match(erratum) else f"docs/cells/{module}.md"


def installed_copy(page: str) -> str:
    """Where ``page`` (docs/...) is installed with the package, relative to
    the directory that holds the package (``npcomp/study/errata_pages/...``:
    the pages explain cites are package data, links into docs/ in a
    checkout, copies in a wheel).  Relative, so that no document or page
    explain writes carries the path of the machine that wrote it;
    ``installed_file`` finds it in this installation."""
    within = PurePosixPath(page).relative_to("docs")
    return str(PurePosixPath("npcomp", "study", "errata_pages", *within.parts))


def installed_file(where: str) -> Path:
    """The file an erratum's ``where`` (``installed_copy``) names here."""
    return Path(str(resources.files("npcomp"))).parent / where


def text(module: str, erratum: str) -> str:
    """The erratum's line ("" for an id without one: a test keeps there none)."""
    return TEXTS.get(page(module, erratum) if SHARED.match(erratum) else module, {}).get(erratum, "")
