"""A long elementwise operation cut in parts on several threads: the parts
cover the range once, in order; the sum of the shards' gradients and the
optimiser's dense update give the same numbers, bit for bit, cut or whole."""
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from npcomp.training import split_ranges
from npcomp.training.optimizers import OPTIMIZERS, make_optimizer
from npcomp.training.split_ranges import in_parts, part_bounds


@pytest.mark.parametrize("size,parts", [(0, 2), (1, 2), (100, 3), (65536, 2), (65537, 2),
                                        (10**6, 3), (10**6, 1)])
def test_the_parts_cover_the_range_once_in_order(size, parts):
    bounds = part_bounds(size, parts)
    assert bounds[0][0] == 0 and bounds[-1][1] == size
    assert all(stop == start for (_, stop), (start, _) in zip(bounds, bounds[1:]))
    assert all(stop - start >= split_ranges.SMALLEST_PART for start, stop in bounds[:-1])
    assert len(bounds) == max(1, min(parts, size // split_ranges.SMALLEST_PART))


def test_every_part_runs_and_a_parts_error_is_raised_after_all_finish():
    seen = np.zeros(10**6, dtype=np.int64)

    def mark(start, stop):
        seen[start:stop] += 1

    with ThreadPoolExecutor(max_workers=2) as helpers:
        in_parts(mark, seen.shape[0], helpers, threads=3)
        assert (seen == 1).all()
        finished = []

        def failing(start, stop):
            if start > 0:
                raise ValueError("the second part")
            finished.append(start)

        with pytest.raises(ValueError, match="the second part"):
            in_parts(failing, seen.shape[0], helpers, threads=3)
        assert finished == [0]


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_the_dense_update_cut_in_parts_is_the_whole_update_bit_for_bit(name):
    dense, vocab, dim = 200_003, 50, 8
    rng = np.random.default_rng(3)
    start = rng.normal(size=dense + vocab * dim).astype(np.float32)
    rows = np.array([1, 7, 42])
    results = []
    with ThreadPoolExecutor(max_workers=1) as helpers:
        for pool in (None, helpers):
            params = start.copy()
            optimizer = make_optimizer(name, size=params.shape[0], dense_size=dense,
                                       embedding_offset=dense, embedding_dim=dim, lr=0.05,
                                       embedding_lr=0.1, dtype=np.float32)
            for step in range(3):
                grads = np.random.default_rng(step).normal(size=params.shape[0])
                grads = grads.astype(np.float32)
                optimizer.step(params, grads, rows, pool, threads=2)
                assert not grads[:dense].any() and not grads[dense:].reshape(-1, dim)[rows].any()
            results.append((params, optimizer.state))
    (params_1, state_1), (params_2, state_2) = results
    assert np.array_equal(params_1, params_2) and not np.array_equal(params_1, start)
    assert all(np.array_equal(state_1[key], state_2[key]) for key in state_1)
