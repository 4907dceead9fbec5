"""The evaluation classifier of Hajian et al. §7.1: CMAR-style prediction from the
class-holding patterns of a (possibly sanitized) pattern set.

As in the paper (docs/papers.md, HJ-6) there is no rule pruning, no confidence
threshold and no coverage test: every pattern holding a class item c gives a rule
``X -> c`` (X = the pattern without c; X = ∅ is dropped, it would match every record).
A record matched only by rules of one class gets that class; otherwise the class with
the largest weighted χ², ``Σ χ²·χ² / maxχ²`` (CMAR), wins; unmatched records and ties
get the training majority class. A negatively correlated rule weighs 0 (CMAR keeps only
positively correlated rules; χ² itself has no sign).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..exceptions import InvalidParameterError
from .mining import TransactionDB, canonical
from .patternset import PatternSet

__all__ = ["CMARClassifier", "chi2", "max_chi2"]


def chi2(x: int, s: int, xs: int, n: int) -> float:
    """Pearson's χ² of the 2x2 table of premise X (support x) and class c (support s),
    with xs = supp(X ∪ {c}) among n records; 0 when a margin is empty or full.

    >>> round(chi2(40, 50, 30, 100), 4)
    16.6667
    """
    den = x * s * (n - x) * (n - s)
    if den <= 0:
        return 0.0
    return n * (n * xs - x * s) ** 2 / den


def max_chi2(x: int, s: int, n: int) -> float:
    """The upper bound of χ² for margins x and s (paper eqs. 21-22); 0 when undefined.

    >>> round(max_chi2(40, 50, 100), 4)
    66.6667
    """
    if x <= 0 or s <= 0 or n - x <= 0 or n - s <= 0:
        return 0.0
    e = 1 / (x * s) + 1 / (x * (n - s)) + 1 / ((n - x) * s) + 1 / ((n - x) * (n - s))
    return (min(x, s) - x * s / n) ** 2 * n * e


@dataclass(frozen=True)
class _Rule:
    premise: frozenset
    label: str
    weight: float


class CMARClassifier:
    """Rules ``X -> c`` from the class-holding patterns of a pattern set [1]_ [2]_.

    Parameters
    ----------
    patterns : PatternSet or mapping of frozenset -> int
        The (sanitized) patterns; supports are the published ones.
    class_items : sequence of str
        Both class items, e.g. ``("credit=bad", "credit=good")``.
    n_train : int
        |D_train|: the paper keeps the original training size even after sanitization
        added virtual records (docs/papers.md, HJ-6).

    References
    ----------
    .. [1] W. Li, J. Han, J. Pei. CMAR: accurate and efficient classification based on
       multiple class-association rules. ICDM 2001.
    .. [2] S. Hajian et al. Discrimination- and privacy-aware patterns. DMKD 29(6), 2015.

    Examples
    --------
    >>> sup = {frozenset({"x"}): 40, frozenset({"c=1"}): 50, frozenset({"c=0"}): 50,
    ...        frozenset({"x", "c=1"}): 30, frozenset({"x", "c=0"}): 10}
    >>> clf = CMARClassifier(sup, ("c=0", "c=1"), 100)
    >>> clf.predict([{"x"}, {"z"}])
    ['c=1', 'c=0']
    """

    def __init__(self, patterns, class_items: Sequence[str], n_train: int):
        if len(class_items) != 2:
            raise InvalidParameterError(f"CMARClassifier needs the two class items. Got {class_items!r} instead.")
        if isinstance(patterns, PatternSet):
            supports = patterns.published()
            lookup = patterns.support
        elif isinstance(patterns, Mapping):
            supports = {frozenset(x): int(s) for x, s in patterns.items()}
            lookup = supports.__getitem__
        else:
            raise InvalidParameterError(
                f"The 'patterns' parameter of CMARClassifier must be a PatternSet or a mapping. Got {type(patterns).__name__} instead."
            )
        self.class_items = tuple(class_items)
        self.n_train = int(n_train)
        class_supp = {c: lookup(frozenset({c})) for c in self.class_items}
        self.default = max(self.class_items, key=lambda c: (class_supp[c], c == self.class_items[0]))
        rules = []
        for p in sorted(supports, key=canonical):
            labels = [c for c in self.class_items if c in p]
            if len(labels) != 1 or len(p) < 2:
                continue
            c = labels[0]
            premise = p - {c}
            x, xs = lookup(premise), supports[p]
            s = class_supp[c]
            top = max_chi2(x, s, self.n_train)
            value = chi2(x, s, xs, self.n_train)
            # CMAR weighs positively correlated rules only; χ² alone cannot tell the sign.
            positive = self.n_train * xs > x * s
            rules.append(_Rule(premise, c, value * value / top if top > 0 and positive else 0.0))
        self.rules = tuple(rules)

    def _match(self, db: TransactionDB) -> np.ndarray:
        out = np.zeros((len(self.rules), db.n_records), dtype=bool)
        for r, rule in enumerate(self.rules):
            if all(i in db.index for i in rule.premise):
                out[r] = db.mask(rule.premise)
        return out

    def predict(self, records) -> list:
        """Predicted class item of each record (a TransactionDB or item collections)."""
        db = records if isinstance(records, TransactionDB) else TransactionDB.from_transactions(records)
        if not self.rules:
            return [self.default] * db.n_records
        matched = self._match(db)
        labels = np.array([r.label for r in self.rules])
        weights = np.array([r.weight for r in self.rules])
        counts = np.vstack([matched[labels == c].sum(axis=0) for c in self.class_items])
        scores = np.vstack([weights[labels == c] @ matched[labels == c] for c in self.class_items])
        out = []
        for j in range(db.n_records):
            present = [i for i in range(2) if counts[i, j] > 0]
            if not present:
                out.append(self.default)
            elif len(present) == 1:
                out.append(self.class_items[present[0]])
            elif scores[0, j] == scores[1, j]:
                out.append(self.default)
            else:
                out.append(self.class_items[int(np.argmax(scores[:, j]))])
        return out

    def accuracy(self, db: TransactionDB) -> float:
        """Fraction of the records of `db` whose class item is predicted (records without
        a class item count as wrong)."""
        predicted = np.array(self.predict(db))
        truth = np.full(db.n_records, None, dtype=object)
        for c in self.class_items:
            if c in db.index:
                truth[db.mask({c})] = c
        return float((predicted == truth).mean()) if db.n_records else 0.0
