"""npcomp gradcheck: the gradient-check suite (``npcomp.gradcheck``; in a
checkout also ``python -m gradcheck``), its options as the suite's own."""

import argparse


def add_parser(commands) -> None:
    from npcomp.cells import registry

    gradcheck = commands.add_parser(
        "gradcheck",
        help="finite-difference check of every model's gradients",
        description="Finite-difference check (float64, 4th-order central differences) of "
        "every named parameter of every model, supervision mode and option, as python -m "
        "gradcheck runs it in a checkout; a row whose gradients are both exactly 0 is "
        "reported as unexercised, and a failing setting gets a per-node check of its error "
        "terms. Exit status 1 on any failure.",
    )
    gradcheck.add_argument(
        "--model",
        default="all",
        choices=tuple(registry.MODELS) + ("all",),
        help="one model, or all of them (the default)",
    )
    gradcheck.add_argument("--seed", type=int, default=0, help="seed of the random trees and parameters (default 0)")
    gradcheck.add_argument(
        "--tolerance", type=float, default=None, help="largest relative error that passes (default: the suite's, 1e-6)"
    )


def suite_arguments(args: argparse.Namespace) -> list:
    """The suite's command line for the options given."""
    given = ["--model", args.model, "--seed", str(args.seed)]
    return given + (["--tolerance", repr(args.tolerance)] if args.tolerance is not None else [])


def run(args) -> int:
    from npcomp.gradcheck.__main__ import main

    if main(suite_arguments(args)):
        raise ValueError("a gradient check failed or checked nothing (the rows above say which)")
    return 0
