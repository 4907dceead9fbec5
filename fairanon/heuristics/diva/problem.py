"""The problem DIVA works on (Milani, Huang, Chiang, EDBT 2021), coded once: the
quasi-identifiers as numbers; per diversity constraint its target records (I_sigma),
the records that agree with its target values on its suppressible attributes (G_sigma)
and its bounds; and the cluster arithmetic every step shares (Suppress's stars, the
target records a cluster makes count).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ...instances.instance import Instance
from ...models.diversity import EncodedConstraint

__all__ = ["Problem"]


class Problem:
    """Coded instance and constraints shared by the search, the pool and the rest."""

    def __init__(self, instance: Instance, encoded: list[EncodedConstraint], k: int):
        self.instance = instance
        self.k = k
        self.n = instance.n_rows
        self.encoded = encoded
        self.gen = list(instance.schema.generalizable)
        self.codes = (
            np.column_stack([instance.codes(a).astype(float) for a in self.gen])
            if self.gen else np.zeros((self.n, 0))
        )
        self.cardinality = np.array([len(np.unique(self.codes[:, j])) for j in range(len(self.gen))])
        protected = instance.schema.protected
        self.prot = instance.codes(protected).astype(np.int64) if protected else np.zeros(self.n, dtype=np.int64)
        s = len(encoded)
        self.I = np.column_stack([e.target for e in encoded]) if s else np.zeros((self.n, 0), dtype=bool)
        self.G = np.column_stack([e.match for e in encoded]) if s else np.zeros((self.n, 0), dtype=bool)
        self.lower = np.array([e.lower for e in encoded], dtype=np.int64)
        self.upper = np.array([e.upper for e in encoded], dtype=np.int64)
        self.attr_index = {a: j for j, a in enumerate(self.gen)}
        self.targets = [np.flatnonzero(e.target) for e in encoded]

    def label(self, i: int) -> str:
        return repr(self.encoded[i].requirement)

    # Clusters as a flat array of positions and the start of each cluster.
    @staticmethod
    def flatten(clusters: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        sizes = np.array([len(c) for c in clusters], dtype=np.int64)
        flat = np.concatenate(clusters) if clusters else np.zeros(0, dtype=np.int64)
        starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]) if len(sizes) else sizes
        return flat.astype(np.int64), starts, sizes

    def stars(self, flat: np.ndarray, starts: np.ndarray, sizes: np.ndarray) -> np.ndarray:
        """Suppressed cells of each cluster (Suppress: every attribute its records disagree on)."""
        if not len(sizes):
            return sizes
        sub = self.codes[flat]
        differ = np.minimum.reduceat(sub, starts, axis=0) != np.maximum.reduceat(sub, starts, axis=0)
        return differ.sum(axis=1) * sizes

    def contributions(self, flat: np.ndarray, starts: np.ndarray) -> np.ndarray:
        """(clusters x constraints): target records each cluster makes count."""
        if not len(starts) or not self.I.shape[1]:
            return np.zeros((len(starts), self.I.shape[1]), dtype=np.int64)
        inside = np.minimum.reduceat(self.G[flat].astype(np.int8), starts, axis=0)
        hits = np.add.reduceat(self.I[flat].astype(np.int64), starts, axis=0)
        return inside * hits
