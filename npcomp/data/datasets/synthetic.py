"""The synthetic compositional sentiment treebank: npcomp's embedded default task.

A small grammar of movie-review sentences gives binary trees; a small semantics
gives every node a sentiment label in 0..4 as in the Stanford Sentiment
Treebank (0 very negative, 1 negative, 2 neutral, 3 positive, 4 very
positive).  No download, deterministic from a seed, and a model trains on it in
seconds.  Composition decides the label of many sentences ("not good",
"bad but very good"), so tree models beat bag-of-words models on it.

Lexicon (word -> role, score s)::

    polar adjectives   good nice fine decent funny charming                 +1
                       excellent brilliant wonderful superb gorgeous        +2
                       bad dull weak boring silly bland                     -1
                       awful terrible dreadful horrible atrocious           -2
    polar nouns        treat pleasure +1, masterpiece triumph +2,
                       mess bore -1, disaster failure -2
    neutral words      determiners, nouns, neutral adjectives, verbs,
                       prepositions, "it", "and"                             0
    negators           not never hardly                                     0
    intensifiers       very extremely really truly                          0
    contrast           but yet         (the part after the word wins)       0
    concession         although though (the part before the word wins)      0

Semantics.  Every node has a score s in {-2, ..., 2} and its label is s + 2.
A leaf's score is its word's.  An inner node (left, right) takes the first
rule that applies:

1. left is a negator:       s = -sign(s_right)              (flip, and weaken
   a strong score: "not good" -1, "not excellent" -1, "not bad" +1)
2. left is an intensifier:  s = sign(s_right) * min(|s_right| + 1, 2)
   ("very good" +2, "very the film" 0)
3. left is a contrast or concession word: s = s_right, and the node is a
   "contrast clause" or "concession clause" ("but dull" -1)
4. right is a contrast clause:   s = s_right     ("bad but very good" +2)
5. right is a concession clause: s = s_left      ("good although dull" +1)
6. otherwise: s = clip(s_left + s_right, -2, 2)  (neutral words keep the score,
   two polar parts add: "the good film is dull" 0)

Grammar (binary bracketing as written, ``|`` choice; probabilities in the
functions at the end of the module)::

    sentence  -> clause | (sentence (CONNECTIVE clause))     up to 3 clauses
    clause    -> (NP VP) | AP | NP
    NP        -> it | (DET NOUN) | (DET (AP NOUN)) | (DET POLAR_NOUN)
                 | (NP (PREP NP))
    VP        -> (COPULA AP) | (COPULA NP) | (VERB NP) | (never VP)
    AP        -> ADJECTIVE | (INTENSIFIER AP) | ((not | hardly) AP)
                 | (AP ((but | yet | and) AP))

CONNECTIVE is a contrast or concession word or "and".  A clause joined by a
contrast or concession word is drawn, when possible, with the opposite sign to
what precedes it, so that the side the connective picks matters.  Sentences
have 2..25 words; within a treebank every sentence is distinct, and the splits
of :func:`synthetic_splits` do not share sentences.

:func:`phenomena` names what a sentence contains ("negation", "contrast",
"intensifier", and "reversal": the root's sign differs from the sign of the
sum of its words' scores); :data:`DECISIVE_PHENOMENA` are those a bag of words
cannot resolve, for reporting accuracy on the composition-decisive subset.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from npcomp.data.readers.formats import NO_PARENT, NO_TOKEN, UNLABELLED, Tree, _split_source
from npcomp.errors import DataError

N_CLASSES = 5
MAX_SCORE = 2
MIN_WORDS, MAX_WORDS = 2, 25
DEFAULT_SIZES = (3000, 500, 500)
SPLIT_NAMES = ("train", "dev", "test")

POLAR_ADJECTIVES = {
    +1: ("good", "nice", "fine", "decent", "funny", "charming"),
    +2: ("excellent", "brilliant", "wonderful", "superb", "gorgeous"),
    -1: ("bad", "dull", "weak", "boring", "silly", "bland"),
    -2: ("awful", "terrible", "dreadful", "horrible", "atrocious"),
}
POLAR_NOUNS = {
    +1: ("treat", "pleasure"),
    +2: ("masterpiece", "triumph"),
    -1: ("mess", "bore"),
    -2: ("disaster", "failure"),
}
NEUTRAL_ADJECTIVES = ("long", "new", "french", "recent", "familiar")
NOUNS = ("film", "movie", "plot", "cast", "story", "ending", "script", "director", "soundtrack", "acting", "dialogue")
DETERMINERS = ("the", "this", "that", "its", "every")
COPULAS = ("is", "was", "seems", "feels", "looks", "remains")
VERBS = ("has", "offers", "features", "delivers")
PREPOSITIONS = ("of", "with", "from")
PRONOUN = "it"
AND = "and"
ADJECTIVE_NEGATORS = ("not", "hardly")
VERB_NEGATOR = "never"
NEGATORS = ADJECTIVE_NEGATORS + (VERB_NEGATOR,)
INTENSIFIERS = ("very", "extremely", "really", "truly")
CONTRAST = ("but", "yet")
CONCESSION = ("although", "though")

DECISIVE_PHENOMENA = frozenset({"negation", "contrast"})

# node kinds of the semantics (rules 1-5 of the module docstring)
_PLAIN, _NEGATOR, _INTENSIFIER = "plain", "negator", "intensifier"
_CONTRAST, _CONCESSION = "contrast", "concession"
_CONTRAST_CLAUSE, _CONCESSION_CLAUSE = "contrast clause", "concession clause"


def _build_lexicon() -> dict:
    lexicon = {}
    for table in (POLAR_ADJECTIVES, POLAR_NOUNS):
        for score, words in table.items():
            lexicon.update((word, (score, _PLAIN)) for word in words)
    for words in (NEUTRAL_ADJECTIVES, NOUNS, DETERMINERS, COPULAS, VERBS, PREPOSITIONS, (PRONOUN, AND)):
        lexicon.update((word, (0, _PLAIN)) for word in words)
    for words, kind in (
        (NEGATORS, _NEGATOR),
        (INTENSIFIERS, _INTENSIFIER),
        (CONTRAST, _CONTRAST),
        (CONCESSION, _CONCESSION),
    ):
        lexicon.update((word, (0, kind)) for word in words)
    return lexicon


LEXICON = _build_lexicon()
"""word -> (score, kind) for every word of the grammar."""


def compose(left: tuple, right: tuple) -> tuple:
    """The (score, kind) of an inner node from its children's (score, kind).

    Rules 1-6 of the module docstring, the first that applies.
    """
    left_score, left_kind = left
    right_score, right_kind = right
    if left_kind == _NEGATOR:
        return -int(np.sign(right_score)), _PLAIN
    if left_kind == _INTENSIFIER:
        return int(np.sign(right_score)) * min(abs(right_score) + 1, MAX_SCORE), _PLAIN
    if left_kind == _CONTRAST:
        return right_score, _CONTRAST_CLAUSE
    if left_kind == _CONCESSION:
        return right_score, _CONCESSION_CLAUSE
    if right_kind == _CONTRAST_CLAUSE:
        return right_score, _PLAIN
    if right_kind == _CONCESSION_CLAUSE:
        return left_score, _PLAIN
    return max(-MAX_SCORE, min(MAX_SCORE, left_score + right_score)), _PLAIN


def annotate(tree: Tree) -> Tree:
    """The tree with every node labelled by the semantics (label = score + 2).

    ``tree`` must be binary: leaves read a word of :data:`LEXICON`, inner nodes
    read none and have exactly two children.  Raises DataError naming the
    tree's source otherwise.  One loop over the nodes, children first.
    """
    path, line = _split_source(tree.source)
    kids = tree.children()
    meaning: list = [None] * tree.n_nodes
    for node in range(tree.n_nodes):
        word = tree.token_index[node]
        if word != NO_TOKEN:
            if kids[node]:
                raise DataError(f"node {node} reads a word and has children", path, line)
            token = tree.tokens[word]
            if token not in LEXICON:
                raise DataError(f"word {token!r} is not in the synthetic lexicon", path, line)
            meaning[node] = LEXICON[token]
        elif len(kids[node]) == 2:
            meaning[node] = compose(meaning[kids[node][0]], meaning[kids[node][1]])
        else:
            raise DataError(f"inner node {node} has {len(kids[node])} children, not 2", path, line)
    label = np.array([score + MAX_SCORE for score, _ in meaning], dtype=np.int32)
    return tree.with_labels(label)


def phenomena(tree: Tree) -> set:
    """What a labelled synthetic sentence contains: a subset of {"negation",
    "contrast", "intensifier", "reversal"} (see the module docstring)."""
    tokens = set(tree.tokens)
    found = set()
    if tokens.intersection(NEGATORS):
        found.add("negation")
    if tokens.intersection(CONTRAST + CONCESSION):
        found.add("contrast")
    if tokens.intersection(INTENSIFIERS):
        found.add("intensifier")
    word_sum = sum(LEXICON[token][0] for token in tree.tokens)
    if np.sign(word_sum) != np.sign(tree.root_label - MAX_SCORE):
        found.add("reversal")
    return found


def generate_treebank(n_sentences: int, seed: int, split: str = "train") -> list:
    """``n_sentences`` distinct labelled binary trees drawn with ``seed``.

    Tree sources are "synthetic:SPLIT:k", k = 1..n_sentences.  The same seed
    gives the same trees; the treebank is the first split of
    ``synthetic_splits(seed, (n_sentences, ...))``.
    """
    return _draw_treebank(np.random.default_rng(seed), n_sentences, split, set())


def synthetic_splits(seed: int = 0, sizes: Sequence[int] = DEFAULT_SIZES) -> dict:
    """{"train", "dev", "test"} -> list of labelled Trees, no sentence shared.

    Drawn one split after the other from one generator seeded with ``seed``, so
    the train split equals ``generate_treebank(sizes[0], seed)`` and changing an
    earlier size changes the later splits.
    """
    if len(sizes) != len(SPLIT_NAMES):
        raise ValueError(f"sizes must give {len(SPLIT_NAMES)} counts (train, dev, test)")
    generator = np.random.default_rng(seed)
    seen: set = set()
    return {split: _draw_treebank(generator, size, split, seen) for split, size in zip(SPLIT_NAMES, sizes)}


def _draw_treebank(generator: np.random.Generator, n_sentences: int, split: str, seen: set) -> list:
    """Draw sentences until ``n_sentences`` new ones (not in ``seen``) are found."""
    trees = []
    while len(trees) < n_sentences:
        structure = _sentence(generator)
        tokens = tuple(_words(structure))
        if not MIN_WORDS <= len(tokens) <= MAX_WORDS or tokens in seen:
            continue
        seen.add(tokens)
        source = f"synthetic:{split}:{len(trees) + 1}"
        trees.append(annotate(structure_to_tree(structure, source)))
    return trees


# --------------------------------------------------------------------------
# structures: a word (str) or a pair (left, right) of structures
# --------------------------------------------------------------------------


def structure_to_tree(structure, source: str = "") -> Tree:
    """An unlabelled Tree from nested pairs of words, e.g. ("not", ("very", "good")).

    Iterative walk: nodes are numbered children before parents, left before right.
    """
    tokens: list = []
    parent: list = []
    token_index: list = []
    open_pairs: list = []  # for each pair being built, innermost last: its finished children
    stack = [structure]
    while stack:
        item = stack.pop()
        if not isinstance(item, str):
            if len(item) != 2:
                raise ValueError(f"a structure is a word or a pair, not {item!r}")
            open_pairs.append([])
            stack.extend((item[1], item[0]))
            continue
        node = len(parent)
        parent.append(NO_PARENT)
        token_index.append(len(tokens))
        tokens.append(item)
        while open_pairs:  # the finished node is the next child of the innermost open pair
            open_pairs[-1].append(node)
            if len(open_pairs[-1]) < 2:
                break
            children = open_pairs.pop()
            node = len(parent)
            parent.append(NO_PARENT)
            token_index.append(NO_TOKEN)
            for child in children:
                parent[child] = node
    return Tree(
        tuple(tokens),
        np.array(parent, dtype=np.int32),
        np.array(token_index, dtype=np.int32),
        np.full(len(parent), UNLABELLED, dtype=np.int32),
        source,
    )


def _words(structure) -> list:
    words = []
    stack = [structure]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            words.append(item)
        else:
            stack.extend(reversed(item))
    return words


def _score(structure) -> int:
    return annotate(structure_to_tree(structure)).root_label - MAX_SCORE


# --------------------------------------------------------------------------
# the grammar (recursion here is bounded by the grammar, a few levels)
# --------------------------------------------------------------------------


def _pick(generator: np.random.Generator, words: Sequence[str]) -> str:
    return words[generator.integers(len(words))]


def _polar(generator: np.random.Generator, table: dict) -> str:
    score = (1, 2, -1, -2)[generator.choice(4, p=(0.3, 0.2, 0.3, 0.2))]
    return _pick(generator, table[score])


def _adjective_phrase(generator: np.random.Generator, coordinate: bool = True):
    phrase = _polar(generator, POLAR_ADJECTIVES) if generator.random() < 0.85 else _pick(generator, NEUTRAL_ADJECTIVES)
    if generator.random() < 0.3:
        phrase = (_pick(generator, INTENSIFIERS), phrase)
    if generator.random() < 0.35:
        phrase = (_pick(generator, ADJECTIVE_NEGATORS), phrase)
    if coordinate and generator.random() < 0.15:
        connective = _pick(generator, CONTRAST + (AND,))
        phrase = (phrase, (connective, _adjective_phrase(generator, coordinate=False)))
    return phrase


def _noun_phrase(generator: np.random.Generator, attach: bool = True):
    draw = generator.random()
    if draw < 0.1:
        return PRONOUN
    if draw < 0.3:
        phrase = (_pick(generator, DETERMINERS), _polar(generator, POLAR_NOUNS))
    elif draw < 0.6:
        modifier = _adjective_phrase(generator, coordinate=False)
        phrase = (_pick(generator, DETERMINERS), (modifier, _pick(generator, NOUNS)))
    else:
        phrase = (_pick(generator, DETERMINERS), _pick(generator, NOUNS))
    if attach and generator.random() < 0.2:
        phrase = (phrase, (_pick(generator, PREPOSITIONS), _noun_phrase(generator, attach=False)))
    return phrase


def _verb_phrase(generator: np.random.Generator):
    draw = generator.random()
    if draw < 0.6:
        phrase = (_pick(generator, COPULAS), _adjective_phrase(generator))
    elif draw < 0.8:
        phrase = (_pick(generator, COPULAS), _noun_phrase(generator))
    else:
        phrase = (_pick(generator, VERBS), _noun_phrase(generator))
    if generator.random() < 0.1:
        phrase = (VERB_NEGATOR, phrase)
    return phrase


def _clause(generator: np.random.Generator):
    draw = generator.random()
    if draw < 0.12:
        return _adjective_phrase(generator)
    if draw < 0.2:
        return _noun_phrase(generator)
    return (_noun_phrase(generator), _verb_phrase(generator))


def _sentence(generator: np.random.Generator, attempts: int = 5):
    """Clauses joined left to right; a contrast or concession clause is
    redrawn (up to ``attempts`` times) until its sign opposes the sentence so far."""
    sentence = _clause(generator)
    n_more = int(generator.random() < 0.45) + int(generator.random() < 0.15)
    for _ in range(n_more):
        connective = _pick(generator, CONTRAST + CONCESSION + (AND,))
        clause = _clause(generator)
        if connective != AND:
            sign = np.sign(_score(sentence))
            for _ in range(attempts):
                clause_sign = np.sign(_score(clause))
                if clause_sign != 0 and clause_sign != sign:
                    break
                clause = _clause(generator)
        sentence = (sentence, (connective, clause))
    return sentence
