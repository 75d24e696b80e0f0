"""The papers' own comparisons between rows of their tables (``Claim``),
which each report tests on its runs (``differences.claim_records``): the
claim as the paper makes it, where it makes it, and the two rows, the
first claimed the better.  Where a paper states an ordering only through
its table's figures, the claim names the table.  Nothing here imports NumPy.
"""

from __future__ import annotations

from .paper_rows import Claim


def _both(name: str, claim: str, source: str, first: str, second: str) -> tuple:
    """A claim the paper makes on both the fine-grained and the binary task."""
    return tuple(
        Claim(f"{name}-{task}", f"{claim} ({task})", source, f"{first}-{task}", f"{second}-{task}")
        for task in ("fine", "binary")
    )


CLAIMS = {
    "tai-sst": (
        *_both(
            "constituency-above-lstm",
            "The Constituency Tree-LSTM outperforms the LSTM",
            "Abstract, Sec. 9; Table 2",
            "constituency-pretrained",
            "lstm",
        ),
        *_both(
            "constituency-above-bilstm",
            "The Constituency Tree-LSTM outperforms the bidirectional LSTM",
            "Abstract, Sec. 9; Table 2",
            "constituency-pretrained",
            "bilstm",
        ),
        *_both(
            "constituency-above-dependency",
            "The Constituency Tree-LSTM outperforms the Dependency Tree-LSTM",
            "Sec. 6.1; Table 2",
            "constituency-pretrained",
            "dependency",
        ),
        *(
            Claim(
                f"constituency-above-{name}-fine",
                "The Constituency Tree-LSTM outperforms "
                f"existing systems on the fine-grained subtask: the {label} (fine)",
                "Sec. 6.1",
                "constituency-pretrained-fine",
                f"{name}-fine",
            )
            for name, label in (("rae", "RAE"), ("mv-rnn", "MV-RNN"), ("rntn", "RNTN"), ("drnn", "DRNN"))
        ),
        *_both(
            "tuned-above-fixed",
            "Tuned GloVe vectors above fixed ones",
            "Table 2",
            "constituency-pretrained",
            "constituency-fixed",
        ),
        *_both("bilstm-above-lstm", "The bidirectional LSTM above the LSTM", "Table 2", "bilstm", "lstm"),
    ),
    "tai-sick": tuple(
        Claim(name, claim, source, first, second)
        for name, claim, source, first, second in (
            (
                "dependency-above-constituency",
                "The Dependency Tree-LSTM above the Constituency Tree-LSTM",
                "Table 3",
                "dependency",
                "constituency",
            ),
            (
                "dependency-above-lstm",
                "The Dependency Tree-LSTM outperforms the LSTM",
                "Abstract, Sec. 9; Table 3",
                "dependency",
                "lstm",
            ),
            (
                "dependency-above-bilstm",
                "The Dependency Tree-LSTM outperforms the bidirectional LSTM",
                "Abstract, Sec. 9; Table 3",
                "dependency",
                "bilstm",
            ),
            ("constituency-above-lstm", "The Constituency Tree-LSTM above the LSTM", "Table 3", "constituency", "lstm"),
            ("bilstm-above-lstm", "The bidirectional LSTM above the LSTM", "Table 3", "bilstm", "lstm"),
            (
                "dependency-above-mean-vectors",
                "The Dependency Tree-LSTM above the mean of the word vectors",
                "Table 3",
                "dependency",
                "mean-vectors",
            ),
            *(
                (f"{tree}-above-{baseline}", f"The {label} Tree-LSTM above the {name}", "Table 3", tree, baseline)
                for tree, label in (("dependency", "Dependency"), ("constituency", "Constituency"))
                for baseline, name in (("dt-rnn", "DT-RNN"), ("sdt-rnn", "SDT-RNN"))
            ),
        )
    ),
    "le-zuidema": (
        *_both("lstm-rnn-above-rnn", "The LSTM-RNN outperforms the RNN", "Abstract, Sec. 5.2", "lstm-rnn", "rnn"),
        *_both(
            "drnn-above-lstm-rnn",
            "The LSTM-RNN (GloVe-100D) clearly performed worse than the DRNN",
            "Sec. 5.3; Table 1",
            "drnn",
            "lstm-rnn",
        ),
    ),
    "zhu": tuple(
        Claim(name, claim, source, first, second)
        for name, claim, source, first, second in (
            (
                "slstm-above-rntn",
                "The S-LSTM outperforms the RNTN (every phrase labelled)",
                "Sec. 5; Table 1",
                "all-phrases",
                "rntn",
            ),
            ("slstm-above-rvnn", "The S-LSTM above the RvNN (every phrase labelled)", "Table 1", "all-phrases", "rvnn"),
            (
                "slstm-above-rntn-root",
                "The S-LSTM outperforms the RNTN by a large margin with root labels only",
                "Sec. 5; Table 3",
                "root",
                "rntn-root",
            ),
            (
                "slstm-above-rntn-root-leaves",
                "The S-LSTM outperforms the RNTN by a large margin with root and leaf labels",
                "Sec. 5; Table 3",
                "root-leaves",
                "rntn-root-leaves",
            ),
            (
                "structure-above-left",
                "The given structure helps: the S-LSTM above the S-LSTM-LR with root labels only",
                "Sec. 5; Table 4",
                "root",
                "root-lr",
            ),
            (
                "structure-above-right",
                "The given structure helps: the S-LSTM above the S-LSTM-RR with root labels only",
                "Sec. 5; Table 4",
                "root",
                "root-rr",
            ),
            (
                "structure-above-left-leaves",
                "The given structure helps: the S-LSTM above the S-LSTM-LR with root and leaf labels",
                "Sec. 5; Table 4",
                "root-leaves",
                "root-leaves-lr",
            ),
            (
                "structure-above-right-leaves",
                "The given structure helps: the S-LSTM above the S-LSTM-RR with root and leaf labels",
                "Sec. 5; Table 4",
                "root-leaves",
                "root-leaves-rr",
            ),
        )
    ),
    "nayebi": tuple(
        Claim(name, claim, source, first, second)
        for name, claim, source, first, second in (
            (
                "recurrent-attention-above-lstm",
                "The LSTM with recurrent attention, the best model, above the LSTM",
                "Sec. 4.2; Table 1",
                "recurrent-attention",
                "lstm",
            ),
            (
                "recurrent-attention-above-bilstm",
                "The LSTM with recurrent attention above the bidirectional LSTM",
                "Sec. 4.2; Table 1",
                "recurrent-attention",
                "bilstm",
            ),
            (
                "recurrent-attention-above-global",
                "Recurrent attention above global attention",
                "Sec. 4.2; Table 1",
                "recurrent-attention",
                "global-attention",
            ),
            ("bilstm-above-lstm", "The bidirectional LSTM above the LSTM", "Table 1", "bilstm", "lstm"),
        )
    ),
    "irsoy": tuple(
        Claim(name, claim, source, first, second)
        for name, claim, source, first, second in (
            ("mrnn-above-rnn", "The mRNN improves over the RNN", "Sec. 5; Table 2", "mrnn", "rnn"),
            (
                "mrnn-above-recursive",
                "The mRNN performs better than the recursive net",
                "Sec. 5; Table 2",
                "mrnn",
                "recursive",
            ),
            (
                "mv-recursive-above-mrnn",
                "The mRNN performs worse than the matrix-vector recursive net",
                "Sec. 5; Table 2",
                "mv-recursive",
                "mrnn",
            ),
        )
    ),
}
