"""`npcomp download`: a dataset from its official source."""
from __future__ import annotations

from pathlib import Path


def add_parser(commands) -> None:
    """The download command's options."""
    download = commands.add_parser("download", help="fetch a dataset from its official source")
    download.add_argument("dataset", choices=("sst", "sick", "glove"))
    download.add_argument("--data-dir", default=None)
    download.add_argument("--force", action="store_true", help="download even if present")
    download.add_argument("--base-url", default=None, help="mirror to download from")


def run(args) -> int:
    from npcomp.data.download import fetch
    from npcomp.data.tasks import default_data_dir
    data_dir = Path(args.data_dir) if args.data_dir else default_data_dir()
    for path in fetch(args.dataset, data_dir, base_url=args.base_url, force=args.force):
        print(path)
    return 0
