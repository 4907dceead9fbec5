"""The memory :func:`~.method.fulldomain` needs, estimated before the lattice is built,
and the refusal when that is above the memory limit (:mod:`fairanon._memory`).

The need grows with the records (their coded values, the base frequency set and the
frequency sets rolled up from it and cached) and, when the open nodes are held as
arrays over the whole lattice (:class:`~.search.LatticeFrontier`), with the lattice's
nodes. The CP-SAT master used for larger lattices grows with its steps and is not
counted.
"""

from __future__ import annotations

from ..._memory import check_memory
from ...instances.instance import Instance
from .lattice import ladders

__all__ = ["NODE_BYTES_PER_ATTRIBUTE", "NODE_BYTES", "ROW_BYTES", "check_fulldomain_memory", "fulldomain_memory"]

#: Bytes per record. Measured with tracemalloc (peak over the whole method, release
#: and check included, k = 5, 2 % suppression): 1.43 kB a record on Adult (30,162
#: records, 7 quasi-identifiers); German credit's 3.7 kB a record (1,000 records) is
#: mostly fixed costs, within this and the lattice's term of a 1 MB table.
ROW_BYTES = 2000
#: Bytes per lattice node of the arrays search: its level on each attribute (8 bytes
#: each) and its bounds, flags and place in the frontier (the method's note: about 100
#: bytes a node on a 10-attribute lattice).
NODE_BYTES_PER_ATTRIBUTE = 8
NODE_BYTES = 32


def fulldomain_memory(instance: Instance, arrays_up_to: int, search: str = "auto") -> int:
    """Bytes :func:`~.method.fulldomain` needs on `instance`: :data:`ROW_BYTES` per
    record, plus, when the open nodes are held as arrays (``search="lattice"``, or
    "auto" with at most `arrays_up_to` nodes), each node's levels and bounds.

    Ruggieri's loan table: 17 records, two attributes of one level (4 nodes), so
    17 × 2000 + 4 × (2 × 8 + 32):

    >>> fulldomain_memory(fa.load("ruggieri_loan"), 2**20), fulldomain_memory(fa.load("ruggieri_loan"), 2)
    (34192, 34000)
    """
    lads = ladders(instance)
    nodes = 1
    for lad in lads:
        nodes *= lad.height + 1
    need = ROW_BYTES * instance.n_rows
    if search == "lattice" or (search == "auto" and nodes <= arrays_up_to):
        need += nodes * (NODE_BYTES_PER_ATTRIBUTE * len(lads) + NODE_BYTES)
    return need


def check_fulldomain_memory(instance: Instance, arrays_up_to: int, search: str, memory_limit=None) -> None:
    """Raise MemoryLimitError when :func:`fulldomain_memory` is above the limit."""
    check_memory(
        fulldomain_memory(instance, arrays_up_to, search),
        f"fulldomain on the {instance.n_rows:,} records of {instance.name!r}",
        "use fewer quasi-identifiers or shallower hierarchies, search='master' for a large lattice, "
        "or Mondrian (method='mondrian')",
        memory_limit,
        caller="fulldomain",
    )
