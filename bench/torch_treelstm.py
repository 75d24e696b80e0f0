"""The same Constituency Tree-LSTM, level-batched in PyTorch: the baseline
``bench_treelstm.py`` measures npcomp against, in the same run.

Written the way a careful PyTorch user batches trees (the issue's reference
point: "a well-written level-batched PyTorch implementation"): npcomp's
forest supplies the level schedule (children before parents, each level a
contiguous block of nodes), the leaves are computed once per distinct word,
each level is one matrix product for all its gate pre-activations, autograd
does the backward, and ``torch.optim.Adagrad`` updates the weights with
lambda = weight decay and the embedding table with sparse gradients at its
own rate.  Parameters use npcomp's layout (``W`` (d_x, 3d) columns i|o|u,
``U`` (2d, 5d) columns i|o|u|f_1|f_2, ``b`` (4d,) with b^(f) shared), so
``load_npcomp`` copies an npcomp model's weights and ``loss`` can be checked
against npcomp's on the same forest.

Needs ``pip install torch`` (not an npcomp dependency).
"""
from __future__ import annotations

import numpy as np
import torch


class TorchTreeLSTM(torch.nn.Module):
    def __init__(self, vocab_size: int, input_dim: int, hidden_dim: int, n_classes: int):
        super().__init__()
        d = hidden_dim
        self.hidden_dim = d
        self.embedding = torch.nn.Embedding(vocab_size, input_dim, sparse=True)
        self.W = torch.nn.Parameter(torch.empty(input_dim, 3 * d))
        self.U = torch.nn.Parameter(torch.empty(2 * d, 5 * d))
        self.b = torch.nn.Parameter(torch.empty(4 * d))
        self.classifier = torch.nn.Linear(d, n_classes)

    def load_npcomp(self, params) -> None:
        """Copies npcomp's parameters (``npcomp.params.Parameters``)."""
        with torch.no_grad():
            for target, name in ((self.embedding.weight, "embedding"), (self.W, "cell.W"),
                                 (self.U, "cell.U"), (self.b, "cell.b")):
                target.copy_(torch.from_numpy(np.ascontiguousarray(params[name])))
            self.classifier.weight.copy_(torch.from_numpy(params["softmax.W"].T.copy()))
            self.classifier.bias.copy_(torch.from_numpy(params["softmax.b"].copy()))

    def loss(self, forest, dropout: float = 0.0) -> torch.Tensor:
        """Summed negative log-likelihood of the labelled nodes over the number
        of trees (npcomp's ``average="sentences"``), dropout on the classifier
        input."""
        d = self.hidden_dim
        word_nodes = forest.word_nodes()
        words, word_index = np.unique(forest.word[word_nodes], return_inverse=True)
        # leaves, once per distinct word: eqs. 9, 11-14 with no children
        z = self.embedding(torch.from_numpy(words.astype(np.int64))) @ self.W + self.b[:3 * d]
        i, o, u = torch.sigmoid(z[:, :d]), torch.sigmoid(z[:, d:2 * d]), torch.tanh(z[:, 2 * d:])
        word_c = i * u
        word_h = o * torch.tanh(word_c)
        leaf_rows = torch.from_numpy(word_index.astype(np.int64))
        # row 0 is the zero state of a missing child; node j is row j + 1
        zero = z.new_zeros((1, d))
        h_all = torch.cat([zero, word_h[leaf_rows]])
        c_all = torch.cat([zero, word_c[leaf_rows]])
        children = torch.from_numpy(forest.children.astype(np.int64) + 1)
        if children.shape[1] == 1:  # a forest of single words or unary chains
            children = torch.cat([children, torch.zeros_like(children)], dim=1)
        bias = torch.cat([self.b[:3 * d], self.b[3 * d:], self.b[3 * d:]])
        for level in range(1, forest.n_levels):
            start, stop = int(forest.level_ptr[level]), int(forest.level_ptr[level + 1])
            kids = children[start:stop]                                         # (M, 2)
            z = h_all[kids].reshape(stop - start, 2 * d) @ self.U + bias        # eqs. 9-12
            gates = torch.sigmoid(z)
            i, o = gates[:, :d], gates[:, d:2 * d]
            forget = gates[:, 3 * d:].reshape(stop - start, 2, d)
            u = torch.tanh(z[:, 2 * d:3 * d])
            c = i * u + (forget * c_all[kids]).sum(dim=1)                        # eq. 13
            h = o * torch.tanh(c)                                               # eq. 14
            h_all = torch.cat([h_all, h])
            c_all = torch.cat([c_all, c])
        labelled = np.flatnonzero(forest.label >= 0)
        inputs = h_all[torch.from_numpy(labelled + 1)]
        inputs = torch.nn.functional.dropout(inputs, dropout, training=dropout > 0.0)
        labels = torch.from_numpy(forest.label[labelled].astype(np.int64))
        return torch.nn.functional.cross_entropy(self.classifier(inputs), labels,
                                                 reduction="sum") / forest.n_trees

    def optimizer(self, lr: float, embedding_lr: float, l2: float) -> torch.optim.Adagrad:
        """AdaGrad as npcomp's: lambda on every weight but the embedding table."""
        dense = [self.W, self.U, self.b, *self.classifier.parameters()]
        return torch.optim.Adagrad([
            {"params": dense, "lr": lr, "weight_decay": l2},
            {"params": [self.embedding.weight], "lr": embedding_lr, "weight_decay": 0.0},
        ], eps=1e-10)
