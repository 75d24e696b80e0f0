"""An elementwise operation over a long range, cut in contiguous parts
computed at once: the calling thread takes the first part, helper threads
(an executor) the others.

Each element is computed by exactly one part, by the same arithmetic as
without the cut, so the result does not depend on how many parts or
threads there are: it only saves time where the operation releases the GIL
(NumPy's arithmetic, the ``nogil`` kernels) and the range is long, such as
the sum of the shards' gradients and the optimiser's dense update.
"""
from __future__ import annotations

from concurrent.futures import wait

# below this many elements a part costs more to hand over than to compute
SMALLEST_PART = 1 << 15


def part_bounds(size: int, parts: int) -> list:
    """[(start, stop)] of ``parts`` contiguous parts of range(size), nearly
    equal, in order; fewer when a part would hold under SMALLEST_PART."""
    parts = max(1, min(parts, size // SMALLEST_PART))
    cuts = [size * k // parts for k in range(parts + 1)]
    return list(zip(cuts[:-1], cuts[1:]))


def in_parts(function, size: int, helpers=None, threads: int = 2) -> None:
    """function(start, stop) over contiguous parts of range(size), one per
    thread of ``threads``: the first on the calling thread, the others on
    ``helpers`` (an executor of threads - 1 workers; None: the whole range
    here).  Returns once every part is done; an exception of any part is
    raised here."""
    bounds = part_bounds(size, 1 if helpers is None else threads)
    futures = [helpers.submit(function, start, stop) for start, stop in bounds[1:]]
    try:
        function(*bounds[0])
        for future in futures:
            future.result()
    finally:
        wait(futures)
