"""The Dask cluster the engine's tests share, one per test module."""

import logging

import pytest


@pytest.fixture(scope="module")
def client():
    """A local cluster of two single-threaded in-process workers, without a dashboard."""
    distributed = pytest.importorskip("distributed")
    logging.getLogger("distributed").setLevel(logging.ERROR)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as c:
        yield c
