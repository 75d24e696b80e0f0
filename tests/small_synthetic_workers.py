"""A Dask worker preload (``distributed.worker.preload``) for the tests that
run sweeps on worker processes: in each worker it is loaded into, the
synthetic treebank is made SIZES sentences whatever a run asks, as
``conftest.synthetic_of_size`` makes it in the tests' own process.  A worker
builds its run's data itself, so the smaller treebank must be made there:
its default size (3000/500/500) adds time and nothing to what a sweep test
checks.  Importing this module changes nothing; Dask's ``dask_setup`` does."""

SIZES = (400, 120, 120)


def dask_setup(worker) -> None:
    """Called by Dask as the worker starts (once per worker process)."""
    import npcomp.data.datasets.synthetic as synthetic

    full_size = getattr(synthetic, "_full_size_synthetic_splits", synthetic.synthetic_splits)
    synthetic._full_size_synthetic_splits = full_size

    def splits(seed=0, sizes=None):
        return full_size(seed=seed, sizes=SIZES)

    synthetic.synthetic_splits = splits
