"""DIVA's constraint graph and the orders in which its coloring visits the nodes
(Milani, Huang, Chiang, EDBT 2021, §3.2-3.3).

BuildGraph makes a node per diversity constraint and an edge where two constraints'
target records overlap. The node orders of the coloring are DIVA-Basic (a random node),
MinChoice (fewest consistent candidate clusterings) and MaxFanOut (most uncolored
neighbours), collected in :data:`NEXT_NODES`.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence

import networkx as nx
import numpy as np

from ..._validation import check_option
from ...exceptions import InvalidParameterError
from ...instances.instance import Instance
from ...models.diversity import EncodedConstraint, encode_constraints
from ...models.requirements import Requirement

__all__ = [
    "NEXT_NODES",
    "constraint_graph",
    "encoded_graph",
    "next_basic",
    "next_maxfanout",
    "next_minchoice",
    "resolve_next_node",
]


def constraint_graph(instance: Instance, requirements: Sequence[Requirement]) -> nx.Graph:
    """DIVA's BuildGraph: a node per diversity constraint (its position among them), an
    edge where two constraints share target records.

    Nodes carry ``constraint`` (the requirement) and ``targets`` (|I_sigma|); edges carry
    ``overlap`` (|I_i ∩ I_j|).

    Examples
    --------
    >>> from fairanon.models.diversity import diva_sigma
    >>> g = constraint_graph(fa.load("diva_table1"), diva_sigma())
    >>> sorted(g.edges(data="overlap"))  # Example 3.3: {v1, v3} (t8, t10), {v2, v3} (t6)
    [(0, 2, 2), (1, 2, 1)]
    """
    return encoded_graph(encode_constraints(instance, requirements))


def encoded_graph(encoded: Sequence[EncodedConstraint]) -> nx.Graph:
    """:func:`constraint_graph` of constraints already encoded (by
    :func:`~fairanon.models.diversity.encode_constraints`)."""
    g = nx.Graph()
    for i, e in enumerate(encoded):
        g.add_node(i, constraint=e.requirement, targets=e.n_targets)
    if encoded and len(encoded[0].target):  # no records: no overlaps (and no first row)
        # Over the distinct rows of target memberships, weighted by their counts: a
        # small product instead of one over every record.
        targets = np.column_stack([e.target for e in encoded])
        packed = np.packbits(targets, axis=1)
        # The distinct rows by a sort over their bytes as keys: np.unique(axis=0) sorts
        # them as opaque records, 0.01-0.03 s on UCI Adult's 30,162 records (the
        # coloring's set-up, which no deadline cuts), 10 times what this takes.
        order = np.lexsort(packed.T[::-1])
        packed = packed[order]
        first = np.flatnonzero(np.r_[True, (packed[1:] != packed[:-1]).any(axis=1)])
        rows, counts = packed[first], np.diff(np.r_[first, len(packed)])
        patterns = np.unpackbits(rows, axis=1, count=len(encoded)).astype(np.int64)
        overlap = patterns.T @ (patterns * counts[:, None])
        for i, j in itertools.combinations(range(len(encoded)), 2):
            if overlap[i, j]:
                g.add_edge(i, j, overlap=int(overlap[i, j]))
    return g


def next_basic(graph: nx.Graph, colored: set, count_choices: Callable[[int], int], rng: np.random.Generator) -> int:
    """DIVA-Basic: a random uncolored node."""
    free = sorted(v for v in graph if v not in colored)
    return int(free[int(rng.integers(len(free)))])


def next_minchoice(graph: nx.Graph, colored: set, count_choices: Callable[[int], int], rng: np.random.Generator) -> int:
    """MinChoice: the uncolored node with the fewest consistent candidate clusterings
    (given the colors chosen so far); ties to the lowest index."""
    free = sorted(v for v in graph if v not in colored)
    return min(free, key=lambda v: (count_choices(v), v))


def next_maxfanout(graph: nx.Graph, colored: set, count_choices: Callable[[int], int], rng: np.random.Generator) -> int:
    """MaxFanOut: the uncolored node with the most uncolored neighbours; ties to the
    lowest index."""
    free = sorted(v for v in graph if v not in colored)
    return max(free, key=lambda v: (sum(1 for u in graph[v] if u not in colored), -v))


#: Node orders of DIVA's coloring by name. A strategy maps (graph, colored nodes, a
#: function counting a node's consistent candidates, rng) to the next node; any
#: callable with that signature, or a sequence of node indices (a fixed order), works too.
NEXT_NODES: dict[str, Callable] = {
    "basic": next_basic,
    "minchoice": next_minchoice,
    "maxfanout": next_maxfanout,
}


def resolve_next_node(next_node, n_nodes: int) -> tuple[Callable | list[int], str]:
    """The node order a ``next_node`` option names (a name of :data:`NEXT_NODES`, a
    callable, or a permutation of the `n_nodes` nodes) and how provenance names it."""
    if isinstance(next_node, str):
        check_option(next_node, "next_node", "diva", NEXT_NODES)
        return NEXT_NODES[next_node], next_node
    if callable(next_node):
        return next_node, getattr(next_node, "__name__", "custom")
    try:
        order = [int(v) for v in next_node]
    except (TypeError, ValueError):
        order = None
    if order is None or sorted(order) != list(range(n_nodes)):
        raise InvalidParameterError(
            f"The 'next_node' parameter of diva must be one of {sorted(NEXT_NODES)}, a callable, or an "
            f"order of the {n_nodes} diversity constraints (a permutation of 0..{n_nodes - 1}). "
            f"Got {next_node!r} instead."
        )
    return order, f"fixed {order}"
