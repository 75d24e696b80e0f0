"""python -m gradcheck [--model MODEL|all] [--seed S]: exit status 1 on any failure."""
from __future__ import annotations

import argparse
import sys

from npcomp.cells import registry

from .check import TOLERANCE
from .suite import run_setting, settings, unchecked_models


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m gradcheck",
        description="Finite-difference check (float64, 4th-order central differences) of "
        "every named parameter of every model, supervision mode and option.")
    parser.add_argument("--model", default="all", choices=tuple(registry.MODELS) + ("all",))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--tolerance", type=float, default=TOLERANCE)
    args = parser.parse_args(argv)
    models = tuple(registry.MODELS) if args.model == "all" else (args.model,)
    unchecked = unchecked_models(models)
    if unchecked:
        print(f"FAILED: no gradient-check settings for {', '.join(unchecked)} (declare them "
              "in the model's registry entry, npcomp/cells/registry.py)")
        return 1
    failures = 0
    # the setting column is as wide as the longest description, so rows stay aligned
    width = max(len(setting.describe()) for model in models for setting in settings(model)) + 2
    print(f"{'model':<21}{'setting':<{width}}{'parameter':<28}{'max rel. error':>15}")
    for model in models:
        for setting in settings(model):
            errors = run_setting(setting, seed=args.seed)
            for name, error in errors.items():
                failed = not error <= args.tolerance
                failures += failed
                print(f"{model:<21}{setting.describe():<{width}}{name:<28}{error:>15.2e}"
                      f"{'  FAIL' if failed else ''}")
    print(f"\n{'FAILED' if failures else 'passed'}: {failures} parameter(s) above "
          f"{args.tolerance:g}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
