"""Scale-out on Dask: distributed Mondrian and the distributed verifier.

Install with ``pip install 'fairanon[dask]'``. ``fa.anonymize`` and ``fa.verify`` take a
Dask DataFrame (or a Parquet path) with ``engine="dask"``; the scheduler is the
current ``distributed.Client`` (or a :func:`local_client` started here).
"""

from .instance import DaskInstance, as_dask_instance, dask_instance, read_table
from .mondrian import DISTRIBUTED_METHODS, mondrian_dask
from .release import DistributedRelease, as_dask_release
from .verify import verify_dask

__all__ = [
    "DISTRIBUTED_METHODS",
    "DaskInstance",
    "DistributedRelease",
    "as_dask_instance",
    "as_dask_release",
    "dask_instance",
    "mondrian_dask",
    "read_table",
    "verify_dask",
]
