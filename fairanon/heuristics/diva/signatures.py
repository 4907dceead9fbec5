"""Visible signatures: the (k, Σ)-anonymization problem of DIVA (Milani, Huang, Chiang,
EDBT 2021) with identical records merged, and a greedy solution of it.

What a release by suppression shows of a record, restricted to the attributes the
diversity constraints target, is its *signature*: its protected value and the
constraint attributes it shows (with their values). The records of one signature can
be regrouped into classes of k or more records whatever else they show (split a
signature's records into classes, star what the classes disagree on and the constraint
attributes outside the signature), and the classes of any release with k or more
records each make signatures of k or more records. So a release exists iff every
record can be given a signature such that

- each signature is shown by no record or by at least k records, and
- each constraint sigma counts the records of I_sigma whose signature shows all of
  sigma's suppressible attributes, and that count lies in [lower, upper].

A record can only show values it has, and showing an attribute no counted constraint
needs never helps (drop it for the whole signature), so a record's possible signatures
are the unions of the attribute sets of the constraints whose suppressible target values
it has (G_sigma). Records with the same protected value, the same G_sigma and the same
I_sigma memberships have the same possible signatures: they form one *type*, and only
how many records of each type take each signature matters.

:class:`Signatures` builds the types and their options (type, signature) on demand;
:func:`descend` is a greedy solution (every record starts at its fullest signature;
signatures with fewer than k records pass their records down to a smaller one; the
empty signature takes records from the largest ones when it has too few); the exact
model over every option is :func:`fairanon.solver.diva_signatures.solve_signatures`;
:func:`signature_parts` turns counts per option into the records of each signature.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .problem import Problem

__all__ = ["Signatures", "descend", "signature_parts"]


class Signatures:
    """Types of the records outside `fixed` clusters and the signatures they can show.

    Attributes
    ----------
    rows : numpy.ndarray
        Positions of the free records (outside the fixed clusters).
    type_of : numpy.ndarray
        Per free record, its type.
    size, prot : numpy.ndarray
        Per type: its records, its protected value.
    base : numpy.ndarray
        Per constraint, the records the fixed clusters make count.
    lower, upper : numpy.ndarray
        Per constraint, its bounds (on the whole count, fixed clusters included).

    Options (a type showing a signature) and signatures are numbered as they are first
    asked for (:meth:`option`); ``opt_type``, ``opt_sig``, ``opt_covers`` (the
    constraints an option's records count for), ``sig_attrs``, ``sig_prot`` and
    ``sig_members`` (its options) describe them.
    """

    def __init__(self, d: Problem, fixed: Sequence[np.ndarray] = ()):
        self.d = d
        self.k = d.k
        s = len(d.encoded)
        free = np.ones(d.n, dtype=bool)
        self.base = np.zeros(s, dtype=np.int64)
        if len(fixed):
            flat, starts, _ = d.flatten(list(fixed))
            free[flat] = False
            self.base = d.contributions(flat, starts).sum(axis=0).astype(np.int64)
        self.rows = np.flatnonzero(free)
        self.type_of, first = _row_types(d.prot[self.rows], np.column_stack([d.G[self.rows], d.I[self.rows]]))
        self.size = np.bincount(self.type_of, minlength=len(first)).astype(np.int64)
        rep = self.rows[first]
        self.prot = d.prot[rep]
        self.type_g = d.G[rep].astype(bool)
        self.type_i = d.I[rep].astype(bool)
        self._matching = [np.flatnonzero(g) for g in self.type_g]
        self._targets = [np.flatnonzero(i) for i in self.type_i]
        self.lower, self.upper = d.lower, d.upper
        self.attrs = [frozenset(e.attributes) for e in d.encoded]
        self.value = [dict(e.requirement.target) for e in d.encoded]
        self.labels = [d.label(i) for i in range(s)]
        self._opt: dict[tuple[int, frozenset], int] = {}
        self._sig: dict[tuple, int] = {}
        self.opt_type: list[int] = []
        self.opt_sig: list[int] = []
        self.opt_covers: list[np.ndarray] = []
        self.opt_attrs: list[frozenset] = []
        self.sig_attrs: list[frozenset] = []
        self.sig_prot: list[int] = []
        self.sig_members: list[list[int]] = []

    @property
    def n_types(self) -> int:
        return len(self.size)

    @property
    def n_options(self) -> int:
        return len(self.opt_type)

    def matching(self, t: int) -> np.ndarray:
        """The constraints whose suppressible target values type t has (G_sigma)."""
        return self._matching[t]

    def top(self, t: int) -> frozenset:
        """The fullest signature of type t: every attribute of every constraint it matches."""
        return frozenset().union(*(self.attrs[i] for i in self.matching(t)))

    def option(self, t: int, attrs: frozenset) -> int:
        """The option of type t showing `attrs` (a union of attribute sets of
        constraints t matches), created when first asked for."""
        key = (t, attrs)
        found = self._opt.get(key)
        if found is not None:
            return found
        match = self.matching(t)
        values = {}
        for i in match:
            if self.attrs[i] <= attrs:
                for a in self.attrs[i]:
                    values[a] = self.value[i][a]
        sig_key = (int(self.prot[t]), tuple(sorted(values.items())))
        sig = self._sig.get(sig_key)
        if sig is None:
            sig = self._sig[sig_key] = len(self.sig_attrs)
            self.sig_attrs.append(attrs)
            self.sig_prot.append(int(self.prot[t]))
            self.sig_members.append([])
        covers = np.array([i for i in self._targets[t] if self.attrs[i] <= attrs], dtype=np.int64)
        o = self._opt[key] = len(self.opt_type)
        self.opt_type.append(t)
        self.opt_sig.append(sig)
        self.opt_covers.append(covers)
        self.opt_attrs.append(attrs)
        self.sig_members[sig].append(o)
        return o

    def drop(self, t: int, attrs: frozenset, gone: frozenset) -> frozenset:
        """The largest signature of type t inside `attrs` that shows none of `gone`:
        the union of the constraints' attribute sets within `attrs` that avoid `gone`."""
        keep = [self.attrs[i] for i in self.matching(t) if self.attrs[i] <= attrs and not self.attrs[i] & gone]
        return frozenset().union(*keep)

    def enumerate_all(self, cap: int) -> bool:
        """Create every option of every type (the exact model needs them); False, with
        nothing created beyond what exists, if there would be more than `cap`."""
        unions_of = []
        total = 0
        for t in range(self.n_types):
            atoms = sorted({self.attrs[i] for i in self.matching(t)}, key=sorted)
            unions = {frozenset()}
            for atom in atoms:
                unions |= {u | atom for u in unions}
                if total + len(unions) > cap:
                    return False
            total += len(unions)
            unions_of.append(unions)
        for t, unions in enumerate(unions_of):
            for u in sorted(unions, key=lambda u: (-len(u), sorted(u))):
                self.option(t, u)
        return True

    def counts(self, y: dict[int, int]) -> np.ndarray:
        """Per constraint, the count of a solution (records per option) with the base."""
        total = self.base.copy()
        for o, amount in y.items():
            if amount:
                total[self.opt_covers[o]] += amount
        return total

    def sig_sizes(self, y: dict[int, int]) -> np.ndarray:
        sizes = np.zeros(len(self.sig_attrs), dtype=np.int64)
        for o, amount in y.items():
            sizes[self.opt_sig[o]] += amount
        return sizes

    def violations(self, y: dict[int, int]) -> dict[int, tuple[int, int, int]]:
        """Constraints whose count is out of bounds: index -> (count, lower, upper)."""
        total = self.counts(y)
        bad = np.flatnonzero((total < self.lower) | (total > self.upper))
        return {int(i): (int(total[i]), int(self.lower[i]), int(self.upper[i])) for i in bad}


def _row_types(prot: np.ndarray, flags: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Type of each row (same protected value and same flags) and the first row of
    each type; flags are packed 62 to an integer so that one sort does the grouping."""
    n, width = flags.shape
    words = [np.unique(prot, return_inverse=True)[1].reshape(-1).astype(np.int64)]
    for start in range(0, width, 62):
        block = flags[:, start : start + 62].astype(np.int64)
        words.append(block @ (np.int64(1) << np.arange(block.shape[1], dtype=np.int64)))
    if not n:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    order = np.lexsort(words[::-1])
    keys = np.column_stack(words)[order]
    new = np.r_[True, (keys[1:] != keys[:-1]).any(axis=1)]
    type_sorted = np.cumsum(new) - 1
    type_of = np.empty(n, dtype=np.int64)
    type_of[order] = type_sorted
    return type_of, order[new]


def descend(sg: Signatures) -> dict[int, int]:
    """A greedy solution: records per option, with every signature shown by none or at
    least k records (always reached when every protected value has k free records or
    none); the bounds may still fail (see :meth:`Signatures.violations`).

    Every record starts at its type's fullest signature. From the largest signatures
    down, a signature with fewer than k records passes them to the child (drop one
    attribute, and every constraint that needs it) that breaks the fewest lower bounds,
    then fills a class, then hides the fewest target records. Counts above an upper
    bound are brought down by moving records of the signatures that count them, beyond
    k per signature, to a signature that does not. Last, an empty signature with fewer
    than k records takes records of its protected value from the signatures with most
    to spare (or whole signatures), fewest counted constraints first. A lower bound
    still short then gathers, per protected value, into the signature showing just its
    attributes: target records of the empty signature, records that match it without
    counting, and records of fuller signatures, from signatures with records to spare.
    """
    k = sg.k
    y: dict[int, int] = {}
    sizes: list[int] = []  # records per signature
    for t in range(sg.n_types):
        y[sg.option(t, sg.top(t))] = int(sg.size[t])
    total = sg.counts(y)

    def size_of(sig: int) -> int:
        while len(sizes) < len(sg.sig_attrs):
            sizes.append(sum(y.get(o, 0) for o in sg.sig_members[len(sizes)]))
        return sizes[sig]

    def move(o: int, target: int, amount: int) -> None:
        if amount <= 0 or o == target:
            return
        size_of(max(sg.opt_sig[o], sg.opt_sig[target]))
        y[o] -= amount
        y[target] = y.get(target, 0) + amount
        sizes[sg.opt_sig[o]] -= amount
        sizes[sg.opt_sig[target]] += amount
        total[sg.opt_covers[o]] -= amount
        total[sg.opt_covers[target]] += amount

    def pass_down(sig: int) -> None:
        attrs = sg.sig_attrs[sig]
        members = [o for o in sg.sig_members[sig] if y.get(o, 0)]
        # Every member's type matches the same constraints within `attrs`, so one drop
        # gives the child signature for all of them.
        first = sg.opt_type[members[0]]
        slack = np.maximum(total - sg.lower, 1)
        best = None
        for a in sorted(attrs):
            child_attrs = sg.drop(first, attrs, frozenset([a]))
            targets = [sg.option(sg.opt_type[o], child_attrs) for o in members]
            lost = np.zeros_like(total)
            for o, o2 in zip(members, targets):
                lost[sg.opt_covers[o]] += y[o]
                lost[sg.opt_covers[o2]] -= y[o]
            after = total - lost
            broken = int(((after < sg.lower) & (total >= sg.lower)).sum())
            fills = size_of(sg.opt_sig[targets[0]]) + size_of(sig) >= k
            # Hidden target records, each weighted by how little room its constraint has left.
            score = (broken, float((lost / slack).sum()), not fills, a)
            if best is None or score < best[0]:
                best = (score, targets)
        for o, o2 in zip(members, best[1]):
            move(o, o2, y[o])

    def settle() -> None:
        """Pass down every signature with 1..k-1 records, largest signatures first."""
        level = max((len(a) for a in sg.sig_attrs), default=0)
        while level > 0:
            for sig in range(len(sg.sig_attrs)):
                if len(sg.sig_attrs[sig]) == level and 0 < size_of(sig) < k:
                    pass_down(sig)
            level -= 1

    settle()
    # Upper bounds: move counted records beyond k per signature to a signature that
    # does not count them.
    for i in np.flatnonzero(total > sg.upper):
        counting = [o for o in y if y[o] and i in sg.opt_covers[o]]
        for o in sorted(counting, key=lambda o: (len(sg.opt_covers[o]), o)):
            excess = int(total[i] - sg.upper[i])
            if excess <= 0:
                break
            sig = sg.opt_sig[o]
            spare = min(y[o], size_of(sig) - k, excess)
            if spare > 0:
                t = sg.opt_type[o]
                move(o, sg.option(t, sg.drop(t, sg.opt_attrs[o], sg.attrs[i])), spare)
    settle()
    # The empty signature of each protected value: none or at least k records.
    for prot in sorted(set(sg.sig_prot)):
        empty = sg.opt_sig[sg.option(int(np.flatnonzero(sg.prot == prot)[0]), frozenset())]
        deficit = k - size_of(empty)
        if size_of(empty) == 0 or deficit <= 0:
            continue
        donors = [o for o in list(y) if y[o] and sg.sig_prot[sg.opt_sig[o]] == prot and sg.opt_attrs[o]]
        donors.sort(key=lambda o: (len(sg.opt_covers[o]), -size_of(sg.opt_sig[o]), o))
        for o in donors:
            if deficit <= 0:
                break
            amount = min(y[o], size_of(sg.opt_sig[o]) - k, deficit)
            if amount > 0:
                move(o, sg.option(sg.opt_type[o], frozenset()), amount)
                deficit -= amount
        while deficit > 0:
            sigs = {sg.opt_sig[o] for o in y if y[o] and sg.sig_prot[sg.opt_sig[o]] == prot and sg.opt_attrs[o]}
            if not sigs:  # fewer than k free records of this protected value
                break
            sig = min(sigs, key=lambda s: (size_of(s), s))
            deficit -= size_of(sig)
            for o in list(sg.sig_members[sig]):
                if y.get(o):
                    move(o, sg.option(sg.opt_type[o], frozenset()), y[o])
    # Lower bounds still short: gather, per protected value, into the signature that
    # shows just the constraint's attributes, target records that do not count (from
    # the empty signature), then records that match without counting, then records of
    # fuller signatures, while every source keeps k records.
    for i in np.flatnonzero(total < sg.lower):
        matching = [o for o in y if y[o] and sg.type_g[sg.opt_type[o], i]]
        for prot in sorted({int(sg.prot[t]) for t in np.flatnonzero(sg.type_i[:, i])}):
            deficit = int(sg.lower[i] - total[i])
            if deficit <= 0:
                break
            holders = [o for o in matching if y[o] and sg.prot[sg.opt_type[o]] == prot]
            if not holders:
                continue
            dest = {o: sg.option(sg.opt_type[o], sg.attrs[i]) for o in holders}
            sig = sg.opt_sig[next(iter(dest.values()))]
            empty = [o for o in holders if not sg.opt_attrs[o]]
            gainers = [o for o in empty if sg.type_i[sg.opt_type[o], i]]
            helpers = [o for o in empty if not sg.type_i[sg.opt_type[o], i]]
            fuller = sorted((o for o in holders if sg.opt_attrs[o] > sg.attrs[i]),
                            key=lambda o: (len(sg.opt_covers[o]), -size_of(sg.opt_sig[o]), o))
            spare = {}
            plan: list[tuple[int, int]] = []
            have, gained = size_of(sig), 0
            for o in gainers + helpers + fuller:
                src = sg.opt_sig[o]
                spare.setdefault(src, size_of(src) - k)
                wanted = (deficit - gained) if o in gainers else (k - have)
                amount = min(y[o], spare[src], max(wanted, 0))
                if amount <= 0:
                    continue
                spare[src] -= amount
                plan.append((o, amount))
                have += amount
                gained += amount if o in gainers else 0
                if have >= k and gained >= deficit:
                    break
            if have < k or not gained:
                continue
            after = total.copy()
            for o, amount in plan:
                after[sg.opt_covers[o]] -= amount
                after[sg.opt_covers[dest[o]]] += amount
            if (after > sg.upper).any() or ((after < sg.lower) & (total >= sg.lower)).any():
                continue
            for o, amount in plan:
                move(o, dest[o], amount)
    return {o: v for o, v in y.items() if v}


def signature_parts(sg: Signatures, y: dict[int, int]) -> tuple[list[np.ndarray], list[np.ndarray], list[frozenset]]:
    """The records of each signature of a solution `y` (records per option): the
    parts showing some constraint attribute, the parts of the empty signature (one per
    protected value) and, per part of the first list, the attributes it shows.

    Which records of a type take which option is free; they are taken in the order of
    their values on the attribute with fewest values (then in table order), fullest
    signature first."""
    d = sg.d
    first = min(range(len(d.gen)), key=lambda j: (d.cardinality[j], j)) if d.gen else None
    keys = ([] if first is None else [d.codes[sg.rows, first]]) + [sg.type_of]
    order = np.lexsort(keys) if len(sg.rows) else np.zeros(0, dtype=np.int64)
    sorted_rows = sg.rows[order]
    bounds = np.searchsorted(sg.type_of[order], np.arange(sg.n_types + 1))
    per_sig: dict[int, list[np.ndarray]] = {}
    options_of: dict[int, list[int]] = {}
    for o, amount in y.items():
        if amount:
            options_of.setdefault(sg.opt_type[o], []).append(o)
    for t, opts in options_of.items():
        rows = sorted_rows[bounds[t] : bounds[t + 1]]
        opts.sort(key=lambda o: (-len(sg.opt_attrs[o]), o))
        start = 0
        for o in opts:
            per_sig.setdefault(sg.opt_sig[o], []).append(rows[start : start + y[o]])
            start += y[o]
    shown, empty, attrs = [], [], []
    for sig in sorted(per_sig):
        part = np.sort(np.concatenate(per_sig[sig]))
        if sg.sig_attrs[sig]:
            shown.append(part)
            attrs.append(sg.sig_attrs[sig])
        else:
            empty.append(part)
    return shown, empty, attrs
