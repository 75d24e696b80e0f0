"""A split's per-sentence predictions, written into the run directory.

``RUN_DIR/predictions.jsonl`` holds the test split's predictions by the
run's best-dev model (written at the end of training, and again by ``npcomp
eval --run RUN_DIR``); ``npcomp eval --split dev`` (or ``train``) writes
``RUN_DIR/predictions-dev.jsonl`` (``-train``).  The figures of ``npcomp
plot`` are computed from these files (``figures.py``), so nothing is
retrained to draw them.  One JSON object per line, one line per sentence in
the split's order.

Sentences (sst5, sst2, synthetic), the nodes of each listed in the tree's own
order (children before parents), its labelled nodes and the root, which is
always last (its gold label -1 when the root is unlabelled):

==============  =================================================================
key             value
==============  =================================================================
``sentence``    index of the sentence in the split (0-based)
``length``      number of words
``gold``        gold label of each node listed
``predicted``   predicted label (the head's decoding)
``p``           probability of the predicted class (4 decimals; the ordinal
                head's class probability q_(k-1) - q_k from its cumulative ones)
``height``      longest distance from the node down to a leaf (a leaf: 0)
``span``        number of words under the node (the root: ``length``)
``gold_class``  the class name of each ``gold`` label (null where -1)
``predicted_class``  the class name of each ``predicted`` label
``text``        the sentence, its words separated by single spaces
``source``      where the sentence came from, ``FILE:LINE`` (a user's file,
                a treebank's line), or its place in what an estimator was
                given (``X[3]``); null when unknown
==============  =================================================================

The class names are those of the run's metrics (``classes`` there): a user's
files' own, a built-in task's (``very negative`` .. ``very positive`` for the
SST), else the class numbers.

Nodes are listed as the model composed the sentence: a sequence model's
chain is labelled at its last word only, so its one node is the sentence;
left- and right-branching trees (``--structure left/right``) carry the root's
and the words' labels only.

Sentence pairs (sick, a user's file of pairs), one line per pair: ``pair``
(index), ``gold`` and ``predicted`` relatedness (6 decimals; on the scale of
the file's scores), ``length_a`` and ``length_b`` (the two sentences'
numbers of words), ``text_a`` and ``text_b`` (the sentences) and ``source_a``
and ``source_b`` (where each came from, as ``source`` above).  Classified
pairs (sick-entailment, a user's file of labelled pairs): ``pair``,
``gold`` and ``predicted`` class numbers, their names ``gold_class`` and
``predicted_class`` (where the task names its classes), ``p`` (the
probability of the predicted class, 4 decimals), ``length_a``,
``length_b`` and the two sentences as above.  Their runs write no figure
counts.
"""

from __future__ import annotations

import numpy as np

from .encoding import EncodedPairs
from .evaluation import pair_outputs, predict_relatedness, predict_split
from npcomp.runfiles.figure_counts import counts_of, write_counts
from npcomp.runfiles.rundir import RunDirectory, predictions_name


def tree_shape(tree) -> tuple:
    """(height, span) of every node of ``tree``: the longest distance down to
    a leaf, and the number of words under it (nodes reading a word, counted
    over the subtree)."""
    height = np.zeros(tree.n_nodes, dtype=np.int64)
    span = (np.asarray(tree.token_index) >= 0).astype(np.int64)
    for node, up in enumerate(tree.parent.tolist()):  # children before parents
        if up >= 0:
            height[up] = max(height[up], height[node] + 1)
            span[up] += span[node]
    return height, span


def class_probabilities(head_name: str, outputs: np.ndarray) -> np.ndarray:
    """(n, C) class probabilities from a head's outputs: the softmax's own,
    or the ordinal head's P(y = k) = q_(k-1) - q_k (q_-1 = 1, q_(C-1) = 0),
    clipped at 0."""
    if head_name != "ordinal":
        return outputs
    n = outputs.shape[0]
    cumulative = np.concatenate([np.ones((n, 1)), outputs, np.zeros((n, 1))], axis=1)
    return np.clip(cumulative[:, :-1] - cumulative[:, 1:], 0.0, 1.0)


def sentence_records(model, trees, outputs, classes: list | None = None) -> list:
    """One record per tree (module docstring) from the head's outputs at its
    nodes, in the tree's node order (``evaluation.predict_split``);
    ``classes``: the class names by number (None: the numbers)."""
    names = list(range(model.n_classes)) if classes is None else list(classes)
    records = []
    for index, (tree, out) in enumerate(zip(trees, outputs)):
        predicted = model.head.decode(out)
        probability = class_probabilities(model.head_name, out)
        height, span = tree_shape(tree)
        listed = tree.label >= 0
        listed[tree.root] = True
        nodes = np.flatnonzero(listed)
        records.append(
            {
                "sentence": index,
                "length": len(tree.tokens),
                "gold": tree.label[nodes].tolist(),
                "predicted": predicted[nodes].tolist(),
                "p": [round(float(probability[node, predicted[node]]), 4) for node in nodes],
                "height": height[nodes].tolist(),
                "span": span[nodes].tolist(),
                "gold_class": [names[label] if label >= 0 else None for label in tree.label[nodes].tolist()],
                "predicted_class": [names[label] for label in predicted[nodes].tolist()],
                "text": " ".join(tree.tokens),
                "source": tree.source or None,
            }
        )
    return records


def pair_records(split: EncodedPairs, predicted: np.ndarray) -> list:
    """One record per sentence pair (module docstring), gold and predicted on
    the scale of the pairs' own scores."""
    gold_scores, predicted = split.on_their_scale(split.scores), split.on_their_scale(predicted)
    return [
        {
            "pair": index,
            "gold": round(float(gold), 6),
            "predicted": round(float(score), 6),
            "length_a": len(split.left.trees[index].tokens),
            "length_b": len(split.right.trees[index].tokens),
            **_pair_sentences(split.left.trees[index], split.right.trees[index]),
        }
        for index, (gold, score) in enumerate(zip(gold_scores, predicted))
    ]


def _pair_sentences(left, right) -> dict:
    """The two sentences of a pair record and where each came from."""
    return {
        "text_a": " ".join(left.tokens),
        "text_b": " ".join(right.tokens),
        "source_a": left.source or None,
        "source_b": right.source or None,
    }


def pair_class_records(split: EncodedPairs, p_hat: np.ndarray, classes: list | None = None) -> list:
    """One record per classified pair (module docstring) from its p_hat;
    the class names the split's own, else ``classes``."""
    predicted = p_hat.argmax(axis=1)
    names = split.class_names if split.class_names is not None else classes
    records = []
    for index, (gold, guess) in enumerate(zip(split.labels.tolist(), predicted.tolist())):
        record = {"pair": index, "gold": gold, "predicted": guess}
        if names is not None:
            record.update(gold_class=names[gold] if gold >= 0 else None, predicted_class=names[guess])
        record.update(
            p=round(float(p_hat[index, guess]), 4),
            length_a=len(split.left.trees[index].tokens),
            length_b=len(split.right.trees[index].tokens),
            **_pair_sentences(split.left.trees[index], split.right.trees[index]),
        )
        records.append(record)
    return records


def predict_records(model, params, split, batch_size: int = 512, helpers=None, classes: list | None = None) -> list:
    """The records of every sentence (pair) of an encoded split; ``classes``:
    the class names by number."""
    if isinstance(split, EncodedPairs) and model.head.classifies:
        return pair_class_records(split, pair_outputs(model, params, split, batch_size, helpers), classes)
    if isinstance(split, EncodedPairs):
        return pair_records(split, predict_relatedness(model, params, split, batch_size, helpers))
    return sentence_records(model, split.trees, predict_split(model, params, split, batch_size), classes)


def write_predictions(
    run_dir,
    model,
    params,
    split,
    split_name: str = "test",
    batch_size: int = 512,
    helpers=None,
    name: str | None = None,
    task: str | None = None,
    classes: list | None = None,
) -> str:
    """Predict ``split`` (encoded) and write its records atomically into the
    run directory as ``name`` (default ``predictions_name(split_name)``);
    ``classes``: the class names by number (``run_data.named_classes``); the
    path written."""
    directory = run_dir if isinstance(run_dir, RunDirectory) else RunDirectory(run_dir)
    records = predict_records(model, params, split, batch_size, helpers, classes)
    classified = isinstance(split, EncodedPairs) and model.head.classifies
    if split_name == "test" and name is None and task is not None and not classified:
        # what the figures need of them, small enough to keep where the
        # predictions are not (figure_counts.py)
        write_counts(directory, counts_of(records, task))
    name = name if name is not None else predictions_name(split_name)
    directory.write_jsonl(name, records)
    return str(directory.file(name))
