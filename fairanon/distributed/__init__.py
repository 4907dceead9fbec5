"""Scale-out on Dask: distributed Mondrian and the distributed verifier.

Install with ``pip install 'fairanon[dask]'``. ``fa.anonymize``, ``fa.verify`` and
``fa.risk`` take a Dask DataFrame (or a Parquet path) with ``engine="dask"``; the
scheduler is the current ``distributed.Client`` (or one of :func:`local_client`, on
this machine).

Importing the package keeps the scheduler's routine shuffle messages, which Dask logs
as warnings, from the terminal (:func:`~fairanon.distributed.cluster.quiet_dask_logs`).
"""

from .cluster import local_client, quiet_dask_logs, trim_workers, worker_settings
from .instance import DaskInstance, as_dask_instance, dask_instance, read_table
from .mondrian import DISTRIBUTED_METHODS, mondrian_dask
from .release import DistributedRelease, as_dask_release
from .verify import risk_dask, verify_dask

__all__ = [
    "DISTRIBUTED_METHODS",
    "DaskInstance",
    "DistributedRelease",
    "as_dask_instance",
    "as_dask_release",
    "dask_instance",
    "local_client",
    "mondrian_dask",
    "read_table",
    "risk_dask",
    "trim_workers",
    "verify_dask",
    "worker_settings",
]

quiet_dask_logs()
