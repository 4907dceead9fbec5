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
- ``scatter``: random classes anywhere (no seed), to move records between far classes;
- ``split``: a class of at least 2k records (it could be cut in two), drawn by its total
  cost;
- ``record``: a record drawn by what its class costs it, and the classes nearest to its
  own values rather than to its class's labels, so that the records on both sides of a
  class border are freed together and may cross it;
- ``subtree``: a class and one attribute it generalizes, then the classes whose label
  on that attribute lies inside the seed's (the subtree of a hierarchy node, or a
  range), nearest first: the subtree is re-cut;
- ``suppressed``: a class releasing ``*`` on some attribute, drawn by its stars, and
  the classes nearest to any of its records, which may take them in (the suppressed
  block re-anonymized).

All but ``scatter`` take whole classes in order of distance, so the freed classes are
adjacent and the exact re-solve may merge them, split them or redraw their borders.
"""

from __future__ import annotations

import numpy as np

from .state import Incumbent
from .subproblem import Neighbourhood

__all__ = ["STRATEGIES", "ClassIndex"]

#: The ways of choosing a neighbourhood.
STRATEGIES = ("cost", "random", "group", "small", "scatter", "split", "record", "subtree", "suppressed")
#: Records of a suppressed class whose nearest classes a ``suppressed`` neighbourhood
#: looks up (a sample of a larger class).
SUPPRESSED_SAMPLE = 32


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
        self.large = np.flatnonzero(self.sizes >= 2 * k)
        self.stars = np.zeros(len(vec))
        for a, reg in enumerate(inc.registries):
            self.stars += np.array(reg.star, dtype=float)[vec[:, a + 1]]
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
        return self._distance(self.vec[seed])

    def _distance(self, vector: np.ndarray) -> np.ndarray:
        """Per class, the NCP per record of a class holding it and a class released as
        `vector` (protected code, label ids)."""
        out = np.zeros(len(self.vectors))
        for a, reg in enumerate(self.inc.registries):
            used, inverse = self.labels[a]
            out += reg.join_costs(int(vector[a + 1]), used)[inverse]
        out += (self.protected != vector[0]) * (len(self.labels) + 1.0)
        return out

    def _own(self, row: int) -> np.ndarray:
        """A record's own vector: its protected code and the label of each of its values."""
        inc = self.inc
        return np.array(
            [inc.protected[row]] + [reg.own[reg.row_value[row]] for reg in inc.registries],
            dtype=np.int64,
        )

    def _weighted(self, pool: np.ndarray, weights: np.ndarray, rng) -> int | None:
        """A class of `pool` drawn with probability proportional to `weights`."""
        if not len(pool):
            return None
        weights = weights + 1e-9
        return int(pool[int(rng.choice(len(pool), p=weights / weights.sum()))])

    def seed(self, strategy: str, rng: np.random.Generator) -> int | None:
        n = len(self.vectors)
        if strategy in ("cost", "record"):
            return self._weighted(np.arange(n), self.cost * self.sizes, rng)
        if strategy == "group":
            groups = np.unique(self.protected)
            group = groups[int(rng.integers(len(groups)))]
            members = np.flatnonzero(self.protected == group)
            return int(members[int(rng.integers(len(members)))])
        if strategy == "small":
            pool = np.union1d(self.small, self.tight)
            if len(pool):
                return int(pool[int(rng.integers(len(pool)))])
        if strategy == "split":
            found = self._weighted(self.large, (self.cost * self.sizes)[self.large], rng)
            if found is not None:
                return found
        if strategy == "subtree":
            pool = np.flatnonzero(self.cost > 0)
            found = self._weighted(pool, (self.cost * self.sizes)[pool], rng)
            if found is not None:
                return found
        if strategy == "suppressed":
            pool = np.flatnonzero(self.stars > 0)
            found = self._weighted(pool, (self.stars * self.sizes)[pool], rng)
            if found is not None:
                return found
        if strategy == "scatter":
            return None
        return int(rng.integers(n))

    def _order(self, strategy: str, seed: int, rng: np.random.Generator) -> np.ndarray:
        """The classes in the order a neighbourhood seeded at `seed` takes them."""
        if strategy == "record":
            rows = self.inc.classes[self.vectors[seed]]
            dist = self._distance(self._own(int(rows[int(rng.integers(len(rows)))])))
        elif strategy == "suppressed":
            rows = self.inc.classes[self.vectors[seed]]
            if len(rows) > SUPPRESSED_SAMPLE:
                rows = np.sort(rng.choice(rows, SUPPRESSED_SAMPLE, replace=False))
            dist = np.min([self._distance(self._own(int(r))) for r in rows.tolist()], axis=0)
        else:
            dist = self.distance(seed)
        if strategy == "subtree":
            generalized = [
                a
                for a, reg in enumerate(self.inc.registries)
                if reg.masks[int(self.vec[seed, a + 1])].sum() > 1
            ]
            if generalized:
                a = generalized[int(rng.integers(len(generalized)))]
                reg = self.inc.registries[a]
                outer = reg.masks[int(self.vec[seed, a + 1])]
                used, inverse = self.labels[a]
                inside = np.array([not (reg.masks[j] & ~outer).any() for j in used.tolist()])
                # Classes inside the subtree come first, nearest first.
                dist = dist + (~inside[inverse]) * (2 * len(self.labels) + 2.0)
        order = np.lexsort((np.arange(len(dist)), dist))
        return np.r_[seed, order[order != seed]]

    def neighbourhood(
        self, strategy: str, rng: np.random.Generator, records: int, around: int
    ) -> Neighbourhood:
        """A neighbourhood of about `records` records (whole classes) and up to `around`
        classes they may join."""
        seed = self.seed(strategy, rng)
        if seed is None:
            order = rng.permutation(len(self.vectors))
        else:
            order = self._order(strategy, seed, rng)
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
            # Only the values of the records (not labels x every value: a huge table on
            # an attribute of many values).
            cols = keys[:, a + 1]
            masks = np.array([reg.masks[j][cols] for j in used.tolist()], dtype=bool).reshape(
                len(used), len(cols)
            )
            ok &= masks[inverse.reshape(-1)]
        return classes[ok.any(axis=1)]

    def whole(self) -> Neighbourhood:
        rows = np.arange(len(self.inc.labels))
        return Neighbourhood(list(self.vectors), rows, [], "whole")
