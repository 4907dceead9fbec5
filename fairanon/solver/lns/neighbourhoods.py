"""Which classes the large-neighbourhood search frees next.

The distance from a seed class to another is what a record of a class holding both
would lose: per attribute, the NCP of the lowest hierarchy node above both labels, or of
the range spanning both (by rank; numeric attributes by value); classes of another
protected value are farther than any of the same one (they can never share a class). A
neighbourhood is a seed class and its nearest classes up to a number of records; of the
next nearest, those whose vector covers some of its records are offered as classes the
freed records may join.

Seeds, one strategy per move (chosen by adaptive weights, Ropke and Pisinger's ALNS):

- ``cost``: a class drawn with probability proportional to its cost per record;
- ``random``: any class;
- ``group``: a class of a protected value drawn first (classes of one protected group);
- ``small``: a class with fewer than 2k records (k-anonymity is tight there), or one
  holding target records of a diversity constraint at its bound;
- ``scatter``: random classes anywhere (no seed), to move records between far classes.
"""

from __future__ import annotations

import numpy as np

from .state import Incumbent
from .subproblem import Neighbourhood

__all__ = ["STRATEGIES", "ClassIndex"]

#: The ways of choosing a neighbourhood.
STRATEGIES = ("cost", "random", "group", "small", "scatter")


class ClassIndex:
    """The current classes as boxes, for choosing neighbourhoods."""

    def __init__(self, inc: Incumbent, k: int):
        self.inc = inc
        self.vectors = list(inc.classes)
        vec = np.array(self.vectors, dtype=np.int64).reshape(len(self.vectors), -1)
        self.vec = vec
        self.protected = vec[:, 0]
        self.labels = []
        for a in range(vec.shape[1] - 1):
            used, inverse = np.unique(vec[:, a + 1], return_inverse=True)
            self.labels.append((used, inverse.reshape(-1)))
        d = vec.shape[1] - 1
        self.lo = np.zeros((len(vec), d))
        self.hi = np.zeros((len(vec), d))
        proxy = np.zeros(len(vec))
        for a, reg in enumerate(inc.registries):
            pos = np.array(reg.position, dtype=float).reshape(-1, 2)
            self.lo[:, a] = pos[vec[:, a + 1], 0]
            self.hi[:, a] = pos[vec[:, a + 1], 1]
            if inc.objective in ("stars", "generalized"):
                cost = np.array(
                    reg.star if inc.objective == "stars" else [j >= reg.m for j in range(len(reg))],
                    dtype=float,
                )
            else:
                cost = np.array([float(c) for c in reg.ncp])
            proxy += cost[vec[:, a + 1]]
        self.sizes = np.array([len(inc.classes[v]) for v in self.vectors], dtype=np.int64)
        self.cost = proxy
        self.small = np.flatnonzero(self.sizes < 2 * k)
        self.tight = self._tight()

    def _tight(self) -> np.ndarray:
        """Classes holding target records of a diversity constraint at a bound."""
        inc = self.inc
        marked = np.zeros(len(inc.labels), dtype=bool)
        for i, req in inc.diversity.items():
            if inc.shown[i] in (req.lower, req.upper):
                marked |= inc._matches[i]
        if not marked.any():
            return np.zeros(0, dtype=np.int64)
        return np.array(
            [c for c, v in enumerate(self.vectors) if marked[self.inc.classes[v]].any()],
            dtype=np.int64,
        )

    def distance(self, seed: int) -> np.ndarray:
        """Per class, the NCP per record of a class holding it and the seed class."""
        out = np.zeros(len(self.vectors))
        for a, reg in enumerate(self.inc.registries):
            used, inverse = self.labels[a]
            out += reg.join_costs(int(self.vec[seed, a + 1]), used)[inverse]
        out += (self.protected != self.protected[seed]) * (len(self.labels) + 1.0)
        return out

    def seed(self, strategy: str, rng: np.random.Generator) -> int | None:
        n = len(self.vectors)
        if strategy == "cost":
            weights = self.cost * self.sizes + 1e-9
            return int(rng.choice(n, p=weights / weights.sum()))
        if strategy == "group":
            groups = np.unique(self.protected)
            group = groups[int(rng.integers(len(groups)))]
            members = np.flatnonzero(self.protected == group)
            return int(members[int(rng.integers(len(members)))])
        if strategy == "small":
            pool = np.union1d(self.small, self.tight)
            if len(pool):
                return int(pool[int(rng.integers(len(pool)))])
        if strategy == "scatter":
            return None
        return int(rng.integers(n))

    def neighbourhood(
        self, strategy: str, rng: np.random.Generator, records: int, around: int
    ) -> Neighbourhood:
        """A neighbourhood of about `records` records (whole classes) and up to `around`
        classes they may join."""
        seed = self.seed(strategy, rng)
        if seed is None:
            order = rng.permutation(len(self.vectors))
        else:
            dist = self.distance(seed)
            order = np.lexsort((np.arange(len(dist)), dist))
            order = np.r_[seed, order[order != seed]]
        total = np.cumsum(self.sizes[order])
        cut = int(np.searchsorted(total, records)) + 1
        chosen = order[:cut]
        rows = np.sort(np.concatenate([self.inc.classes[self.vectors[c]] for c in chosen]))
        near = self._covering(order[cut : cut + 20 * around], rows)[:around]
        return Neighbourhood(
            [self.vectors[c] for c in chosen.tolist()],
            rows,
            [self.vectors[c] for c in near.tolist()],
            strategy,
        )

    def _covering(self, classes: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """The classes (in the order given) whose vector covers some record of `rows`:
        those the records may join."""
        if not len(classes):
            return classes
        inc = self.inc
        prot = inc.protected[rows]
        values = np.column_stack([reg.row_value[rows] for reg in inc.registries])
        keys = np.unique(np.column_stack([prot, values]), axis=0)
        ok = self.protected[classes][:, None] == keys[None, :, 0]
        for a, reg in enumerate(inc.registries):
            labels = self.vec[classes, a + 1]
            used, inverse = np.unique(labels, return_inverse=True)
            masks = np.array([reg.masks[j] for j in used.tolist()], dtype=bool).reshape(
                len(used), reg.m
            )
            ok &= masks[inverse.reshape(-1)][:, keys[:, a + 1]]
        return classes[ok.any(axis=1)]

    def whole(self) -> Neighbourhood:
        rows = np.arange(len(self.inc.labels))
        return Neighbourhood(list(self.vectors), rows, [], "whole")
