"""Default hyperparameters: each model's paper setting for each task.

``npcomp train --model M --task T`` with no further option runs the setting
of M's paper; ``npcomp train --model M --help-defaults`` prints it.  The
synthetic task is ours: small sizes so a fresh install trains in seconds.
"""
from __future__ import annotations

COMMON = dict(
    optimizer="adagrad", supervision="all", structure="gold", average="sentences",
    activation=None, untied=None, oov="uniform", oov_scale=0.05, dtype="float32",
    fixed_embeddings=False, seed=1, eval_batch_size=512,
)

PAPER = {
    # Tai, Socher & Manning 2015, Sec. 5.3 (and their released code's sentiment settings)
    "treelstm-nary": dict(source="Tai et al. 2015, Sec. 5.3", dim=150, embedding_dim=300,
                          lr=0.05, emb_lr=0.1, batch_size=25, l2=1e-4, dropout=0.5, epochs=10),
    # Le & Zuidema 2015, Sec. 5.2: d = 50, d_w = 100, lr 0.05, lambda 1e-3, minibatch 5, 20 epochs
    "recnn": dict(source="Le & Zuidema 2015, Sec. 5.2", dim=50, embedding_dim=100, activation="tanh", untied=True,
                  lr=0.05, emb_lr=0.05, batch_size=5, l2=1e-3, dropout=0.0, epochs=20),
    # the bag-of-words baseline (Tai et al. Table 3 "Mean vectors"), trained like the Tree-LSTM
    "mean-vectors": dict(source="Tai et al. 2015 (mean vectors baseline)", dim=300,
                         embedding_dim=300, lr=0.05, emb_lr=0.1, batch_size=25, l2=1e-4,
                         dropout=0.0, epochs=10),
}

SYNTHETIC = dict(dim=50, embedding_dim=50, epochs=10, batch_size=25, dropout=0.0, l2=1e-4)


def defaults_for(model: str, task: str) -> dict:
    if model not in PAPER:
        raise ValueError(f"model must be one of {sorted(PAPER)}, not {model!r}")
    config = dict(COMMON)
    config.update(PAPER[model])
    if task == "synthetic":
        config.update(SYNTHETIC)
        config["source"] = PAPER[model]["source"] + ", sizes reduced for the synthetic task"
        if config["untied"] is not None:
            config["untied"] = False
        if model == "mean-vectors":
            config["dim"] = config["embedding_dim"]
    return config
