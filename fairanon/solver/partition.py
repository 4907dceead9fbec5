"""Exact local recoding and local suppression with CP-SAT.

The model of the baselines spec §6.4, reformulated so that it scales: a release is
determined by the *released vector* of each record (its quasi-identifier labels), and
the released equivalence classes are exactly the records sharing a vector. So instead
of assigning records to anonymous group slots (one Boolean per record and slot, with
heavy symmetry), the model assigns *types* -- records with identical values on every
attribute the requirements read, weighted by their count -- to candidate vectors:

- ``x[t,v]`` in 0..w_t: how many records of type t are released as vector v (v must
  cover t: each label generalizes t's value);
- ``z[v]``: vector v is used; ``x[t,v] <= w_t * z[v]`` and ``y[v] = sum_t x[t,v]``.

Classes have no identity beyond their vector, so the model has no slot symmetry, and
the disaggregated links give a useful LP bound (a type with fewer than k records
cannot stay alone on its own vector). Candidate vectors are pruned to those covering at
least k records; when every requirement is union-monotone (k, l, t) and the objective
can only grow when a label is coarsened, an optimal release uses the tight summary
(lowest common ancestor, min-max range) of each class, so the candidates are the join
closure of the types' own vectors.

Requirement families, each a set of named linear constraints (tcloseness spec §2.9):

============================ ==================================================================
k-anonymity                  ``y[v] >= k z[v]``
distinct l-diversity         ``has[v,s] <= cnt[v,s]``, ``sum_s has[v,s] >= l z[v]``
recursive (c,l)-diversity    ``c_d R + c_n ((l-1) lam + sum_s mu_s) <= c_n y - 1`` with
                             ``R >= cnt_s``, ``mu_s >= cnt_s - lam`` (exact LP form of the
                             top-(l-1) sum)
entropy l-diversity          ``sum_s F(cnt_s) <= G(y)`` with integer tables rounded so the
                             constraint relaxes the true one; every class is then checked
                             exactly and a violating count vector is cut off (lazy), so the
                             result is exact
t-closeness (EMD)            cross-multiplied integers, |.| by auxiliary variables:
                             equal ``t_d sum_s |N cnt_s - N_s y| <= 2 t_n N y``, ordered
                             (prefix sums, factor m-1), hierarchical (edge form, factor 2H)
diversity constraints        ``lower <= sum of x over target types on vectors that show the
                             target values exactly <= upper``
alpha-protection             every context (itemset of released labels of the non-protected
                             quasi-identifiers) that a candidate vector can reach: 4-fold
                             counts a, b, c, d are linear; each measure is cross-multiplied,
                             with Ruggieri's tokenism cases as enforced alternatives and the
                             products of two counts as CP-SAT integer products
============================ ==================================================================

The protected attribute is part of every vector and never generalized, as in the
verifier, so classes never mix protected values.

Exactness of alpha-protection. The verifier checks every itemset of released values of
the non-protected quasi-identifiers (labels read as symbols, the empty itemset
included). The model enumerates every such itemset that some candidate vector can
produce, and enforces the measure on it whenever its cover is non-empty (and, with
``min_support``, at least that large). All seven measures (RD, ED, RR, ER, RC, EC, OR),
strict or not, are exact: differences and ratios of proportions are cross-multiplied
in integers, each tokenism case (no protected or no unprotected record in the
context: p1 or p2 is then p-) is a separate enforced alternative, and a ratio's zero
denominator follows ``measures.py`` (x/0 = inf, 0/0 = 1). Products of two counts are
CP-SAT integer products, exact but weaker in the LP relaxation than linear terms; the
linear cases are the tokenism ones and t-closeness of the decision (Ruggieri's VD per
q-block, tcloseness spec §2.9), which implies bd_f(t)-protection (Thm 10). Only size is
refused: more than ``max_contexts`` contexts raise IncompatibleRequirementError.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np
import pandas as pd
from ortools.sat.python import cp_model

from ..exceptions import IncompatibleRequirementError, InvalidParameterError, SolverError
from ..instances.generalization import format_number, format_range
from ..instances.hierarchy import SUPPRESSED
from ..instances.instance import Instance
from ..instances.schema import Attribute
from ..models import measures as M
from ..models.requirements import (
    AlphaProtection,
    DiversityConstraint,
    KAnonymity,
    LDiversity,
    Requirement,
    TCloseness,
    requirement_targets,
    validate_requirements,
)
from ..release import Release, Status, provenance
from . import _cpsat

__all__ = [
    "OBJECTIVES",
    "RECODINGS",
    "LabelSpace",
    "PartitionModel",
    "build_partition_model",
    "cpsat",
    "encode",
    "model_size",
    "solve_partition",
]

#: How cells may change: "generalization" (hierarchy nodes, ranges of ordered and
#: numeric values, ``*``) or "suppression" (the value itself or ``*``; DIVA's semantics).
RECODINGS = ("generalization", "suppression")
#: What the exact models minimize. Totals over quasi-identifier cells: "stars" (cells
#: released as ``*``), "generalized" (cells whose label differs from the value), "ncp"
#: (Xu's NCP summed over cells) and "lm" (Iyengar's loss summed over cells);
#: "discernibility" is the sum of squared class sizes.
OBJECTIVES = ("stars", "generalized", "discernibility", "ncp", "lm")
_MONOTONE_OBJECTIVES = ("stars", "generalized", "ncp", "lm")
#: Deterministic-time budget of the one-worker re-solve that makes an OPTIMAL release
#: independent of thread timing; a deterministic limit, so whether it succeeds is
#: reproducible too.
_CANONICAL_BUDGET = 1.0
#: Scale of the entropy tables (relaxed by one unit each way; exactness comes from the
#: lazy check).
_ENTROPY_SCALE = 2**30


# ====================================================================== label spaces
@dataclass
class LabelSpace:
    """The candidate labels of one generalizable quasi-identifier.

    Values are the attribute's *active* values (those present in the data), in domain
    order (numeric: by value). Each label covers a set of them; labels covering the
    same set are merged into the most specific one, except that a value's own label
    (which shows it) is kept apart from the generalized labels.

    Attributes
    ----------
    name : str
    values : list
        Active values (domain strings, or floats for numeric attributes).
    texts : list of str
        The released text of each label.
    masks : numpy.ndarray of bool, shape (L, m)
        ``masks[j, i]``: label j covers active value i.
    own : numpy.ndarray of int, shape (m,)
        The label id showing value i itself.
    ncp, lm : list of Fraction
        Per-label cell losses, as :mod:`fairanon.models.metrics` measures them.
    star : numpy.ndarray of bool
        Labels released as ``*``.
    row_value : numpy.ndarray of int
        Active value index of every instance row.
    """

    name: str
    attr: Attribute
    values: list
    texts: list[str]
    masks: np.ndarray
    own: np.ndarray
    ncp: list[Fraction]
    lm: list[Fraction]
    star: np.ndarray
    row_value: np.ndarray
    _cover: list | None = field(default=None, repr=False)
    _join: dict = field(default_factory=dict, repr=False)
    _bits: list | None = field(default=None, repr=False)
    _table: np.ndarray | None = field(default=None, repr=False)
    _scan: list | None = field(default=None, repr=False)

    @property
    def m(self) -> int:
        return len(self.values)

    @property
    def n_labels(self) -> int:
        return len(self.texts)

    @property
    def sizes(self) -> np.ndarray:
        return self.masks.sum(axis=1)

    def covering(self, i: int) -> list[int]:
        """Label ids covering active value i, most specific first."""
        if self._cover is None:
            order = np.lexsort((np.arange(self.n_labels), self.sizes))
            self._cover = [[int(j) for j in order if self.masks[j, v]] for v in range(self.m)]
        return self._cover[i]

    def join(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Elementwise, the most specific label covering everything labels a and b cover
        (the tight summary of their union)."""
        key = np.asarray(a, dtype=np.int64) * self.n_labels + np.asarray(b, dtype=np.int64)
        if self.n_labels**2 <= 4_000_000:
            if self._table is None:
                self._table = np.full(self.n_labels**2, -1, dtype=np.int64)
            missing = pd.unique(key[self._table[key] < 0])
            self._table[missing] = [self._join_one(int(k)) for k in missing]
            return self._table[key]
        uniq, inv = np.unique(key, return_inverse=True)
        out = np.array([self._join_one(int(k)) for k in uniq], dtype=np.int64)
        return out[inv.reshape(-1)]

    def _join_one(self, key: int) -> int:
        if key not in self._join:
            if self._bits is None:
                weights = 1 << np.arange(self.m, dtype=object)
                self._bits = [int((weights * row).sum()) for row in self.masks.astype(object)]
                # most specific first; a value's own label before a generalized one
                own = np.zeros(self.n_labels, dtype=bool)
                own[self.own] = True
                self._scan = [
                    int(j) for j in np.lexsort((np.arange(self.n_labels), ~own, self.sizes))
                ]
            a, b = divmod(key, self.n_labels)
            union = self._bits[a] | self._bits[b]
            self._join[key] = next(j for j in self._scan if self._bits[j] & union == union)
        return self._join[key]


def _active(instance: Instance, name: str) -> tuple[list, np.ndarray]:
    """The active values of an attribute (domain order, numeric by value) and each row's
    index among them."""
    codes = instance.codes(name)
    present, index = np.unique(codes, return_inverse=True)
    if instance.schema[name].kind == "numeric":
        values = [float(v) for v in present]
    else:
        domain = instance.schema[name].domain
        values = [domain[int(c)] for c in present]
    return values, index.reshape(-1).astype(np.int64)


def _nested_intervals(attr: Attribute) -> bool:
    widths = attr.intervals.widths
    return all(b % a == 0 for a, b in itertools.pairwise(widths))


def _label_space(instance: Instance, name: str, recoding: str, max_range_values: int) -> LabelSpace:
    attr = instance.schema[name]
    values, row_value = _active(instance, name)
    m = len(values)
    own_text = [format_number(v) if attr.kind == "numeric" else str(v) for v in values]
    candidates: list[tuple[str, np.ndarray]] = []  # (text, mask), most specific first

    def unit(i):
        mask = np.zeros(m, dtype=bool)
        mask[i] = True
        return mask

    full = np.ones(m, dtype=bool)
    if recoding == "suppression":
        candidates = [(SUPPRESSED, full)]
    elif attr.kind == "categorical" or (attr.kind == "ordered" and m > max_range_values):
        if attr.hierarchy is None:
            raise InvalidParameterError(
                f"The 'max_range_values' parameter of cpsat ({max_range_values}) is smaller than "
                f"the {m} values of ordered attribute {name!r}, which has no hierarchy to fall "
                "back on. Raise max_range_values, give the attribute a hierarchy, or use "
                "recoding='suppression'."
            )
        h = attr.hierarchy
        leaf_pos = np.array([h.leaf_index[v] for v in values], dtype=np.int64)
        nodes = sorted(h.nodes, key=lambda node: -h.depth[node])
        for node in nodes:
            if not h.children[node]:
                continue  # leaves are the own labels
            mask = h.leaf_mask(node)[leaf_pos]
            if mask.any():
                candidates.append((node, mask))
    elif m <= max_range_values:
        for width in range(1, m):
            for lo in range(m - width):
                hi = lo + width
                mask = np.zeros(m, dtype=bool)
                mask[lo : hi + 1] = True
                if lo == 0 and hi == m - 1:
                    text = SUPPRESSED
                elif attr.kind == "numeric":
                    text = format_range(attr, values[lo], values[hi])
                else:
                    text = f"[{values[lo]}-{values[hi]}]"
                candidates.append((text, mask))
    elif attr.kind == "numeric" and attr.intervals is not None and _nested_intervals(attr):
        for level in range(1, attr.intervals.height):
            labels = attr.intervals.generalize(values, level)
            for text in dict.fromkeys(labels):
                candidates.append((text, np.array([lab == text for lab in labels])))
        candidates.append((SUPPRESSED, full))
    else:
        raise InvalidParameterError(
            f"The 'max_range_values' parameter of cpsat ({max_range_values}) is smaller than the "
            f"{m} values of numeric attribute {name!r}, which has no nested intervals to fall back "
            "on. Raise max_range_values, give it intervals=IntervalHierarchy(...) with widths that "
            "divide each other, bin it first, or use recoding='suppression'."
        )
    if not any(text == SUPPRESSED or mask.all() for text, mask in candidates):
        candidates.append((SUPPRESSED, full))

    texts = list(own_text)
    masks = [unit(i) for i in range(m)]
    seen: set[bytes] = set()
    for text, mask in candidates:
        key = np.packbits(mask).tobytes()
        if key in seen:
            continue
        seen.add(key)
        texts.append(text)
        masks.append(mask)
    masks_arr = np.array(masks, dtype=bool).reshape(len(masks), m)
    ncp, lm = _label_losses(attr, values, masks_arr, texts)
    return LabelSpace(
        name=name,
        attr=attr,
        values=values,
        texts=texts,
        masks=masks_arr,
        own=np.arange(m, dtype=np.int64),
        ncp=ncp,
        lm=lm,
        star=np.array([t == SUPPRESSED for t in texts], dtype=bool),
        row_value=row_value,
    )


def _label_losses(attr: Attribute, values: list, masks: np.ndarray, texts: list[str]):
    """Per-label NCP and LM cell losses, exactly as :mod:`fairanon.models.metrics`
    defines them over the active domain."""
    m = len(values)
    ncp, lm = [], []
    if attr.kind == "numeric":
        from ..instances.generalization import label_covers

        lo_v, hi_v = Fraction(values[0]), Fraction(values[-1])
        rng = hi_v - lo_v
        covers = label_covers(attr, texts)
        for j in range(len(texts)):
            if rng == 0:
                ncp.append(Fraction(0))
                continue
            lo = min(
                max(Fraction(covers.lo[j]) if math.isfinite(covers.lo[j]) else lo_v, lo_v), hi_v
            )
            hi = min(
                max(Fraction(covers.hi[j]) if math.isfinite(covers.hi[j]) else hi_v, lo_v), hi_v
            )
            ncp.append(max(hi - lo, Fraction(0)) / rng)
        return ncp, list(ncp)
    for mask in masks:
        count = int(mask.sum())
        lm.append(Fraction(count - 1, m - 1) if m > 1 else Fraction(0))
        if attr.kind == "categorical":
            ncp.append(Fraction(count, m) if count > 1 else Fraction(0))
        else:
            idx = np.flatnonzero(mask)
            ncp.append(Fraction(int(idx[-1] - idx[0]), m - 1) if m > 1 else Fraction(0))
    return ncp, lm


# ====================================================================== types
@dataclass
class _Target:
    """A sensitive/decision attribute read by l-diversity or t-closeness."""

    name: str
    codes: np.ndarray  # per type, dense 0..m-1 in the attribute's order
    m: int
    global_counts: np.ndarray
    values: list


@dataclass
class Encoding:
    """An instance as weighted types and label spaces (see the module docstring).

    Attributes
    ----------
    names : list of str
        The generalizable quasi-identifiers, in schema order.
    values : list of list
        Their active values (see :class:`LabelSpace`).
    spaces : list of LabelSpace
        One per generalizable quasi-identifier (empty for the full-domain model).
    qi : numpy.ndarray of int, shape (n_types, d)
        Active value index of each type on each generalizable quasi-identifier.
    protected : numpy.ndarray of int
        Domain code of each type's protected value (0 when there is no protected attribute).
    weight : numpy.ndarray of int
        Records per type.
    rows : list of numpy.ndarray
        Instance row positions of each type's records (ascending).
    targets : dict of str -> _Target
    prot_flag, neg_flag : numpy.ndarray of bool or None
        Per type: in the protected group / negative decision (for alpha-protection).
    extra : dict of str -> numpy.ndarray
        Per type, the value (text) of non-generalizable attributes named by diversity
        constraints.
    """

    instance: Instance
    recoding: str
    names: list[str]
    values: list[list]
    spaces: list[LabelSpace]
    qi: np.ndarray
    protected: np.ndarray
    weight: np.ndarray
    rows: list[np.ndarray]
    row_type: np.ndarray
    targets: dict[str, _Target]
    prot_flag: np.ndarray | None
    neg_flag: np.ndarray | None
    extra: dict[str, np.ndarray]

    @property
    def n_types(self) -> int:
        return len(self.weight)

    @property
    def d(self) -> int:
        return len(self.names)


def encode(
    instance: Instance,
    requirements: Sequence[Requirement],
    *,
    recoding: str = "generalization",
    max_range_values: int = 16,
) -> Encoding:
    """Aggregate the records into weighted types and build the label spaces.

    A type is a set of records with identical values on the generalizable
    quasi-identifiers, the protected attribute, the targets of l-diversity and
    t-closeness, the decision (for alpha-protection) and the attributes of diversity
    constraints, i.e. on everything the requirements can tell apart.

    >>> enc = encode(fa.load("ruggieri_loan"), [fa.TCloseness(0.25)])
    >>> enc.n_types, int(enc.weight.sum()), [s.texts for s in enc.spaces]
    (13, 17, [['housing', 'car', 'housing-car'], ['no', 'yes', '*']])
    """
    names = list(instance.schema.generalizable)
    spaces = [_label_space(instance, name, recoding, max_range_values) for name in names]
    return type_table(
        instance,
        requirements,
        recoding,
        spaces,
        [s.row_value for s in spaces],
        [s.values for s in spaces],
    )


def type_table(instance, requirements, recoding, spaces, row_values, values) -> Encoding:
    """The weighted types of :func:`encode`, given each generalizable attribute's active
    value index per row (`row_values`) and active values (`values`)."""
    schema = instance.schema
    names = list(schema.generalizable)
    columns = list(row_values)
    protected = schema.protected
    if protected is not None:
        columns.append(instance.codes(protected))
    target_names: list[str] = []
    for req in requirements:
        if isinstance(req, (LDiversity, TCloseness)):
            for name in requirement_targets(schema, req):
                if name not in target_names:
                    target_names.append(name)
    dense_targets = {}
    for name in target_names:
        present, dense = np.unique(instance.codes(name), return_inverse=True)
        dense_targets[name] = (present, dense.reshape(-1))
        columns.append(dense_targets[name][1])
    alpha = any(isinstance(r, AlphaProtection) for r in requirements)
    if alpha:
        columns.append(instance.negative_mask().astype(np.int64))
    extra_names = []
    for req in requirements:
        if isinstance(req, DiversityConstraint):
            for name, _ in req.target:
                if name not in names and name not in extra_names:
                    extra_names.append(name)
    extra_codes = {}
    for name in extra_names:
        _, inv = np.unique(instance.table[name].astype(str).to_numpy(), return_inverse=True)
        extra_codes[name] = inv.reshape(-1)
        columns.append(extra_codes[name])
    n = instance.n_rows
    key = (
        np.stack([np.asarray(c, dtype=np.int64) for c in columns], axis=1)
        if columns
        else np.zeros((n, 0), dtype=np.int64)
    )
    _, first, inverse, counts = np.unique(
        key, axis=0, return_index=True, return_inverse=True, return_counts=True
    )
    inverse = inverse.reshape(-1)
    # Types numbered by first occurrence, so the order follows the table.
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    row_type = rank[inverse]
    first = first[order]
    weight = counts[order].astype(np.int64)
    sort = np.argsort(row_type, kind="stable")
    rows = np.split(sort, np.cumsum(weight)[:-1])
    qi = (
        np.stack([rv[first] for rv in row_values], axis=1)
        if names
        else np.zeros((len(first), 0), dtype=np.int64)
    )
    prot_codes = (
        instance.codes(protected)[first].astype(np.int64)
        if protected
        else np.zeros(len(first), dtype=np.int64)
    )
    targets = {}
    for name in target_names:
        present, dense = dense_targets[name]
        attr = schema[name]
        shown = (
            [attr.domain[int(c)] for c in present]
            if attr.domain is not None
            else [float(v) for v in present]
        )
        targets[name] = _Target(
            name, dense[first], len(present), np.bincount(dense, minlength=len(present)), shown
        )
    prot_flag = neg_flag = None
    if alpha:
        prot_flag = instance.protected_mask()[first]
        neg_flag = instance.negative_mask()[first]
    extra = {name: instance.table[name].astype(str).to_numpy()[first] for name in extra_names}
    return Encoding(
        instance,
        recoding,
        names,
        [list(v) for v in values],
        spaces,
        qi,
        prot_codes,
        weight,
        rows,
        row_type,
        targets,
        prot_flag,
        neg_flag,
        extra,
    )


# ====================================================================== candidate vectors
def _closure_vectors(enc: Encoding, cap: int) -> list[tuple]:
    """Joins of every non-empty set of types (per protected value): the tight summaries
    a class can have. Breadth-first: each round joins the new vectors with every type.
    Vectors are handled as mixed-radix integers over the label counts."""
    radix = [s.n_labels for s in enc.spaces]
    if math.prod(radix) >= 2**62:
        raise InvalidParameterError(
            f"The 'max_vars' parameter of cpsat ({cap}) cannot be met: instance "
            f"{enc.instance.name!r} has too many label combinations to enumerate. Use "
            "recoding='suppression' or fewer quasi-identifiers, or method='mondrian'."
        )
    strides = np.array([math.prod(radix[a + 1 :]) for a in range(enc.d)], dtype=np.int64)

    def decode(keys: np.ndarray) -> np.ndarray:
        return (keys[:, None] // strides[None, :]) % np.array(radix, dtype=np.int64)[None, :]

    out: list[tuple] = []
    for p in dict.fromkeys(enc.protected.tolist()):
        base = np.unique(enc.qi[enc.protected == p] @ strides)
        base_rows = decode(base)
        seen = set(base.tolist())
        frontier = base_rows
        while len(frontier):
            fresh: list[int] = []
            step = max(1, 200_000 // len(base))
            for start in range(0, len(frontier), step):
                block = frontier[start : start + step]
                keys = np.zeros(len(block) * len(base), dtype=np.int64)
                for a, space in enumerate(enc.spaces):
                    joined = space.join(
                        np.repeat(block[:, a], len(base)), np.tile(base_rows[:, a], len(block))
                    )
                    keys += joined * strides[a]
                for key in pd.unique(keys).tolist():
                    if key not in seen:
                        seen.add(key)
                        fresh.append(key)
                if len(seen) + len(out) > cap:
                    raise InvalidParameterError(
                        f"The 'max_vars' parameter of cpsat ({cap}) is smaller than the number of "
                        f"candidate classes of instance {enc.instance.name!r} "
                        f"(more than {len(seen)}). "
                        "Raise max_vars, use recoding='suppression' or fewer quasi-identifiers, or "
                        "method='mondrian'."
                    )
            frontier = decode(np.array(fresh, dtype=np.int64))
        rows = decode(np.array(sorted(seen), dtype=np.int64))
        out.extend((p,) + tuple(int(i) for i in row) for row in rows)
    return out


def _pairs_count(enc: Encoding) -> int:
    """Type-vector pairs of the full candidate set (every covering label combination)."""
    total = 0
    counts = [
        np.array([len(s.covering(i)) for i in range(s.m)], dtype=np.int64) for s in enc.spaces
    ]
    prod = np.ones(enc.n_types, dtype=float)
    for s, c in zip(enc.spaces, counts):
        prod *= c[enc.qi[:, enc.spaces.index(s)]]
    total = float(prod.sum())
    return int(min(total, 2**62))


@dataclass
class _Candidates:
    vectors: list[tuple]  # (protected code, label id per attribute)
    pair_t: np.ndarray
    pair_v: np.ndarray
    mode: str


def _candidates(enc: Encoding, closure: bool, k: int, max_vars: int) -> _Candidates:
    if closure:
        vectors = _closure_vectors(enc, max_vars)
        arr = np.array(vectors, dtype=np.int64).reshape(len(vectors), enc.d + 1)
        pair_t, pair_v = [], []
        for p in dict.fromkeys(enc.protected.tolist()):
            vs = np.flatnonzero(arr[:, 0] == p)
            ts = np.flatnonzero(enc.protected == p)
            ok = np.ones((len(vs), len(ts)), dtype=bool)
            for a, space in enumerate(enc.spaces):
                ok &= space.masks[arr[vs, a + 1]][:, enc.qi[ts, a]]
            vi, ti = np.nonzero(ok)
            pair_v.append(vs[vi])
            pair_t.append(ts[ti])
        pair_t = np.concatenate(pair_t) if pair_t else np.zeros(0, dtype=np.int64)
        pair_v = np.concatenate(pair_v) if pair_v else np.zeros(0, dtype=np.int64)
        mode = "closure"
    else:
        needed = _pairs_count(enc)
        if needed > max_vars:
            raise InvalidParameterError(
                f"The 'max_vars' parameter of cpsat ({max_vars}) is smaller than the {needed} "
                f"assignment variables the model of instance {enc.instance.name!r} needs. Raise "
                "max_vars, use recoding='suppression' or fewer quasi-identifiers, or "
                "method='mondrian'."
            )
        index: dict[tuple, int] = {}
        vectors, pt, pv = [], [], []
        for t in range(enc.n_types):
            lists = [s.covering(int(enc.qi[t, a])) for a, s in enumerate(enc.spaces)]
            p = int(enc.protected[t])
            for combo in itertools.product(*lists):
                vec = (p,) + combo
                v = index.get(vec)
                if v is None:
                    v = index[vec] = len(vectors)
                    vectors.append(vec)
                pt.append(t)
                pv.append(v)
        pair_t, pair_v = np.array(pt, dtype=np.int64), np.array(pv, dtype=np.int64)
        mode = "all"
    order = np.lexsort((pair_v, pair_t))
    pair_t, pair_v = pair_t[order], pair_v[order]
    if k > 1 and len(pair_v):
        # A used vector holds at least k records, so vectors covering fewer are useless.
        reach = np.bincount(pair_v, weights=enc.weight[pair_t], minlength=len(vectors))
        keep = reach[pair_v] >= k
        pair_t, pair_v = pair_t[keep], pair_v[keep]
    used = np.unique(pair_v)
    remap = np.full(len(vectors), -1, dtype=np.int64)
    remap[used] = np.arange(len(used))
    return _Candidates([vectors[i] for i in used], pair_t, remap[pair_v], mode)


def model_size(
    instance: Instance,
    requirements: Sequence[Requirement],
    *,
    recoding: str = "generalization",
    objective: str | None = None,
    max_range_values: int = 16,
    max_types: int | None = None,
    max_vars: int = 200_000,
) -> dict:
    """The size of the exact model :func:`cpsat` would build, without building it.

    Parameters
    ----------
    instance, requirements, recoding, objective, max_range_values
        As in :func:`cpsat`.
    max_types : int, optional
        Skip counting the candidates when there are more types than this.
    max_vars : int, default=200000
        Stop counting candidates beyond this many.

    Returns
    -------
    dict
        ``types`` (weighted types), ``distinct_qi`` (distinct quasi-identifier
        vectors), ``d`` (generalizable quasi-identifiers) and ``pairs``: the
        assignment variables of the model (None when not counted, ``max_vars + 1`` when
        there are more).

    >>> model_size(fa.load("diva_table1"), [fa.KAnonymity(2)], recoding="suppression")["pairs"]
    53
    """
    requirements = validate_requirements(instance, requirements, caller="model_size")
    if objective is None:
        objective = "stars" if recoding == "suppression" else "ncp"
    enc = encode(instance, requirements, recoding=recoding, max_range_values=max_range_values)
    distinct = len(np.unique(np.column_stack([enc.qi, enc.protected]), axis=0))
    out = {"types": enc.n_types, "distinct_qi": distinct, "d": enc.d, "pairs": None}
    if max_types is not None and enc.n_types > max_types:
        return out
    closure = _use_closure(requirements, objective)
    k = max([r.k for r in requirements if isinstance(r, KAnonymity)] + [1])
    try:
        out["pairs"] = len(_candidates(enc, closure, k, max_vars).pair_t)
    except InvalidParameterError:
        out["pairs"] = max_vars + 1
    return out


def _use_closure(requirements, objective: str) -> bool:
    """Whether tight class summaries lose no optimum (module docstring)."""
    return all(isinstance(r, (KAnonymity, LDiversity, TCloseness)) for r in requirements) and (
        objective in _MONOTONE_OBJECTIVES
    )


# ====================================================================== the model
@dataclass
class PartitionModel:
    """A built CP-SAT model and what is needed to read its solutions back.

    Attributes
    ----------
    model : CpModel
    encoding : Encoding
    vectors : list of tuple
        Candidate released vectors (protected code, label id per attribute).
    pair_t, pair_v : numpy.ndarray
        Type and vector of each assignment variable ``x[i]``.
    x : list of IntVar
    z : list of BoolVar
    literals : list of BoolVar
        One enforcement literal per requirement (explanation models only).
    objective : str
    scale : int
        Model objective = true objective x scale.
    objective_expr : LinearExpr or None
    entropy : list of (vector, counts vars, requirement, target)
        Classes to check exactly after a solve.
    n_contexts : int
        alpha-protection contexts modelled.
    mode : str
        "closure" or "all" (candidate vectors).
    """

    model: cp_model.CpModel
    encoding: Encoding
    vectors: list[tuple]
    pair_t: np.ndarray
    pair_v: np.ndarray
    x: list
    z: list
    y: list
    literals: list
    objective: str
    scale: int
    objective_expr: object
    pair_cost: np.ndarray
    entropy: list
    n_contexts: int
    mode: str
    by_vector: list[np.ndarray] = field(default_factory=list)


def _lcm(values) -> int:
    out = 1
    for v in values:
        out = out * v // math.gcd(out, v)
    return out


def _pair_costs(
    enc: Encoding, vectors: list[tuple], pair_t, pair_v, objective: str
) -> tuple[np.ndarray, int]:
    """Integer cost of every (type, vector) pair and the scale: cost / scale is the exact
    objective contribution of one record."""
    n_pairs = len(pair_t)
    if objective == "discernibility":
        return np.zeros(n_pairs, dtype=np.int64), 1
    arr = np.array(vectors, dtype=np.int64).reshape(len(vectors), enc.d + 1)
    per_attr = []
    for a, space in enumerate(enc.spaces):
        labels = arr[pair_v, a + 1]
        if objective == "stars":
            per_attr.append(([Fraction(int(x)) for x in space.star], labels))
        elif objective == "generalized":
            own = space.own[enc.qi[pair_t, a]]
            per_attr.append(([Fraction(0), Fraction(1)], (labels != own).astype(np.int64)))
        else:
            per_attr.append((space.ncp if objective == "ncp" else space.lm, labels))
    scale = _lcm({c.denominator for table, _ in per_attr for c in table})
    if scale * max(enc.d, 1) * int(enc.weight.sum()) >= 2**60:
        raise InvalidParameterError(
            f"The {objective!r} objective of instance {enc.instance.name!r} needs a common "
            f"denominator of {scale}, too large for exact integer costs; round numeric values "
            "or bin them first."
        )
    costs = np.zeros(n_pairs, dtype=np.int64)
    for table, index in per_attr:
        scaled = np.array([int(c * scale) for c in table], dtype=np.int64)
        costs += scaled[index]
    return costs, scale


def build_partition_model(
    enc: Encoding,
    requirements: Sequence[Requirement],
    *,
    objective: str = "ncp",
    closure: bool | None = None,
    prune: bool = True,
    explain: bool = False,
    max_vars: int = 200_000,
    max_contexts: int = 5_000,
) -> PartitionModel:
    """The weighted-type model of the module docstring.

    Parameters
    ----------
    enc : Encoding
        From :func:`encode`.
    requirements : sequence of Requirement
    objective : {"stars", "generalized", "discernibility", "ncp", "lm"}
    closure : bool, optional
        Candidate vectors = the join closure of the types (default: when every
        requirement is union-monotone and the objective is not "discernibility").
    prune : bool, default=True
        Drop vectors that cover fewer than k records.
    explain : bool, default=False
        Guard each requirement by an enforcement literal, with no objective and no
        requirement-dependent pruning (for :func:`fairanon.solver._cpsat.explain`).
    max_vars, max_contexts : int
        Size limits (see :func:`cpsat`).
    """
    if closure is None:
        closure = _use_closure(requirements, objective) and not explain
    k = max([r.k for r in requirements if isinstance(r, KAnonymity)] + [1])
    cands = _candidates(enc, closure, k if (prune and not explain) else 1, max_vars)
    vectors, pair_t, pair_v = cands.vectors, cands.pair_t, cands.pair_v
    model = cp_model.CpModel()
    w = enc.weight
    x = []
    for i, (t, v) in enumerate(zip(pair_t.tolist(), pair_v.tolist())):
        if w[t] == 1:
            x.append(model.new_bool_var(f"x[{t},{v}]"))
        else:
            x.append(model.new_int_var(0, int(w[t]), f"x[{t},{v}]"))
    n_vec = len(vectors)
    order = np.argsort(pair_v, kind="stable")
    by_vector = (
        np.split(order, np.searchsorted(pair_v[order], np.arange(1, n_vec))) if n_vec else []
    )
    by_type = np.split(np.arange(len(pair_t)), np.searchsorted(pair_t, np.arange(1, enc.n_types)))
    z = [model.new_bool_var(f"z[{v}]") for v in range(n_vec)]
    y = [cp_model.LinearExpr.sum([x[i] for i in by_vector[v]]) for v in range(n_vec)]
    reach = [int(w[pair_t[by_vector[v]]].sum()) for v in range(n_vec)]

    # Every record is released exactly once.
    for t in range(enc.n_types):
        members = by_type[t] if t < len(by_type) else []
        model.add(cp_model.LinearExpr.sum([x[i] for i in members]) == int(w[t])).with_name(
            f"release[{t}]"
        )
    # A vector holds records only if used, and a used vector holds at least one.
    weights = w[pair_t].tolist()
    for v in range(n_vec):
        zv = z[v]
        for i in by_vector[v].tolist():
            if weights[i] == 1:
                model.add_implication(x[i], zv)
            else:
                model.add(x[i] <= weights[i] * zv)
        model.add(y[v] >= zv).with_name(f"used[{v}]")

    pm = PartitionModel(
        model,
        enc,
        vectors,
        pair_t,
        pair_v,
        x,
        z,
        y,
        [],
        objective,
        1,
        None,
        np.zeros(0, dtype=np.int64),
        [],
        0,
        cands.mode,
        by_vector,
    )
    for index, req in enumerate(requirements):
        lit = model.new_bool_var(f"enforce[{index}]") if explain else None
        if explain:
            pm.literals.append(lit)
        guard = [lit] if lit is not None else []
        if isinstance(req, KAnonymity):
            for v in range(n_vec):
                model.add(y[v] >= req.k * z[v]).with_name(f"k[{index},{v}]").only_enforce_if(guard)
        elif isinstance(req, (LDiversity, TCloseness)):
            for name in requirement_targets(enc.instance.schema, req):
                _add_target_requirement(pm, req, index, enc.targets[name], guard, reach)
        elif isinstance(req, DiversityConstraint):
            _add_diversity(pm, req, index, guard)
        elif isinstance(req, AlphaProtection):
            _add_alpha(pm, req, index, guard, max_contexts)
        else:  # pragma: no cover - validate_requirements accepts no other kind
            raise IncompatibleRequirementError(f"cpsat cannot enforce {req}.")

    if not explain:
        _set_objective(pm, reach)
    return pm


def _set_objective(pm: PartitionModel, reach: list[int]) -> None:
    model = pm.model
    if pm.objective == "discernibility":
        squares = []
        for v, expr in enumerate(pm.y):
            size = model.new_int_var(0, reach[v], f"size[{v}]")
            model.add(size == expr)
            sq = model.new_int_var(0, reach[v] ** 2, f"sq[{v}]")
            model.add_multiplication_equality(sq, [size, size])
            squares.append(sq)
        pm.objective_expr = cp_model.LinearExpr.sum(squares)
        pm.scale = 1
    else:
        costs, scale = _pair_costs(pm.encoding, pm.vectors, pm.pair_t, pm.pair_v, pm.objective)
        pm.pair_cost = costs
        pm.scale = scale
        pm.objective_expr = cp_model.LinearExpr.weighted_sum(pm.x, costs.tolist())
    model.minimize(pm.objective_expr)


def _counts(pm: PartitionModel, target: _Target, v: int) -> list:
    """cnt[v,s] as linear expressions."""
    members = pm.by_vector[v]
    per = [[] for _ in range(target.m)]
    for i in members:
        per[int(target.codes[pm.pair_t[i]])].append(pm.x[i])
    return [cp_model.LinearExpr.sum(p) for p in per]


def _add_target_requirement(pm, req, index, target: _Target, guard, reach) -> None:
    model = pm.model
    m = target.m
    if isinstance(req, LDiversity) and req.variant == "distinct":
        for v in range(len(pm.vectors)):
            cnt = _counts(pm, target, v)
            has = []
            for s in range(m):
                h = model.new_bool_var(f"has[{index},{v},{s}]")
                model.add(h <= cnt[s])
                has.append(h)
            model.add(cp_model.LinearExpr.sum(has) >= int(req.l) * pm.z[v]).with_name(
                f"l[{index},{v}]"
            ).only_enforce_if(guard)
    elif isinstance(req, LDiversity) and req.variant == "recursive":
        c_n, c_d, l = req.c.numerator, req.c.denominator, int(req.l)
        for v in range(len(pm.vectors)):
            cnt = _counts(pm, target, v)
            top = model.new_int_var(0, reach[v], f"rmax[{index},{v}]")
            lam = model.new_int_var(0, reach[v], f"rlam[{index},{v}]")
            mus = []
            for s in range(m):
                model.add(top >= cnt[s])
                mu = model.new_int_var(0, reach[v], f"rmu[{index},{v},{s}]")
                model.add(mu >= cnt[s] - lam)
                mus.append(mu)
            tail = (l - 1) * lam + cp_model.LinearExpr.sum(mus)
            model.add(c_d * top + c_n * tail <= c_n * pm.y[v] - 1).with_name(
                f"l[{index},{v}]"
            ).only_enforce_if(guard + [pm.z[v]])
    elif isinstance(req, LDiversity):  # entropy: a relaxation, made exact by lazy cuts
        l_val = Fraction(req.l)
        for v in range(len(pm.vectors)):
            cnt = _counts(pm, target, v)
            n_v = reach[v]
            f_table = [0] + [
                math.floor(_ENTROPY_SCALE * c * math.log(c)) - 1 for c in range(1, n_v + 1)
            ]
            g_table = [0] + [
                math.ceil(_ENTROPY_SCALE * (s * (math.log(s) - math.log(l_val)))) + 1
                for s in range(1, n_v + 1)
            ]
            cvars, fvals = [], []
            for s in range(m):
                cv = model.new_int_var(0, n_v, f"ecnt[{index},{v},{s}]")
                model.add(cv == cnt[s])
                fv = model.new_int_var(min(f_table), max(f_table), f"ef[{index},{v},{s}]")
                model.add_element(cv, f_table, fv)
                cvars.append(cv)
                fvals.append(fv)
            size = model.new_int_var(0, n_v, f"esize[{index},{v}]")
            model.add(size == pm.y[v])
            gv = model.new_int_var(min(g_table), max(g_table), f"eg[{index},{v}]")
            model.add_element(size, g_table, gv)
            model.add(cp_model.LinearExpr.sum(fvals) <= gv).with_name(
                f"l[{index},{v}]"
            ).only_enforce_if(guard)
            pm.entropy.append((v, cvars, l_val, guard))
    else:  # t-closeness
        _add_tcloseness(pm, req, index, target, guard, reach)


def _add_tcloseness(pm, req: TCloseness, index, target: _Target, guard, reach) -> None:
    model = pm.model
    glob = [int(c) for c in target.global_counts]
    total = int(sum(glob))
    t_n, t_d = req.t.numerator, req.t.denominator
    if req.distance == "hierarchical":
        hierarchy = pm.encoding.instance.schema[target.name].hierarchy
        ground = M.EMDGround.hierarchical(hierarchy, [str(v) for v in target.values])
        rows = [
            (int(wt), [int(b) for b in row]) for row, wt in zip(ground.membership, ground.weights)
        ]
        factor = 2 * ground.height
    elif req.distance == "ordered":
        rows = [(1, [1] * (i + 1) + [0] * (target.m - i - 1)) for i in range(target.m)]
        factor = max(target.m - 1, 1)
    else:
        rows = [(1, [int(s == i) for s in range(target.m)]) for i in range(target.m)]
        factor = 2
    for v in range(len(pm.vectors)):
        cnt = _counts(pm, target, v)
        bound = total * reach[v]
        terms = []
        for r, (weight, member) in enumerate(rows):
            coef_n = [total * b for b in member]
            glob_part = sum(g * b for g, b in zip(glob, member))
            expr = cp_model.LinearExpr.weighted_sum(cnt, coef_n) - glob_part * pm.y[v]
            aux = model.new_int_var(0, bound, f"emd[{index},{v},{r}]")
            model.add(aux >= expr)
            model.add(aux >= -expr)
            terms.append((weight, aux))
        lhs = cp_model.LinearExpr.weighted_sum([a for _, a in terms], [wt for wt, _ in terms])
        model.add(t_d * lhs <= t_n * factor * total * pm.y[v]).with_name(
            f"t[{index},{v}]"
        ).only_enforce_if(guard)


def _shows(pm: PartitionModel, v: int, names: list[str]) -> bool:
    """Whether vector v releases the named generalizable attributes as own values."""
    enc = pm.encoding
    vec = pm.vectors[v]
    for name in names:
        a = [s.name for s in enc.spaces].index(name)
        if int(vec[a + 1]) >= enc.spaces[a].m:  # own labels are numbered first
            return False
    return True


def _type_matches(enc: Encoding, t: int, req: DiversityConstraint) -> bool:
    names = enc.names
    for name, value in req.target:
        attr = enc.instance.schema[name]
        if name in names:
            own = enc.values[names.index(name)][int(enc.qi[t, names.index(name)])]
            if attr.kind == "numeric":
                try:
                    if float(own) != float(value):
                        return False
                except ValueError:
                    return False
            elif own != value:
                return False
        else:
            text = enc.extra[name][t]
            if attr.kind == "numeric":
                try:
                    if float(text) != float(value):
                        return False
                except ValueError:
                    return False
            elif text != value:
                return False
    return True


def _add_diversity(pm, req: DiversityConstraint, index, guard) -> None:
    enc = pm.encoding
    names = [s.name for s in enc.spaces]
    gen = [name for name, _ in req.target if name in names]
    matching = {t for t in range(enc.n_types) if _type_matches(enc, t, req)}
    shown = [v for v in range(len(pm.vectors)) if _shows(pm, v, gen)]
    terms = [pm.x[i] for v in shown for i in pm.by_vector[v] if int(pm.pair_t[i]) in matching]
    count = cp_model.LinearExpr.sum(terms)
    pm.model.add(count >= req.lower).with_name(f"diversity_lower[{index}]").only_enforce_if(guard)
    pm.model.add(count <= req.upper).with_name(f"diversity_upper[{index}]").only_enforce_if(guard)


# ---------------------------------------------------------------------- alpha-protection
def _contexts(pm: PartitionModel) -> dict[tuple, list[int]]:
    """Every non-empty itemset of released labels some candidate vector reaches, with
    the vectors in its cover. Keys are (attribute positions, labels)."""
    d = pm.encoding.d
    arr = np.array(pm.vectors, dtype=np.int64).reshape(len(pm.vectors), d + 1)[:, 1:]
    out: dict[tuple, list[int]] = {}
    for size in range(1, d + 1):
        for attrs in itertools.combinations(range(d), size):
            proj = arr[:, list(attrs)]
            for v, row in enumerate(proj.tolist()):
                out.setdefault((attrs, tuple(row)), []).append(v)
    return out


def _add_alpha(pm, req: AlphaProtection, index, guard, max_contexts) -> None:
    enc = pm.encoding
    model = pm.model
    total = int(enc.weight.sum())
    neg = int(enc.weight[enc.neg_flag].sum())
    cells = [
        enc.prot_flag & enc.neg_flag,
        enc.prot_flag & ~enc.neg_flag,
        ~enc.prot_flag & enc.neg_flag,
        ~enc.prot_flag & ~enc.neg_flag,
    ]
    # The empty itemset (the whole table) does not depend on the release.
    whole = [int(enc.weight[c].sum()) for c in cells]
    if not _alpha_holds_exact(req, whole, neg, total):
        model.add_bool_or([]).with_name(f"alpha[{index},whole table]").only_enforce_if(guard)
    contexts = _contexts(pm) if enc.d else {}
    if len(contexts) > max_contexts:
        raise IncompatibleRequirementError(
            f"cpsat cannot enforce {req} on instance {enc.instance.name!r}: it needs "
            f"{len(contexts)} contexts, more than max_contexts={max_contexts}. Raise "
            "max_contexts, use fewer quasi-identifiers, or use recoding='suppression'."
        )
    cell_of = np.select(cells, [0, 1, 2, 3])
    pm.n_contexts += len(contexts) + 1
    for c_id, ((attrs, labels), vecs) in enumerate(contexts.items()):
        parts: list[list] = [[], [], [], []]
        bounds = [0, 0, 0, 0]
        for v in vecs:
            for i in pm.by_vector[v]:
                t = int(pm.pair_t[i])
                parts[int(cell_of[t])].append(pm.x[i])
        for q in range(4):
            # a record of a type counts once in a context even if several vectors reach it
            types = {
                int(pm.pair_t[i])
                for v in vecs
                for i in pm.by_vector[v]
                if cell_of[pm.pair_t[i]] == q
            }
            bounds[q] = int(sum(enc.weight[t] for t in types))
        name = f"{index},{c_id}"
        a, b, c, d = (model.new_int_var(0, bounds[q], f"{'abcd'[q]}[{name}]") for q in range(4))
        for var, part in zip((a, b, c, d), parts):
            model.add(var == cp_model.LinearExpr.sum(part))
        _alpha_context(model, req, name, (a, b, c, d), bounds, neg, total, guard)


def _alpha_holds_exact(req: AlphaProtection, counts, neg: int, total: int) -> bool:
    a, b, c, d = counts
    if req.min_support and a + b + c + d < req.min_support:
        return True
    value = M.discrimination_exact(req.measure, a, b, c, d, neg, total)
    if req.larger_is_worse:
        return value < req.alpha if req.strict else value <= req.alpha
    return value > req.alpha if req.strict else value >= req.alpha


class _Affine:
    """c0 + sum(coef * var): a tiny affine form over the context counts."""

    def __init__(self, const=0, terms=()):
        self.const = const
        self.terms = tuple(terms)

    def is_const(self) -> bool:
        return not self.terms

    def expr(self):
        if not self.terms:
            return self.const
        return (
            cp_model.LinearExpr.weighted_sum([v for v, _ in self.terms], [c for _, c in self.terms])
            + self.const
        )

    def upper(self, bounds) -> int:
        return self.const + sum(c * bounds[v] for v, c in self.terms)

    def scaled(self, k: int) -> _Affine:
        return _Affine(self.const * k, [(v, c * k) for v, c in self.terms])

    def __add__(self, other: _Affine) -> _Affine:
        return _Affine(self.const + other.const, self.terms + other.terms)


def _alpha_context(model, req: AlphaProtection, name, abcd, bounds, neg, total, guard) -> None:
    """f(context) <= alpha (>= for RC, EC) in every tokenism case, by cross-multiplying."""
    a, b, c, d = abcd
    ub = dict(zip(abcd, bounds))
    n1 = model.new_int_var(0, bounds[0] + bounds[1], f"n1[{name}]")
    n2 = model.new_int_var(0, bounds[2] + bounds[3], f"n2[{name}]")
    model.add(n1 == a + b)
    model.add(n2 == c + d)
    ub[n1] = bounds[0] + bounds[1]
    ub[n2] = bounds[2] + bounds[3]
    size = model.new_int_var(0, ub[n1] + ub[n2], f"n[{name}]")
    model.add(size == n1 + n2)
    ub[size] = ub[n1] + ub[n2]
    # The context is checked when it has records (and at least min_support of them).
    check = model.new_bool_var(f"checked[{name}]")
    threshold = max(1, req.min_support or 1)
    model.add(size >= threshold).only_enforce_if(check)
    model.add(size <= threshold - 1).only_enforce_if(~check)
    e1 = model.new_bool_var(f"has_protected[{name}]")
    model.add(n1 >= 1).only_enforce_if(e1)
    model.add(n1 == 0).only_enforce_if(~e1)
    e2 = model.new_bool_var(f"has_unprotected[{name}]")
    model.add(n2 >= 1).only_enforce_if(e2)
    model.add(n2 == 0).only_enforce_if(~e2)
    products: dict = {}

    def product(f: _Affine, g: _Affine):
        if f.is_const():
            return g.scaled(f.const)
        if g.is_const():
            return f.scaled(g.const)
        key = (
            tuple(sorted((v.index, c) for v, c in f.terms)),
            f.const,
            tuple(sorted((v.index, c) for v, c in g.terms)),
            g.const,
        )
        if key not in products:
            hi = max(f.upper(ub), 0) * max(g.upper(ub), 0)
            prod = model.new_int_var(0, hi, f"prod{len(products)}[{name}]")
            model.add_multiplication_equality(prod, [f.expr(), g.expr()])
            ub[prod] = hi
            products[key] = prod
        return _Affine(0, [(products[key], 1)])

    one = lambda var: _Affine(0, [(var, 1)])
    al_n, al_d = req.alpha.numerator, req.alpha.denominator
    for has1, has2 in ((True, True), (True, False), (False, True)):
        lits = guard + [check, e1 if has1 else ~e1, e2 if has2 else ~e2]
        # p1 = A1/D1 and p2 = A2/D2 with Ruggieri's tokenism extension; p = A/D.
        A1, D1 = (one(a), one(n1)) if has1 else (_Affine(neg), _Affine(total))
        A2, D2 = (one(c), one(n2)) if has2 else (_Affine(neg), _Affine(total))
        A, D = one(a) + one(c), one(size)
        measure = req.measure
        if measure in ("RD", "ED"):
            Aq, Dq = (A2, D2) if measure == "RD" else (A, D)
            lhs = product(A1, Dq) + product(Aq, D1).scaled(-1)
            rhs = product(D1, Dq)
            _add_if(model, al_d * lhs.expr() <= al_n * rhs.expr() - (1 if req.strict else 0), lits)
            continue
        if measure == "RR":
            X, Y = product(A1, D2), product(D1, A2)
        elif measure == "ER":
            X, Y = product(A1, D), product(D1, A)
        elif measure == "RC":
            X, Y = product(D1 + A1.scaled(-1), D2), product(D1, D2 + A2.scaled(-1))
        elif measure == "EC":
            X, Y = product(D1 + A1.scaled(-1), D), product(D1, D + A.scaled(-1))
        else:  # OR
            X, Y = product(A1, D2 + A2.scaled(-1)), product(D1 + A1.scaled(-1), A2)
        _ratio_condition(model, req, name, X, Y, lits, al_n, al_d)


def _ratio_condition(model, req, name, X: _Affine, Y: _Affine, lits, al_n, al_d) -> None:
    """X/Y <= alpha (>= for RC, EC) with x/0 = inf and 0/0 = 1 (measures.py)."""
    alpha = req.alpha
    xe, ye = X.expr(), Y.expr()
    if isinstance(xe, int) and isinstance(ye, int):
        value = Fraction(xe, ye) if ye else (math.inf if xe > 0 else Fraction(1))
        if req.larger_is_worse:
            ok = value < alpha if req.strict else value <= alpha
        else:
            ok = value > alpha if req.strict else value >= alpha
        if not ok:
            model.add_bool_or([]).only_enforce_if(lits)
        return
    yzero = model.new_bool_var(f"ratio_den_zero[{name}]")
    _add_if(model, ye == 0, [yzero])
    _add_if(model, ye >= 1, [~yzero])
    if req.larger_is_worse:
        _add_if(model, al_d * xe <= al_n * ye - (1 if req.strict else 0), lits + [~yzero])
        # denominator 0: the value is inf (x > 0) or 1 (x = 0)
        _add_if(model, xe == 0, lits + [yzero])
        if (alpha <= 1) if req.strict else (alpha < 1):
            model.add_bool_or([]).only_enforce_if(lits + [yzero])
    else:
        _add_if(model, al_d * xe >= al_n * ye + (1 if req.strict else 0), lits + [~yzero])
        if (alpha >= 1) if req.strict else (alpha > 1):
            _add_if(model, xe >= 1, lits + [yzero])


def _add_if(model: cp_model.CpModel, constraint, literals) -> None:
    """Add `constraint` under `literals`; a constant constraint is dropped if true and
    forbids the literals if false."""
    if isinstance(constraint, (bool, np.bool_)):
        if not constraint:
            model.add_bool_or([]).only_enforce_if(literals)
        return
    model.add(constraint).only_enforce_if(literals)


# ====================================================================== solving
def _hint_from_release(pm: PartitionModel, release: Release) -> dict:
    """Map a heuristic release to a (partial) solution: each released label becomes the
    most specific candidate label covering what it covers."""
    from ..instances.generalization import label_covers

    enc = pm.encoding
    table = release.table
    if not table.index.equals(enc.instance.row_ids):
        try:
            table = table.loc[enc.instance.row_ids]
        except KeyError:
            return {}
    per_attr = []
    for a, space in enumerate(enc.spaces):
        col = table[space.name].astype(str).to_numpy()
        uniq, inv = np.unique(col, return_inverse=True)
        covers = label_covers(space.attr, list(uniq))
        mapped = []
        for u in range(len(uniq)):
            if space.attr.kind == "numeric":
                vals = np.array(space.values)
                mask = covers.contains(np.full(space.m, u), vals)
            else:
                codes = np.array([space.attr.domain.index(v) for v in space.values])
                mask = covers.mask[u][codes]
            if mask.sum() <= 1 and mask.any() and uniq[u] in space.texts[: space.m]:
                mapped.append(space.texts.index(uniq[u]))
                continue
            ok = ~(mask[None, :] & ~space.masks).any(axis=1)
            if mask.sum() > 1:
                ok[space.own] = False
            cand = np.flatnonzero(ok)
            mapped.append(int(cand[np.lexsort((cand, space.sizes[cand]))[0]]) if len(cand) else -1)
        per_attr.append(np.array(mapped, dtype=np.int64)[inv.reshape(-1)])
    index = {vec: v for v, vec in enumerate(pm.vectors)}
    pair_index = {(int(t), int(v)): i for i, (t, v) in enumerate(zip(pm.pair_t, pm.pair_v))}
    counts: dict[tuple, int] = {}
    for row in range(enc.instance.n_rows):
        vec = (int(enc.protected[enc.row_type[row]]),) + tuple(int(p[row]) for p in per_attr)
        v = index.get(vec)
        if v is None:
            continue
        key = (int(enc.row_type[row]), v)
        if key in pair_index:
            counts[key] = counts.get(key, 0) + 1
    hint = {pm.x[pair_index[key]]: value for key, value in counts.items()}
    used = {v for _, v in counts}
    hint.update({pm.z[v]: int(v in used) for v in range(len(pm.vectors))})
    return hint


def _entropy_violations(pm: PartitionModel, solver: cp_model.CpSolver) -> list:
    """Classes the relaxed entropy constraint admitted but exact arithmetic rejects."""
    bad = []
    for v, cvars, l_val, guard in pm.entropy:
        counts = np.array([[solver.value(c) for c in cvars]], dtype=np.int64)
        if counts.sum() and not M.entropy_l_ok(counts, l_val)[0]:
            bad.append((v, cvars, counts[0].tolist(), guard))
    return bad


def _forbid_counts(model: cp_model.CpModel, cvars, counts, guard) -> None:
    """No-good: these count variables may not take exactly these values."""
    differs = []
    for var, value in zip(cvars, counts):
        lit = model.new_bool_var("")
        model.add(var != value).only_enforce_if(lit)
        model.add(var == value).only_enforce_if(~lit)
        differs.append(lit)
    model.add_bool_or(differs).only_enforce_if(guard)


def solve_partition(
    pm: PartitionModel,
    *,
    time_limit: float | None = None,
    seed: int = 0,
    num_workers: int = 1,
    hint: dict | None = None,
    log: bool = False,
    export=None,
) -> tuple[cp_model.CpSolver | None, _cpsat.Outcome, dict]:
    """Solve a built model; entropy classes are checked exactly and cut off until none
    violates. Returns the solver holding the solution, the outcome and statistics."""
    deadline = None if time_limit is None else time.perf_counter() + time_limit
    rounds, lazy_cuts, logs = 0, 0, []
    while True:
        rounds += 1
        solver, outcome = _cpsat.solve(
            pm.model,
            time_limit=_cpsat.remaining(deadline),
            num_workers=num_workers,
            seed=seed,
            hint=hint,
            log=log,
            export=export if rounds == 1 else None,
        )
        if outcome.log:
            logs.append(outcome.log)
        if not outcome.has_solution or not pm.entropy:
            break
        bad = _entropy_violations(pm, solver)
        if not bad:
            break
        for _, cvars, counts, guard in bad:
            _forbid_counts(pm.model, cvars, counts, guard)
            lazy_cuts += 1
        if deadline is not None and time.perf_counter() >= deadline:
            outcome = _cpsat.Outcome(Status.UNKNOWN, "UNKNOWN", stats=outcome.stats)
            break
    outcome.log = "\n".join(logs) if log else None
    return solver, outcome, {"rounds": rounds, "lazy_cuts": lazy_cuts}


def _assignment(pm: PartitionModel, solver: cp_model.CpSolver) -> np.ndarray:
    """Vector id of every instance row (records of a type are split in row order)."""
    enc = pm.encoding
    out = np.full(enc.instance.n_rows, -1, dtype=np.int64)
    filled = np.zeros(enc.n_types, dtype=np.int64)
    for i, var in enumerate(pm.x):
        count = int(solver.value(var))
        if count:
            t = int(pm.pair_t[i])
            rows = enc.rows[t][filled[t] : filled[t] + count]
            out[rows] = int(pm.pair_v[i])
            filled[t] += count
    if (out < 0).any():  # pragma: no cover - the model releases every record once
        raise SolverError("The CP-SAT solution leaves some records unassigned.")
    return out


def _table(enc: Encoding, vectors: list[tuple], assignment: np.ndarray) -> pd.DataFrame:
    instance = enc.instance
    arr = np.array(vectors, dtype=np.int64).reshape(len(vectors), enc.d + 1)
    names = [s.name for s in enc.spaces]
    out = {}
    for name in instance.table.columns:
        attr = instance.schema[name]
        if not attr.released:
            continue
        if name in names:
            a = names.index(name)
            space = enc.spaces[a]
            labels = arr[assignment, a + 1]
            used, inv = np.unique(labels, return_inverse=True)
            out[name] = pd.Categorical.from_codes(inv.reshape(-1), [space.texts[j] for j in used])
        else:
            out[name] = instance.table[name]
    return pd.DataFrame(out, index=instance.table.index)


def _exact_objective(pm: PartitionModel, solver) -> int | Fraction:
    if pm.objective == "discernibility":
        return int(sum(solver.value(e) ** 2 for e in pm.y))
    total = Fraction(
        sum(int(c) * int(solver.value(x)) for c, x in zip(pm.pair_cost, pm.x) if c), pm.scale
    )
    return int(total) if total.denominator == 1 else total


def _exact_bound(pm: PartitionModel, bound: float | None) -> int | Fraction | None:
    if bound is None:
        return None
    scaled = math.ceil(bound - 1e-6)
    value = Fraction(scaled, pm.scale)
    return int(value) if value.denominator == 1 else value


def _fully_generalized(enc: Encoding) -> tuple[pd.DataFrame, np.ndarray]:
    """The table with every generalizable quasi-identifier ``*`` (for INFEASIBLE and
    UNKNOWN releases, which hand out no table)."""
    vectors = []
    index = {}
    assignment = np.empty(enc.instance.n_rows, dtype=np.int64)
    star = tuple(int(np.argmax(s.sizes)) for s in enc.spaces)
    for t in range(enc.n_types):
        vec = (int(enc.protected[t]),) + star
        if vec not in index:
            index[vec] = len(vectors)
            vectors.append(vec)
        assignment[enc.rows[t]] = index[vec]
    return _table(enc, vectors, assignment), assignment


def _check_options(recoding, objective, max_vars, max_contexts, max_range_values, hint):
    if recoding not in RECODINGS:
        raise InvalidParameterError(
            f"The 'recoding' parameter of cpsat must be one of {', '.join(map(repr, RECODINGS))}. "
            f"Got {recoding!r} instead."
        )
    if objective is not None and objective not in OBJECTIVES:
        raise InvalidParameterError(
            f"The 'objective' parameter of cpsat must be one of {', '.join(map(repr, OBJECTIVES))} "
            f"or None. Got {objective!r} instead."
        )
    for name, value in (
        ("max_vars", max_vars),
        ("max_contexts", max_contexts),
        ("max_range_values", max_range_values),
    ):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise InvalidParameterError(
                f"The {name!r} parameter of cpsat must be an int in [1, inf). "
                f"Got {value!r} instead."
            )
    if not (hint is None or hint == "auto" or isinstance(hint, Release)):
        raise InvalidParameterError(
            "The 'hint' parameter of cpsat must be 'auto', None or a Release. "
            f"Got {hint!r} instead."
        )


def _default_hint(instance, requirements, seed):
    """Mondrian's release when it can enforce every requirement (k, l, t), else None."""
    if not all(isinstance(r, (KAnonymity, LDiversity, TCloseness)) for r in requirements):
        return None
    from ..exceptions import FairanonError
    from ..heuristics.mondrian import mondrian

    try:
        release = mondrian(instance, requirements, seed=seed)
    except FairanonError:  # a warm start is optional: the exact model does not need one
        return None
    return release if release.status == Status.FEASIBLE else None


def cpsat(
    instance: Instance,
    requirements: Sequence[Requirement],
    *,
    seed=None,
    time_limit: float | None = None,
    recoding: str = "generalization",
    objective: str | None = None,
    num_workers: int | None = None,
    hint="auto",
    explain: bool = True,
    log: bool = False,
    export=None,
    max_vars: int = 200_000,
    max_contexts: int = 5_000,
    max_range_values: int = 16,
) -> Release:
    """Optimal local recoding (or local suppression) under every requirement type, with a
    certificate: the exact CP-SAT model of the module docstring [1]_ [2]_ [3]_.

    Parameters
    ----------
    instance, seed
        As in :func:`fairanon.anonymize`; CP-SAT's ``random_seed`` derives from `seed`.
    requirements : sequence of Requirement
        Any mix of KAnonymity, LDiversity (distinct, entropy, recursive), TCloseness
        (equal, ordered, hierarchical), DiversityConstraint and AlphaProtection (every
        measure, strict or not, with or without minimum support).
    time_limit : float, optional
        Seconds for the whole run: the model is built first (not interruptible; its
        time is ``provenance["model"]["build_s"]``) and the search gets what remains.
        When it runs out, the best release found is returned as FEASIBLE with its
        bound and gap, or UNKNOWN.
    recoding : {"generalization", "suppression"}, default="generalization"
        "generalization": each class releases, per attribute, any label covering its
        values -- a hierarchy node (categorical), a range of values in order
        (ordered, numeric), or ``*``. "suppression": the class's common value or ``*``
        (DIVA's semantics; a homogeneous attribute may still be starred).
    objective : {"stars", "generalized", "discernibility", "ncp", "lm"}, optional
        Default: "stars" for suppression, "ncp" for generalization. See
        :data:`OBJECTIVES`; the release's ``objective`` is the exact value (an int or a
        Fraction) and ``bound`` the proven lower bound.
    num_workers : int, optional
        CP-SAT workers; default ``max(8, cores)``
        (:data:`fairanon.solver._cpsat.DEFAULT_WORKERS`: CP-SAT's strongest bound
        workers only run from about 8 on).
    hint : "auto", None or Release, default="auto"
        A warm start. "auto" uses Mondrian's release when every requirement is k, l
        or t.
    explain : bool, default=True
        When the requirements admit no release, find which of them conflict: each is
        guarded by an assumption literal, one worker reads the sufficient assumptions
        and deletion shrinks them to a minimal set, named in ``reason`` and
        ``provenance["conflict"]``.
    log : bool, default=False
        Keep the CP-SAT log in ``provenance["solver_log"]``.
    export : path, optional
        Write the model to this file (``.pb.txt``: text format).
    max_vars : int, default=200000
        Refuse models with more assignment variables (InvalidParameterError).
    max_contexts : int, default=5000
        Refuse alpha-protection with more contexts (IncompatibleRequirementError).
    max_range_values : int, default=16
        Numeric and ordered attributes with at most this many distinct values may be
        released as any range; above it, ordered attributes use their hierarchy and
        numeric ones their nested intervals.

    Returns
    -------
    Release
        OPTIMAL (proven), FEASIBLE (``bound`` and ``provenance["gap"]``), INFEASIBLE
        (``reason`` names the conflicting requirements) or UNKNOWN. A release with a
        table has been checked by :func:`fairanon.verify`; the report is in
        ``provenance["verification"]``.

    Raises
    ------
    InvalidParameterError
        Bad options, or a model larger than `max_vars`.
    IncompatibleRequirementError
        alpha-protection with more than `max_contexts` contexts.
    SolverError
        CP-SAT found the model invalid, or the verifier rejected a solver release
        (both bugs).

    Notes
    -----
    Exactness: the optimum is over every partition of the records into classes and
    every label choice per class and attribute, within the candidate labels (all
    hierarchy nodes; all ranges of up to `max_range_values` values, else hierarchy
    nodes or nested intervals). Labels covering the same data values are identified
    (the most specific is released), except that a value's own label is kept apart.
    With only k, l and t and a monotone objective, candidates are restricted to tight
    class summaries (join closure), which loses no optimum. Every record is released:
    whole-record suppression is a ``*`` on each generalizable attribute.

    Size: one variable per (type, candidate vector) pair; types are the distinct
    records on the attributes the requirements read, so duplicates cost nothing.
    alpha-protection adds, per reachable context, four counts, three tokenism cases
    and up to three integer products. Entropy l-diversity is solved through a relaxed
    table constraint and exact lazy checks. With ``num_workers > 1`` and an OPTIMAL
    status, the release is recomputed by one worker with the objective fixed (within a
    deterministic-time budget), so the same seed gives the same release;
    ``provenance["canonical"]`` says whether that succeeded (on large models it may
    not, and ties between equally good releases then depend on thread timing).

    References
    ----------
    .. [1] R. Bredereck, A. Nichterlein, R. Niedermeier, G. Philip. The effect of
       homogeneity on the computational complexity of combinatorial data anonymization.
       Data Min. Knowl. Disc. 28(1), 2014 (the ILP over row types).
    .. [2] M. Milani, Y. Huang, F. Chiang. Preserving diversity in anonymized data.
       EDBT 2021 ((k, Sigma)-anonymization by suppression).
    .. [3] S. Ruggieri. Using t-closeness anonymity to control for non-discrimination.
       Transactions on Data Privacy 7(2), 2014.

    Examples
    --------
    >>> from fairanon.models.diversity import diva_sigma
    >>> inst = fa.load("diva_table1")
    >>> reqs = [fa.KAnonymity(2), *diva_sigma()]
    >>> rel = cpsat(inst, reqs, recoding="suppression", seed=0, num_workers=1)
    >>> rel.status, rel.objective
    (<Status.OPTIMAL: 'OPTIMAL'>, 22)
    >>> fa.verify(inst, rel, reqs).passed
    True
    """
    started = time.perf_counter()
    if not isinstance(instance, Instance):
        raise InvalidParameterError(
            "The 'instance' parameter of cpsat must be an Instance. "
            f"Got {type(instance).__name__} instead."
        )
    requirements = validate_requirements(instance, requirements, caller="cpsat")
    _check_options(recoding, objective, max_vars, max_contexts, max_range_values, hint)
    limit = _cpsat.check_time_limit(time_limit, "cpsat")
    workers = _cpsat.check_num_workers(num_workers, "cpsat")
    solver_seed = _cpsat.random_seed(seed)
    if objective is None:
        objective = "stars" if recoding == "suppression" else "ncp"
    deadline = None if limit is None else started + limit
    params = {
        "recoding": recoding,
        "objective": objective,
        "time_limit": limit,
        "num_workers": workers,
        "explain": explain,
        "max_vars": max_vars,
        "max_contexts": max_contexts,
        "max_range_values": max_range_values,
    }

    enc = encode(instance, requirements, recoding=recoding, max_range_values=max_range_values)
    pm = build_partition_model(
        enc, requirements, objective=objective, max_vars=max_vars, max_contexts=max_contexts
    )
    model_info = {
        "types": enc.n_types,
        "records": instance.n_rows,
        "distinct_qi": len(np.unique(np.column_stack([enc.qi, enc.protected]), axis=0)),
        "vectors": len(pm.vectors),
        "variables": len(pm.x),
        "candidates": pm.mode,
        "contexts": pm.n_contexts,
        "build_s": time.perf_counter() - started,
    }
    hint_release = _default_hint(instance, requirements, seed) if hint == "auto" else hint
    hint_values = _hint_from_release(pm, hint_release) if hint_release is not None else None
    params["hint"] = hint_release.method if hint_release is not None else None

    solver, outcome, lazy = solve_partition(
        pm,
        time_limit=_cpsat.remaining(deadline),
        seed=solver_seed,
        num_workers=workers,
        hint=hint_values,
        log=log,
        export=export,
    )
    extra = {"model": model_info, "solver": {**outcome.stats, **lazy}}
    if log:
        extra["solver_log"] = outcome.log

    if outcome.has_solution:
        canonical = False
        if workers > 1 and outcome.status == Status.OPTIMAL:
            solver, canonical = _canonical(pm, solver, outcome, deadline, solver_seed)
        extra["canonical"] = canonical
        assignment = _assignment(pm, solver)
        value = _exact_objective(pm, solver)
        bound = value if outcome.status == Status.OPTIMAL else _exact_bound(pm, outcome.bound)
        gap = 0.0 if outcome.status == Status.OPTIMAL else outcome.gap
        release = Release(
            table=_table(enc, pm.vectors, assignment),
            groups=assignment,
            status=outcome.status,
            objective=value,
            bound=bound,
            provenance=provenance(
                "cpsat",
                params,
                requirements,
                seed,
                started,
                objective_name=objective,
                gap=gap,
                **extra,
            ),
        )
        return _verified(instance, release, requirements)

    table, groups = _fully_generalized(enc)
    if outcome.status == Status.INFEASIBLE:
        conflict, reason = _explain(
            enc, requirements, explain, deadline, solver_seed, max_vars, max_contexts
        )
        extra["conflict"] = conflict
        return Release(
            table=table,
            groups=groups,
            status=Status.INFEASIBLE,
            reason=reason,
            provenance=provenance("cpsat", params, requirements, seed, started, **extra),
        )
    reason = f"the time limit ({limit} s) ran out before CP-SAT found any release"
    return Release(
        table=table,
        groups=groups,
        status=Status.UNKNOWN,
        reason=reason,
        provenance=provenance("cpsat", params, requirements, seed, started, **extra),
    )


def _canonical(pm: PartitionModel, solver, outcome, deadline, seed):
    """Re-solve with one worker and the objective fixed at the optimum: the solution
    then depends only on the model and the seed, not on thread timing."""
    best = round(outcome.objective)
    fixed = pm.model.clone()
    fixed.clear_objective()
    fixed.add(_clone_expr(pm, fixed) == best)
    clone_solver, out = _cpsat.solve(
        fixed,
        time_limit=_cpsat.remaining(deadline),
        num_workers=1,
        seed=seed,
        deterministic_limit=_CANONICAL_BUDGET,
    )
    if not out.has_solution:
        return solver, False
    # The clone shares variable indices with the original model.
    if pm.entropy and _entropy_violations(pm, clone_solver):
        return solver, False
    return clone_solver, True


def _clone_expr(pm: PartitionModel, fixed: cp_model.CpModel):
    """The objective of `pm` over the variables of its clone `fixed`."""
    proto = pm.model.proto.objective
    variables = [fixed.get_int_var_from_proto_index(i) for i in proto.vars]
    return cp_model.LinearExpr.weighted_sum(variables, list(proto.coeffs)) + int(proto.offset)


def _verified(instance: Instance, release: Release, requirements) -> Release:
    from ..models.verify import verify

    report = verify(instance, release, requirements)
    if not report.passed:
        failed = "; ".join(f"{c.name}: {c.detail or c.achieved}" for c in report.failures)
        raise SolverError(
            f"The verifier rejected a {release.method} release ({failed}); this is a bug in the "
            "exact model, please report it."
        )
    return release.with_provenance(verification=report.to_dict())


def _explain(enc, requirements, explain, deadline, seed, max_vars, max_contexts):
    names = [str(r) for r in requirements]
    if not explain:
        reason = (
            "no release satisfies the requirements together "
            "(CP-SAT proved infeasibility; explain=False)"
        )
        return None, reason
    try:

        def build():
            pm = build_partition_model(
                enc, requirements, explain=True, max_vars=max_vars, max_contexts=max_contexts
            )
            return pm.model, pm.literals

        core, minimal = _cpsat.explain(build, len(requirements), deadline=deadline, seed=seed)
    except (InvalidParameterError, IncompatibleRequirementError):
        core, minimal = None, False
    if core is None:
        return None, (
            "no release satisfies the requirements together (CP-SAT proved infeasibility); "
            f"the conflicting subset could not be isolated in time among: {'; '.join(names)}"
        )
    conflict = [names[i] for i in core]
    if not conflict:
        return [], "no release exists even without requirements (this should not happen)"
    if len(conflict) == 1:
        why = f"{conflict[0]} cannot be met by any release on its own"
    else:
        why = f"these requirements conflict: {'; '.join(conflict)}"
    qualifier = (
        "a minimal conflicting set" if minimal else "a conflicting set (not shown minimal in time)"
    )
    return (
        conflict,
        f"no release satisfies the requirements: {why} ({qualifier}, from CP-SAT assumptions)",
    )
