"""Pattern sets: itemsets with supports, the roles of their items, and the ledger of
virtual transactions that every sanitization appends.

"Add Δ to the support of itemset T and of all its subsets" (Hajian et al., Alg. 2
lines 15-18 and the privacy blocking of §3.2.1) is the same as appending Δ virtual
transactions equal to T (docs/papers.md, Hajian et al.). A :class:`PatternSet` therefore keeps the base
supports (mined from D, or noisy) untouched and a ledger of ``(T, Δ)`` entries; every
published support is ``base(X) + Σ_{(T, Δ), X ⊆ T} Δ``. Published supports are thus
realizable by a database (D plus the virtual records), mutually consistent, and defined
for itemsets outside the set too (clift's comparison group, the d-instance term).
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Protocol

from ..exceptions import InvalidParameterError
from .mining import TransactionDB, canonical, min_count, mine

__all__ = ["PatternSet", "Roles", "SupportSource", "Workspace", "attribute_of", "split_pattern"]


class SupportSource(Protocol):
    """Anything that answers the support of an arbitrary itemset (a database, noisy bins)."""

    def support(self, itemset: Iterable[str]) -> int: ...


def attribute_of(item: str) -> str:
    """The attribute of an ``attribute=value`` item (the whole label when it has no ``=``).

    >>> attribute_of("sex=Female"), attribute_of("v")
    ('sex', 'v')
    """
    return item.split("=", 1)[0]


@dataclass(frozen=True)
class Roles:
    """The roles of items in discrimination analysis (Hajian et al. §3.1, §5.3).

    Parameters
    ----------
    protected : collection of str
        DI_b, the PD items (protected groups), e.g. ``{"sex=Female", "age=young"}``.
    decision : str
        C, the class item that denies the benefit (e.g. ``"credit=bad"``).
    positive : str, optional
        The other class item (patterns holding it are never PD; the classifier uses both).
    admissible : collection of str, optional
        DI_e, the legally admissible items for d-explainability (Def. 15-17).

    Examples
    --------
    >>> r = Roles.paper(["sex=F", "sex=M", "job=vet", "cls=no", "cls=yes"], ["sex=F"], "cls=no", "cls=yes")
    >>> sorted(r.admissible)
    ['job=vet']
    """

    protected: frozenset
    decision: str
    positive: str | None = None
    admissible: frozenset = frozenset()

    def __post_init__(self):
        if isinstance(self.protected, str):
            raise InvalidParameterError(
                f"The 'protected' parameter of Roles must be a collection of items. Got the string {self.protected!r} instead."
            )
        protected = frozenset(str(i) for i in self.protected)
        if not protected:
            raise InvalidParameterError("The 'protected' parameter of Roles must name at least one PD item. Got none.")
        object.__setattr__(self, "protected", protected)
        object.__setattr__(self, "admissible", frozenset(str(i) for i in (self.admissible or ())))
        if not isinstance(self.decision, str) or not self.decision:
            raise InvalidParameterError(f"The 'decision' parameter of Roles must be an item label. Got {self.decision!r} instead.")
        if self.decision in protected:
            raise InvalidParameterError(f"The decision item {self.decision!r} cannot also be a protected item.")
        if self.positive is not None and self.positive in protected | {self.decision}:
            raise InvalidParameterError(f"The positive class item {self.positive!r} must differ from C and the PD items.")
        clash = self.admissible & (protected | {self.decision} | ({self.positive} if self.positive else set()))
        if clash:
            raise InvalidParameterError(f"Admissible (DI_e) items must be PND non-class items; got {sorted(clash)}.")

    @classmethod
    def paper(cls, items: Iterable[str], protected: Iterable[str], decision: str, positive: str | None = None) -> Roles:
        """Roles with the paper's DI_e: every item whose attribute is neither a PD attribute
        nor the class attribute (Hajian et al. §7.4)."""
        protected = frozenset(protected)
        excluded = {attribute_of(i) for i in protected} | {attribute_of(decision)}
        admissible = frozenset(i for i in items if attribute_of(i) not in excluded)
        return cls(protected, decision, positive, admissible)

    @property
    def class_items(self) -> tuple[str, ...]:
        return (self.decision,) if self.positive is None else (self.decision, self.positive)

    def to_dict(self) -> dict:
        return {
            "protected": sorted(self.protected),
            "decision": self.decision,
            "positive": self.positive,
            "admissible": sorted(self.admissible),
        }


def split_pattern(pattern: frozenset, roles: Roles) -> tuple[frozenset, frozenset]:
    """``(A, B)`` of a PD pattern ``{A, B, C}``: A = p ∩ DI_b (the whole intersection,
    docs/papers.md, HJ-4), B = p minus A and C.

    >>> split_pattern(frozenset({"f", "v", "C"}), Roles({"f", "y"}, "C"))
    (frozenset({'f'}), frozenset({'v'}))
    """
    a = pattern & roles.protected
    return a, pattern - a - {roles.decision}


@dataclass(frozen=True, eq=False)
class PatternSet:
    """A collection of itemsets with supports, item roles and a ledger of virtual
    transactions.

    Parameters
    ----------
    supports : mapping of frozenset -> int
        The base supports of the itemsets of the set (FP or Cl as mined, or noisy).
    n_records : int
        |D| (supp of the empty itemset before sanitization).
    roles : Roles
    min_count : int
        The count threshold the set was mined with (sigma · |D|, rounded up).
    closed : bool, default=False
        The set holds closed itemsets only (Def. 14); supports of other frequent itemsets
        are the largest support of a closed superset (§5.2).
    ledger : tuple of (frozenset, int)
        Virtual transactions added so far (each target T with its count Δ).
    source : SupportSource, optional
        Answers supports of itemsets outside the set (the database, or noisy bins).
    name : str, default="patterns"
    provenance : mapping, optional
        Where the set came from (data set, parameters).

    Examples
    --------
    >>> db = TransactionDB.from_counts({("f", "v", "C"): 2, ("f", "v"): 3, ("v", "C"): 1, ("v",): 4})
    >>> ps = PatternSet.from_db(db, 1, Roles({"f"}, "C"), backend="apriori")
    >>> ps.support({"f", "v"}), ps.bump({"f", "v"}, 2).support({"v"}), ps.empty_support
    (5, 12, 10)
    """

    supports: Mapping
    n_records: int
    roles: Roles
    min_count: int = 1
    closed: bool = False
    ledger: tuple = ()
    source: Any = None
    name: str = "patterns"
    provenance: Mapping = field(default_factory=dict)

    def __post_init__(self):
        supports = {frozenset(x): int(s) for x, s in self.supports.items()}
        supports = {x: supports[x] for x in sorted(supports, key=canonical)}
        object.__setattr__(self, "supports", supports)
        ledger = tuple((frozenset(t), int(c)) for t, c in self.ledger)
        if any(c < 0 for _, c in ledger):
            raise InvalidParameterError("Ledger counts must be non-negative: sanitization only adds support.")
        object.__setattr__(self, "ledger", ledger)
        object.__setattr__(self, "provenance", dict(self.provenance))

    # ----------------------------------------------------------------- builders
    @classmethod
    def from_db(
        cls,
        db: TransactionDB,
        min_support: Any,
        roles: Roles,
        *,
        closed: bool = False,
        backend: str = "auto",
        name: str = "patterns",
        memory_limit=None,
    ) -> PatternSet:
        """Mine ``F(D, sigma)`` (or ``Cl(D, sigma)``) and attach the roles; the database
        stays as the source of supports outside the set. `memory_limit` as in
        :func:`~fairanon.patterns.mining.mine` (which refuses, with
        :class:`~fairanon.exceptions.MemoryLimitError`, itemsets that would not fit)."""
        threshold = min_count(min_support, db.n_records, caller="PatternSet.from_db")
        supports = mine(db, threshold, closed=closed, backend=backend, memory_limit=memory_limit)
        return cls(
            supports,
            db.n_records,
            roles,
            threshold,
            closed=closed,
            source=db,
            name=name,
            provenance={"min_support": str(min_support), "min_count": threshold, "closed": closed, "backend": backend},
        )

    def bump(self, target: Iterable[str], count: int) -> PatternSet:
        """A copy with `count` virtual transactions equal to `target` added."""
        return dataclasses.replace(self, ledger=self.ledger + ((frozenset(target), int(count)),))

    def with_ledger(self, ledger: Iterable) -> PatternSet:
        return dataclasses.replace(self, ledger=tuple(ledger))

    def original(self) -> PatternSet:
        """The same set before any sanitization (empty ledger)."""
        return dataclasses.replace(self, ledger=())

    # ----------------------------------------------------------------- queries
    def __len__(self) -> int:
        return len(self.supports)

    def __contains__(self, itemset) -> bool:
        return frozenset(itemset) in self.supports

    def __repr__(self) -> str:
        kind = "closed" if self.closed else "frequent"
        return (
            f"PatternSet({self.name!r}, {len(self)} {kind} itemsets, min_count={self.min_count}, "
            f"ledger={len(self.ledger)} entries / {self.ledger_total} records)"
        )

    @property
    def itemsets(self) -> tuple:
        return tuple(self.supports)

    @property
    def ledger_total(self) -> int:
        return sum(c for _, c in self.ledger)

    @property
    def empty_support(self) -> int:
        """supp(∅) = |D| plus every virtual record (docs/papers.md, HJ-4)."""
        return self.n_records + self.ledger_total

    @cached_property
    def _closed_index(self) -> dict:
        index: dict[str, set] = {}
        for pos, x in enumerate(self.supports):
            for item in x:
                index.setdefault(item, set()).add(pos)
        return index

    @cached_property
    def _closed_list(self) -> list:
        return list(self.supports.values())

    def base_support(self, itemset: Iterable[str]) -> int:
        """The support before sanitization: from the set, from its closed supersets
        (closed sets), else from the source."""
        x = frozenset(itemset)
        if not x:
            return self.n_records
        if x in self.supports:
            return self.supports[x]
        if self.closed:
            ids = None
            for item in x:
                found = self._closed_index.get(item, set())
                ids = set(found) if ids is None else ids & found
                if not ids:
                    break
            if ids:
                return max(self._closed_list[i] for i in ids)
        if self.source is None:
            raise InvalidParameterError(
                f"The support of {sorted(x)} is not in pattern set {self.name!r} and it has no source to count it."
            )
        return int(self.source.support(x))

    def ledger_support(self, itemset: Iterable[str]) -> int:
        x = frozenset(itemset)
        return sum(c for t, c in self.ledger if x <= t)

    def support(self, itemset: Iterable[str]) -> int:
        """The current (published) support of any itemset."""
        x = frozenset(itemset)
        if not x:
            return self.empty_support
        if x in self.supports:
            return self._current[x]
        return self.base_support(x) + self.ledger_support(x)

    @cached_property
    def _current(self) -> dict:
        # Each virtual transaction raises the subsets of its target: enumerating them
        # is cheaper than testing every itemset against every ledger entry.
        return dict(Workspace(self).current)

    def pd_patterns(self) -> list:
        """PD patterns of the set: C ∈ p and p ∩ DI_b ≠ ∅ (Def. 5 as Alg. 1 line 4 reads it)."""
        c, prot = self.roles.decision, self.roles.protected
        return [p for p in self.supports if c in p and p & prot]

    def published(self) -> dict:
        """``{itemset: support}`` as published.

        For frequent sets these are the same itemsets as mined (sanitization never
        adds or drops one). For closed sets, a raised itemset that was not closed may
        become closed: such ghost closed itemsets are included (§5.2).
        """
        if not self.ledger:
            return dict(self.supports)
        out = dict(self._current)
        if not self.closed:
            return out
        candidates = set()
        for t, _ in self.ledger:
            for r in range(1, len(t) + 1):
                candidates.update(frozenset(c) for c in itertools.combinations(sorted(t), r))
        items = {i for x in self.supports for i in x}
        for x in sorted(candidates - set(out), key=canonical):
            if self.base_support(x) < self.min_count:
                continue
            s = self.support(x)
            if all(self.support(x | {i}) < s for i in items - x):
                out[x] = s
        return {x: out[x] for x in sorted(out, key=canonical)}


class Workspace:
    """The mutable state an algorithm works on: current supports of the set's itemsets,
    kept up to date as virtual transactions are added.

    Listeners (e.g. the inference-channel table) are told of every bump.
    """

    def __init__(self, patterns: PatternSet):
        self.patterns = patterns
        self.current = {x: patterns.base_support(x) for x in patterns.supports}
        self.ledger: list = []
        self.total = 0
        self.listeners: list = []
        for t, c in patterns.ledger:
            self.bump(t, c)

    def supp(self, itemset: frozenset) -> int:
        s = self.current.get(itemset)
        if s is not None:
            return s
        if not itemset:
            return self.patterns.n_records + self.total
        return self.patterns.base_support(itemset) + sum(c for t, c in self.ledger if itemset <= t)

    def bump(self, target: Iterable[str], count: int) -> None:
        """Append `count` virtual transactions equal to `target`."""
        t = frozenset(target)
        count = int(count)
        if count <= 0:
            return
        self.ledger.append((t, count))
        self.total += count
        items = sorted(t)
        current = self.current
        if len(items) <= 16:
            for r in range(1, len(items) + 1):
                for sub in itertools.combinations(items, r):
                    key = frozenset(sub)
                    if key in current:
                        current[key] += count
        else:
            for key in current:
                if key <= t:
                    current[key] += count
        for listener in self.listeners:
            listener(t, count)

    def result(self) -> PatternSet:
        """The pattern set with every virtual transaction added so far."""
        return self.patterns.with_ledger(self.ledger)
