"""The memory :func:`~.method.fulldomain` and :func:`~.local.lattice_local` need,
estimated before the lattice is built, and the refusal when that is above the memory
limit (:mod:`fairanon._memory`).

The need grows with the records (their coded values, the base frequency set and the
frequency sets rolled up from it and cached) and, when the open nodes are held as
arrays over the whole lattice (:class:`~.search.LatticeFrontier`), with the lattice's
nodes. The CP-SAT master used for larger lattices grows with its steps: it is checked
before each of its solves (:func:`master_memory`), as its model then stands.
"""

from __future__ import annotations

from ..._memory import check_memory
from ...instances.instance import Instance
from .lattice import heights

__all__ = [
    "MASTER_BYTES",
    "MASTER_CONSTRAINT_BYTES",
    "MASTER_LITERAL_BYTES",
    "NODE_BYTES_PER_ATTRIBUTE",
    "NODE_BYTES_PER_LEVEL",
    "NODE_BYTES",
    "ROW_BYTES",
    "LOCAL_BYTES",
    "check_fulldomain_memory",
    "check_lattice_local_memory",
    "fulldomain_memory",
    "lattice_local_memory",
    "master_memory",
]

#: Bytes per record. Measured with tracemalloc (peak over the whole method, release
#: and check included, k = 5, 2 % suppression): 1.43 kB a record on Adult (30,162
#: records, 7 quasi-identifiers); German credit's 3.7 kB a record (1,000 records) is
#: mostly fixed costs, within this and the lattice's term of a 1 MB table.
ROW_BYTES = 2000
#: Bytes per lattice node of the arrays search (:class:`~.search.LatticeFrontier`), at
#: its peak: a suppression bound over the whole lattice. Per attribute: the node's level
#: (2 bytes, twice: the search's copy and the frontier's), its position in the bounds
#: laid end to end (2 bytes) and, while the bound is read, the gathered positions (2)
#: and bounds (8): 16 bytes. Per level of an attribute, the cached masks of the nodes
#: below it and (discernibility) above it: a byte each. Per node: its cost without
#: suppression and lower bound (8 each), open and excluded flags (1 each) and the
#: bound's node indices (8): 26 bytes, 32 with room. Measured with tracemalloc (the
#: frontier built, every mask below cached, a bound over the whole lattice, then a
#: pop): 206 bytes a node on 9 attributes of 4 levels (262,144 nodes; the estimate
#: 248), 350 on 18 of 2 levels (392). Costs of 2^62 or more (object arrays) take more.
NODE_BYTES_PER_ATTRIBUTE = 16
NODE_BYTES_PER_LEVEL = 2
NODE_BYTES = 32
#: Bytes lattice-local needs beyond fulldomain's search: its rounds' node checks
#: (each base class's loss at every level of every attribute, a float each), the
#: lowering of classes and the verification of a local recoding. Measured with
#: tracemalloc (peak over the whole method, k = 5): 3.5 MB on 300 records of German
#: credit, 5.1 MB on its 1,000 (3.6 MB for k = 20), 39 MB on Adult's 30,162 (1.3 kB a
#: record, within fulldomain's :data:`ROW_BYTES`), 2.3 MB on Ruggieri's 17: the
#: estimate is 1.2 to 1.8 times these.
LOCAL_BYTES = 4_000_000
#: Bytes of a solve of the CP-SAT master (one worker): a fixed part (the solver's
#: own structures whatever the model, 11 MB for the first solve of a process, 2 MB
#: for later ones), per constraint and per literal of a constraint (the model held
#: in Python's builder, copied into the solver and presolved there: about 130 bytes a
#: literal in all). Measured as the growth of peak resident memory over the build and
#: one solve of a master of random cuts over German credit's lattice in a fresh
#: process: 11 MB for 290 constraints of 6,053 literals, 17 MB for 2,690 of 60,074,
#: 34 MB for 8,023 of 179,897; the estimate is 1.2 to 1.35 times these.
MASTER_BYTES = 12_000_000
MASTER_CONSTRAINT_BYTES = 500
MASTER_LITERAL_BYTES = 160


def fulldomain_memory(instance: Instance, arrays_up_to: int, search: str = "auto") -> int:
    """Bytes :func:`~.method.fulldomain` needs on `instance`: :data:`ROW_BYTES` per
    record, plus, when the open nodes are held as arrays (``search="lattice"``, or
    "auto" with at most `arrays_up_to` nodes), each node's levels, masks and bounds.

    Ruggieri's loan table: 17 records, two attributes of two levels each (4 nodes), so
    17 × 2000 + 4 × (2 × 16 + 4 × 2 + 32):

    >>> fulldomain_memory(fa.load("ruggieri_loan"), 2**20), fulldomain_memory(fa.load("ruggieri_loan"), 2)
    (34288, 34000)
    """
    tops = heights(instance)  # the lattice's shape from the schema, no pass over the rows
    nodes = 1
    for h in tops:
        nodes *= h + 1
    need = ROW_BYTES * instance.n_rows
    if search == "lattice" or (search == "auto" and nodes <= arrays_up_to):
        levels = sum(h + 1 for h in tops)
        need += nodes * (
            NODE_BYTES_PER_ATTRIBUTE * len(tops) + NODE_BYTES_PER_LEVEL * levels + NODE_BYTES
        )
    return need


def lattice_local_memory(instance: Instance, arrays_up_to: int) -> int:
    """Bytes :func:`~.local.lattice_local` needs on `instance`: :data:`LOCAL_BYTES` and
    what :func:`fulldomain_memory` counts for its search (the records, and the
    lattice's nodes when held as arrays: at most `arrays_up_to` of them). Its rounds
    search the records left, fewer each round, on the same lattice, one after the
    other, so the first search bounds them; the CP-SAT master of a larger lattice
    checks itself as it grows.

    >>> lattice_local_memory(fa.load("ruggieri_loan"), 2**20)
    4034288
    """
    return LOCAL_BYTES + fulldomain_memory(instance, arrays_up_to, "auto")


def check_lattice_local_memory(instance: Instance, arrays_up_to: int, memory_limit=None) -> None:
    """Raise MemoryLimitError when :func:`lattice_local_memory` is above the limit."""
    check_memory(
        lattice_local_memory(instance, arrays_up_to),
        f"lattice-local on the {instance.n_rows:,} records of {instance.name!r}",
        "use fewer quasi-identifiers or shallower hierarchies, or Mondrian (method='mondrian')",
        memory_limit,
        caller="lattice_local",
    )


def master_memory(constraints: int, literals: int) -> int:
    """Bytes a solve of the CP-SAT master (:class:`~.master.MasterFrontier`) takes with
    `constraints` constraints holding `literals` literals in all (the one-hot rows of
    the level choices and the objective, then the search's cuts: a closed node's
    clause, a condemned down-set's clause, a bound's terms and its guards).

    >>> master_memory(0, 0) == MASTER_BYTES
    True
    """
    return MASTER_BYTES + MASTER_CONSTRAINT_BYTES * constraints + MASTER_LITERAL_BYTES * literals


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
