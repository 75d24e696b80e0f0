"""python -m gradcheck [--model MODEL|all] [--seed S]: exit status 1 on any failure.

A row whose analytic and numeric gradients are both exactly 0 is printed as
"unexercised" (the case never makes J depend on it, so it checks nothing)
and counted in the summary.  Where a setting fails, the per-node state check
(npcomp/study/state_checks.py) runs on the same case and names the first node and
error term, parents first, that disagree with finite differences.
"""

from __future__ import annotations

import argparse
import sys

from npcomp.cells import registry

from .check import TOLERANCE
from .suite import settings, setting_rows, unchecked_models, unexercised_options


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m gradcheck",
        description="Finite-difference check (float64, 4th-order central differences) of "
        "every named parameter of every model, supervision mode and option; a row whose "
        "gradients are both exactly 0 is reported as unexercised, and a failing setting "
        "gets a per-node check of its error terms.",
    )
    parser.add_argument("--model", default="all", choices=tuple(registry.MODELS) + ("all",))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--tolerance", type=float, default=TOLERANCE)
    args = parser.parse_args(argv)
    models = tuple(registry.MODELS) if args.model == "all" else (args.model,)
    unchecked = unchecked_models(models)
    if unchecked:
        print(
            f"FAILED: no gradient-check settings for {', '.join(unchecked)} (declare them "
            "in the model's registry entry, npcomp/cells/registry.py)"
        )
        return 1
    failures = unexercised = rows = 0
    # the setting column is as wide as the longest description, so rows stay aligned
    width = max(len(setting.describe()) for model in models for setting in settings(model)) + 2
    print(f"{'model':<21}{'setting':<{width}}{'parameter':<28}{'max rel. error':>15}")
    for model in models:
        names, exercised = set(), set()
        for setting in settings(model):
            checked, case = setting_rows(setting, seed=args.seed)
            failed_here = 0
            for name, error, idle in checked:
                failed = not error <= args.tolerance
                failed_here += failed
                unexercised += idle
                rows += 1
                names.add(name)
                if not idle:
                    exercised.add(name)
                shown = f"{'unexercised':>15}" if idle else f"{error:>15.2e}"
                print(f"{model:<21}{setting.describe():<{width}}{name:<28}{shown}{'  FAIL' if failed else ''}")
            failures += failed_here
            if failed_here:
                print(f"    state check: {_state_check(case, setting, args.tolerance)}")
                print(f"    local check: {_local_check(case, setting, args.tolerance)}")
        # a block no setting exercises, or an option no setting gives, is never checked
        for name in sorted(names - exercised):
            failures += 1
            print(f"{model:<21}{'every setting':<{width}}{name:<28}{'unexercised':>15}  FAIL")
        for option in unexercised_options(model):
            failures += 1
            print(f"{model:<21}{'no setting gives':<{width}}{option:<28}{'unchecked':>15}  FAIL")
    print(
        f"\n{'FAILED' if failures else 'passed'}: {failures} failure(s) (a parameter above "
        f"{args.tolerance:g}, or unexercised by every setting); {unexercised} of {rows} rows "
        "unexercised (both gradients exactly 0: they check nothing)"
    )
    return 1 if failures else 0


def _state_check(case: tuple, setting, tolerance: float) -> str:
    """The per-node state check's verdict on a failing setting's case."""
    from npcomp.study.state_checks import check_states, summary

    model, params, batch, options = case
    checks = check_states(model, params, batch, step=setting.step, **options)
    verdict = summary(checks, getattr(batch, "forest", batch), tolerance)
    if not any(check.disagrees(tolerance) for check in checks):
        verdict += ": the error is after them, in the weight or word-vector gradients"
    return verdict


def _local_check(case: tuple, setting, tolerance: float) -> str:
    """The local checks' verdict (each node's backward on its own, the error
    from above held fixed) on a failing setting's case."""
    from npcomp.errors import ConfigError
    from npcomp.study.local_checks import check_local, summary

    model, params, batch, options = case
    try:
        checks = check_local(model, params, batch, step=setting.step, **options)
    except ConfigError as error:  # sentence pairs, or states read beyond the parent
        return f"not run: {error}"
    verdict = summary(checks, tolerance, several=True)
    if not any(check.disagrees(tolerance) for check in checks):
        verdict += ": the error is after them, in the weight or word-vector gradients"
    return verdict


if __name__ == "__main__":
    sys.exit(main())
