"""A release held by a Dask DataFrame."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..exceptions import InfeasibleError
from ..release import Release, Status, _jsonable

__all__ = ["DistributedRelease", "as_dask_release", "parquet_schema"]


def parquet_schema(columns) -> dict:
    """Parquet types of released columns: dictionaries of text (labels differ from one
    partition to another)."""
    import pyarrow as pa

    return {c: pa.dictionary(pa.int32(), pa.string()) for c in columns}

_GROUP = "__group"
_TIMED_OUT = "__timed_out"


@dataclass(frozen=True, eq=False)
class DistributedRelease:
    """The released table of a distributed method, as a Dask DataFrame indexed by
    record id (released cells as text), with the method's class of each record kept
    aside (the verifier never reads it).

    Attributes
    ----------
    table : dask.dataframe.DataFrame
        The released columns, ``__group``, the method's class key of each record, and
        ``__timed_out``, whether the task that finished its class ran out of time.
    status : Status
    reason : str, optional
    provenance : mapping
    columns : list of str
        The released columns.
    """

    table: Any
    status: Status = Status.FEASIBLE
    reason: str | None = None
    provenance: Mapping[str, Any] = field(default_factory=dict)
    columns: list = field(default_factory=list)

    @property
    def method(self) -> str:
        return str(self.provenance.get("method", "?"))

    def released_table(self):
        """The released columns (a Dask DataFrame), refusing an INFEASIBLE/UNKNOWN release."""
        if self.status in (Status.INFEASIBLE, Status.UNKNOWN):
            raise InfeasibleError(f"This release is {self.status}: {self.reason or 'no reason given'}.")
        return self.table[self.columns]

    def to_parquet(self, path: str, *, compute: bool = True, check: bool = True, **options):
        """Write the released table as a Parquet directory (record ids in the index);
        ``check=False`` writes the table of an INFEASIBLE release too.

        Computed (the default): the release with its final provenance
        (:meth:`timed_out` read in the same pass). ``compute=False``: the lazy write,
        to compute together with :meth:`timed_out`.
        """
        import dask

        table = self.released_table() if check else self.table[self.columns]
        write = table.to_parquet(path, write_index=True, compute=False, schema=parquet_schema(self.columns),
                                 **options)
        if not compute:
            return write
        _, reached = dask.compute(write, self.timed_out())
        return self.finished(reached)

    def timed_out(self):
        """Whether a task that finished classes ran out of time (a lazy Dask scalar)."""
        return self.table[_TIMED_OUT].any()

    def finished(self, timed_out: bool) -> DistributedRelease:
        """The release with ``provenance["time_limit_reached"]`` once its tasks have run
        (`timed_out`: the computed :meth:`timed_out`)."""
        reached = bool(self.provenance.get("time_limit_reached", False)) or bool(timed_out)
        return dataclasses.replace(self, provenance={**self.provenance, "time_limit_reached": reached})

    def compute(self, order=None) -> Release:
        """The release on this machine: a :class:`~fairanon.release.Release` whose group
        ids number the classes in depth-first order (as the single-machine engine);
        rows in the order of the record ids `order` when given."""
        frame = self.table.compute()
        if order is not None:
            frame = frame.loc[order]
        keys = frame.pop(_GROUP).to_numpy()
        _, groups = np.unique(keys, return_inverse=True)
        provenance = self.finished(frame[_TIMED_OUT].any()).provenance
        return Release(frame[self.columns], groups=groups.reshape(-1), status=self.status,
                       reason=self.reason, provenance=provenance)

    def summary(self) -> dict:
        return {
            "method": self.method,
            "status": str(self.status),
            "reason": self.reason,
            "provenance": {k: _jsonable(v) for k, v in self.provenance.items()},
        }

    def __repr__(self) -> str:
        return f"DistributedRelease(method={self.method!r}, status={self.status}, partitions={self.table.npartitions})"


def as_dask_release(release, *, partitions: int | None = None):
    """What the distributed verifier reads: a DistributedRelease, a Dask DataFrame or a
    path as they are; a :class:`~fairanon.release.Release`'s table split into partitions."""
    if isinstance(release, Release):
        import dask.dataframe as dd

        from .instance import dask_ids, persist

        n = partitions or max(2, -(-release.n_rows // 1_000_000))
        table = dask_ids(release.table, "the release")
        return persist(dd.from_pandas(table, npartitions=n, sort=False))
    return release
