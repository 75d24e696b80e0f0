"""`npcomp download NAME|all|--list`: the data the reports read, from its
official sources."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_parser(commands) -> None:
    """The download command's options."""
    from npcomp.data.downloads.catalogue import ALIASES, ALL, DATASETS

    names = "\n".join(f"  {name:<11} {DATASETS[name].description}" for name in ALL)
    download = commands.add_parser(
        "download",
        help="fetch the data the reports read, from its official sources",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Download data sets from their official sources, check them (the "
        "release files' MD5s, the\npublisher's SHA-256 where there is one) and install "
        "them in the data directory in\nthe layout npcomp reads (DIR/sst/, DIR/sick/, "
        "DIR/vectors/). Word vectors are kept,\nas they are unpacked, to the words of the "
        "SST and SICK (a few MB instead of GBs;\n--full keeps every word); a JSON record "
        "beside each vector file says what was kept.\nA download that breaks off is "
        "resumed where it stopped when the command runs again.\n\ndata sets:\n"
        + names
        + "\n  all         every one of them, in this order\n(older name: "
        + ", ".join(f"{old} = {new}" for old, new in ALIASES.items())
        + ")",
        epilog="examples:\n"
        "  npcomp download --list                  what each is, its size, where "
        "it goes, who reads it\n"
        "  npcomp download all                     everything the reports read, into "
        "$NPCOMP_DATA or ./data\n"
        "  npcomp download sst sick --data-dir data\n"
        "  npcomp download sick sick-trees         SICK and its Tree-LSTM layout, parsed "
        "here (npcomp[parse])\n"
        "  npcomp download glove.6B --full         every GloVe 6B word at 50-300 d\n"
        "  NPCOMP_DOWNLOAD_BASE_URL=file:///archives/ npcomp download sst"
        "   archives fetched by hand",
    )
    download.add_argument("datasets", nargs="*", metavar="NAME", help="data sets to install (see above), or all")
    download.add_argument(
        "--list",
        action="store_true",
        help="print each data set: source, size to fetch and on disk, "
        "files, whether it is installed, and the reports and commands "
        "that read it",
    )
    download.add_argument("--data-dir", default=None, help="where to install (default $NPCOMP_DATA, else ./data)")
    download.add_argument(
        "--full", action="store_true", help="word vectors with every word, not only the SST's and SICK's (GBs)"
    )
    download.add_argument("--force", action="store_true", help="download again even what is installed and verified")
    download.add_argument(
        "--base-url",
        default=None,
        metavar="URL",
        help="fetch every archive by its file name from this mirror "
        "(http:// or file://; default $NPCOMP_DOWNLOAD_BASE_URL, else the "
        "official addresses)",
    )
    download.add_argument("--quiet", action="store_true", help="no progress bars")


def run(args) -> int:
    from npcomp.data.downloads.download import fetch
    from npcomp.data.downloads.catalogue import ALL, dataset
    from npcomp.errors import ConfigError
    from npcomp.data.datasets.tasks import default_data_dir

    data_dir = Path(args.data_dir) if args.data_dir else default_data_dir()
    if args.list:
        print(listing(data_dir))
        return 0
    if not args.datasets:
        raise ConfigError("datasets", "name the data sets to download (or all), or --list them")
    names = []
    for name in args.datasets:
        if name == "all":
            names.extend(ALL)
            continue
        try:
            names.append(dataset(name).name)
        except ValueError as error:
            raise ConfigError("datasets", str(error)) from None
    # each once, vectors after the data whose words they keep
    names = [name for name in ALL if name in names]
    if "sick-trees" in names:  # refused before anything is fetched
        from npcomp.data.downloads.sick_trees import parser_missing

        if parser_missing():
            raise ConfigError(
                "datasets",
                f"{parser_missing()}; or name the others (npcomp "
                f"download {' '.join(n for n in names if n != 'sick-trees')})",
            )
    for name in names:
        for path in fetch(
            name, data_dir, base_url=args.base_url, force=args.force, full=args.full, progress=not args.quiet
        ):
            print(path)
    return 0


def listing(data_dir: Path) -> str:
    """`npcomp download --list`: every data set with its source, sizes,
    files, state in ``data_dir`` and the reports and commands that read it."""
    from npcomp.data.downloads.download import installed
    from npcomp.data.downloads.catalogue import ALL, DATASETS
    from npcomp.experiments.data_downloads import dataset_tables
    from npcomp.experiments.paper_tables import TABLES

    users = dataset_tables(TABLES.values())
    lines = [f"data directory: {data_dir}"]
    for name in ALL:
        entry = DATASETS[name]
        state = "installed" if installed(name, data_dir) else "not installed"
        lines += [
            f"\n{name} ({state}): {entry.description}",
            *(f"  source:   {archive.url}" for archive in entry.archives),
            *([f"  source:   made here from {', '.join(entry.needs)}'s files"] if entry.makes else []),
            (
                f"  fetch:    {_fetched(entry.fetch_size)}; on disk: about "
                f"{_size(entry.disk_size)}; licence: {entry.licence}"
            ),
            "  files:    "
            + (
                _made_files(entry.makes)
                if entry.makes
                else ", ".join(
                    member.target for archive in entry.archives for member in archive.members if not member.full_only
                )
            ),
            f"  checked:  {entry.checksums}",
        ]
        if entry.needs:
            lines.append(
                f"  needs:    {', '.join(entry.needs)} first ("
                + ("the files it is made from)" if entry.makes else "the words it keeps)")
            )
        lines.append(f"  reports:  {', '.join(users[name]) or '-'}")
        lines.append(f"  commands: {entry.commands}")
    return "\n".join(lines)


def _fetched(size: int) -> str:
    return f"about {_size(size)}" if size else "nothing"


def _made_files(targets: tuple) -> str:
    """sick/train/a.toks ... as sick/{train,dev,test}/{a.toks,...}."""
    folders = list(dict.fromkeys(target.rsplit("/", 1)[0] for target in targets))
    names = list(dict.fromkeys(target.rsplit("/", 1)[1] for target in targets))
    top = folders[0].rsplit("/", 1)[0]
    return f"{top}/{{{','.join(folder.rsplit('/', 1)[1] for folder in folders)}}}/{{{','.join(names)}}}"


def _size(size: int) -> str:
    """About how many bytes, in MB or GB (powers of 1000)."""
    if size >= 1e9:
        return f"{size / 1e9:.1f} GB"
    if size >= 1e6:
        return f"{size / 1e6:.0f} MB"
    return f"{size / 1e6:.1f} MB"
