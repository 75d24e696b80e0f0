"""Plain text split into tokens as the Stanford Sentiment Treebank writes them.

The SST's sentences were tokenised by the Stanford parser's Penn Treebank
tokeniser, so a model trained on the treebank knows ``n't``, ``'s``,
``-LRB-``, ``````/``''`` and ``writer\\/director``, and not ``don't``,
``(`` or ``"``.  :func:`sst_tokens` applies the same conventions to a sentence
a user types, so its words hit the vocabulary as the treebank's do:

==========================  ===========================================
text                        tokens
==========================  ===========================================
``don't``, ``can't``        ``do n't``, ``ca n't`` (``cannot``: ``can not``)
``it's``, ``we're``         ``it 's``, ``we 're`` (also 'm 'd 'll 've; ``gonna``,
                            ``wanna``, ``ol'`` stay whole, as in the SST)
``(``, ``)``, ``[``, ``{``  ``-LRB-``, ``-RRB-``, ``-LSB-``, ``-LCB-`` ...
``"quoted"``                ``` `` quoted '' ``` (opening ```````, closing ``''``);
                            single quotes ``` `` ``` and ``'``
``a/b``, ``*``              ``a\\/b``, ``\\*`` (the treebank's escapes)
``, ; : ? ! ... -- $ % &``  tokens of their own (not 1,000 8:30 S&M)
final ``.``                 a token of its own; ``Mr.``, ``U.S.`` inside a
                            sentence keep theirs
hyphens, accents            kept inside the word (``well-made``, ``clichés``)
typographic quotes          as their ASCII forms (``don’t`` is ``do n't``)
==========================  ===========================================

Already tokenised text (the SST's own sentences joined by spaces) comes
back unchanged, so a tokenised sentence may be typed too.  Pure Python, no
dependency: the same tokens whether or not spaCy is installed.
"""

from __future__ import annotations

import re

# typographic characters to their ASCII forms first
_TYPOGRAPHIC = str.maketrans(
    {
        "\u2018": "`",
        "\u2019": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u2032": "'",
        "\u00b4": "'",
        "\u2014": " -- ",
        "\u2013": " -- ",
        "\u2026": " ... ",
    }
)
_BRACKETS = {"(": "-LRB-", ")": "-RRB-", "[": "-LSB-", "]": "-RSB-", "{": "-LCB-", "}": "-RCB-"}

# (pattern, replacement) in order; each puts spaces around what becomes a token
_RULES = [
    # double quotes: opening at the start or after a space or bracket, else closing
    (re.compile(r'^"'), " `` "),
    (re.compile(r'(?<=[\s(\[{<])"'), " `` "),
    (re.compile(r'"'), " '' "),
    (re.compile(r"(?<=\S)('')"), r" \1 "),
    (re.compile(r"(``)(?=\S)"), r" \1 "),
    # a single quote opening a quotation (not a clitic, 'em, 'n', '70s): ` as the treebank
    (
        re.compile(
            r"(?:^|(?<=[\s(\[{]))'(?=[A-Za-z])"
            r"(?!(?i:s|m|d|ll|re|ve|t|em|n|til|tis|twas|cause|bout)\b)"
        ),
        " ` ",
    ),
    # ellipses, dashes, brackets and symbols
    (re.compile(r"\.\.\.+"), " ... "),
    (re.compile(r"--+"), " -- "),
    (re.compile(r"[\[\](){}]"), r" \g<0> "),
    (re.compile(r"[;@#$%?!=]"), r" \g<0> "),
    (re.compile(r"&(?![A-Za-z])|(?<![A-Za-z])&"), " & "),  # not inside S&M
    # commas and colons, except inside numbers (1,000 8:30)
    (re.compile(r"([:,])(?!\d)"), r" \1 "),
    (re.compile(r"(?<!\d)([:,])"), r" \1 "),
    # the sentence's final period (not that of an ellipsis), before closing quotes/brackets
    (re.compile(r"(?<![.\s])(\.)(\s*(?:''|'|[\])}>])*\s*)$"), r" \1 \2"),
    # a closing single quote after a word (not a contraction's)
    (re.compile(r"(?<=[^'\s])(?<!\bol)(?<!\bOl)'(?=\s|$)(?<!n')"), " ' "),
    # clitics and contractions
    (re.compile(r"(?i)(?<=[^'\s])('s|'m|'d|'ll|'re|'ve|n't)(?=\s|$)"), r" \1 "),
    (re.compile(r"(?i)\b(can)(not)\b"), r"\1 \2"),
]
# the treebank's escapes of characters inside tokens (not already escaped)
_ESCAPES = [(re.compile(r"(?<!\\)/"), r"\\/"), (re.compile(r"(?<!\\)\*"), r"\\*")]


def sst_tokens(text: str) -> list:
    """The tokens of ``text`` as the SST writes them (the table above).

    text:    one sentence, plain or already tokenised
    returns: list of str, no empty tokens (an empty list for blank text)
    """
    text = text.translate(_TYPOGRAPHIC)
    for pattern, replacement in _RULES:
        text = pattern.sub(replacement, text)
    tokens = []
    for token in text.split():
        token = _BRACKETS.get(token, token)
        for pattern, replacement in _ESCAPES:
            token = pattern.sub(replacement, token)
        tokens.append(token)
    return tokens
