"""The Dask cluster the engine's tests share, one per test module."""

import logging

import numpy as np
import pandas as pd
import pytest

import fairanon as fa


@pytest.fixture(scope="module")
def client():
    """A local cluster of two single-threaded in-process workers, without a dashboard."""
    distributed = pytest.importorskip("distributed")
    logging.getLogger("distributed").setLevel(logging.ERROR)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as c:
        yield c


@pytest.fixture
def synchronous():
    """Dask's tasks in this process, one after the other: the figures do not depend on
    where the tasks run, and the tests stay fast (no cluster to start)."""
    dask = pytest.importorskip("dask")
    with dask.config.set(scheduler="synchronous"):
        yield


@pytest.fixture
def hand_release():
    """A table of 8 records and a release of it whose classes are (north, [20-29]) of 3
    records, (south, [20-29]) of 2, (s3, 35) of 1, and the suppressed block (*, *) of 2."""
    city = fa.Hierarchy.from_mapping({"*": {"north": ["n1", "n2"], "south": ["s1", "s2", "s3"]}})
    original = pd.DataFrame({"city": ["n1", "n2", "n1", "s1", "s2", "s3", "n2", "s1"],
                             "age": [21, 22, 23, 24, 27, 35, 29, 30],
                             "disease": ["flu", "flu", "cold", "flu", "cold", "hiv", "cold", "flu"]})
    schema = fa.Schema([fa.Attribute("city", hierarchy=city), fa.Attribute("age", kind="numeric"),
                        fa.Attribute("disease", role="sensitive")])
    inst = fa.Instance(original, schema, name="hand")
    table = pd.DataFrame({"city": ["north", "north", "north", "south", "south", "s3", "*", "*"],
                          "age": ["[20-29]"] * 5 + ["35", "*", "*"], "disease": original["disease"]})
    return inst, fa.Release(table, groups=np.array([0, 0, 0, 1, 1, 2, 3, 3]), provenance={"method": "hand"})
