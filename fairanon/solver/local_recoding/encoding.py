"""The records as weighted types, the candidate released vectors, and the model's size.

A release is determined by the *released vector* of each record (its quasi-identifier
labels), and the released equivalence classes are exactly the records sharing a vector.
The model assigns *types* -- records with identical values on every attribute the
requirements read, weighted by their count -- to candidate vectors, so duplicates cost
nothing. Candidate vectors are pruned to those covering at least k records; when every
requirement is union-monotone (k, l, t) and the objective can only grow when a label is
coarsened, an optimal release uses the tight summary (lowest common ancestor, min-max
range) of each class, so the candidates are the join closure of the types' own vectors.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..._arrays import unique_rows
from ...exceptions import InvalidParameterError
from ...instances.instance import Instance
from ...models.objectives import MONOTONE_OBJECTIVES, PRIVACY_OBJECTIVES, Objective
from ...models.requirements import (
    AlphaProtection,
    DiversityConstraint,
    KAnonymity,
    LDiversity,
    Requirement,
    TCloseness,
    requirement_targets,
    validate_requirements,
)
from ...models.risk.requirements import LINEAR_RISK, refuse_risk
# The build's deadline is checked down to the labels, which this module builds on.
from .labels import BuildStopped, LabelSpace, _label_space, check_deadline

__all__ = [
    "BuildStopped",
    "ClosureTooLarge",
    "Encoding",
    "ModelTooLarge",
    "check_deadline",
    "encode",
    "model_size",
    "type_table",
]


class ModelTooLarge(InvalidParameterError):
    """The model needs more candidate classes or assignment variables than `max_vars`."""


class ClosureTooLarge(ModelTooLarge):
    """The join closure of the types has more vectors than its cap (`max_vars`)."""


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
    row_type : numpy.ndarray of int
        The type of each typed record (every instance row, or the `positions` given to
        :func:`type_table`, in that order).
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
    deadline: float | None = None,
) -> Encoding:
    """Aggregate the records into weighted types and build the label spaces; past
    `deadline` (a ``time.perf_counter`` value), :class:`BuildStopped` before and while
    each attribute's labels are built (between two labels) and before and while the
    records are typed.

    A type is a set of records with identical values on the generalizable
    quasi-identifiers, the protected attribute, the targets of l-diversity and
    t-closeness, the decision (for alpha-protection) and the attributes of diversity
    constraints, i.e. on everything the requirements can tell apart.

    >>> enc = encode(fa.load("ruggieri_loan"), [fa.TCloseness(0.25)])
    >>> enc.n_types, int(enc.weight.sum()), [s.texts for s in enc.spaces]
    (13, 17, [['housing', 'car', '*'], ['no', 'yes', '*']])
    """
    spaces = []
    for name in instance.schema.generalizable:
        check_deadline(deadline, f"building the labels of {name!r}")
        spaces.append(_label_space(instance, name, recoding, max_range_values, deadline))
    check_deadline(deadline, "typing the records")
    return type_table(
        instance,
        requirements,
        recoding,
        spaces,
        [s.row_value for s in spaces],
        [s.values for s in spaces],
        deadline=deadline,
    )


def type_table(
    instance, requirements, recoding, spaces, row_values, values, positions=None,
    deadline: float | None = None,
) -> Encoding:
    """The weighted types of :func:`encode`, given each generalizable attribute's active
    value index per row (`row_values`) and active values (`values`).

    With `positions` (instance row positions), only those records are typed (the
    records of a neighbourhood; `row_values` are then aligned with `positions`), and
    ``Encoding.rows`` holds instance positions. Targets of l-diversity and t-closeness
    keep the whole table's values and distribution either way. Past `deadline`
    (``time.perf_counter``), :class:`BuildStopped` before the records are sorted into
    types, before the types are listed and while their records are (every
    :data:`TYPES_BLOCK` types)."""
    schema = instance.schema
    names = list(schema.generalizable)
    every = positions is None
    pos = np.arange(instance.n_rows) if every else np.asarray(positions, dtype=np.int64)

    def at(column: np.ndarray) -> np.ndarray:
        return column if every else column[pos]

    columns = list(row_values)
    protected = schema.protected
    if protected is not None:
        columns.append(at(instance.codes(protected)))
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
        columns.append(at(dense_targets[name][1]))
    alpha = any(isinstance(r, AlphaProtection) for r in requirements)
    if alpha:
        columns.append(at(instance.negative_mask()).astype(np.int64))
    extra_names = []
    for req in requirements:
        if isinstance(req, DiversityConstraint):
            for name, _ in req.target:
                if name not in names and name not in extra_names:
                    extra_names.append(name)
    extra_text = {
        name: instance.table[name].iloc[pos].astype(str).to_numpy() for name in extra_names
    }
    for name in extra_names:
        _, inv = np.unique(extra_text[name], return_inverse=True)
        columns.append(inv.reshape(-1))
    n = len(pos)
    check_deadline(deadline, "typing the records")
    key = (
        np.stack([np.asarray(c, dtype=np.int64) for c in columns], axis=1)
        if columns
        else np.zeros((n, 0), dtype=np.int64)
    )
    # One packed integer per record (unique_rows), several times faster than sorting
    # the records by rows: the deadline is not looked at inside the sort.
    _, inverse = unique_rows(key)
    counts = np.bincount(inverse)
    _, first = np.unique(inverse, return_index=True)
    check_deadline(deadline, "typing the records")
    inverse = inverse.reshape(-1)
    # Types numbered by first occurrence, so the order follows the table.
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    row_type = rank[inverse]
    first = first[order]
    weight = counts[order].astype(np.int64)
    sort = np.argsort(row_type, kind="stable")
    # Each type's records, a block of types at a time (np.split took 0.03-0.07 s on UCI
    # Adult's 18,109 types, without looking at the deadline).
    placed = pos[sort]
    ends = np.cumsum(weight).tolist()
    starts = [0, *ends[:-1]]
    rows = []
    for lo in range(0, len(ends), TYPES_BLOCK):
        check_deadline(deadline, "typing the records")
        hi = lo + TYPES_BLOCK
        rows.extend(placed[a:b] for a, b in zip(starts[lo:hi], ends[lo:hi]))
    check_deadline(deadline, "typing the records")
    qi = (
        np.stack([rv[first] for rv in row_values], axis=1)
        if names
        else np.zeros((len(first), 0), dtype=np.int64)
    )
    first_rows = pos[first]
    prot_codes = (
        instance.codes(protected)[first_rows].astype(np.int64)
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
            name, dense[first_rows], len(present), np.bincount(dense, minlength=len(present)), shown
        )
    prot_flag = neg_flag = None
    if alpha:
        prot_flag = instance.protected_mask()[first_rows]
        neg_flag = instance.negative_mask()[first_rows]
    extra = {name: extra_text[name][first] for name in extra_names}
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


#: Types whose records :func:`type_table` lists between two looks at the deadline.
TYPES_BLOCK = 4096


# ====================================================================== candidate vectors
#: Type pairs whose joins :func:`_chain_vectors` costs at a time (8 MB of costs).
CHAIN_BLOCK = 2**20
#: Joins :func:`_closure_vectors` makes per attribute at a time: an attribute of 2,628
#: labels (every range of UCI Adult's ages) joins 50,000 pairs in about 10 ms, within
#: which the deadline is not looked at (200,000 took 20-40 ms).
JOIN_BLOCK = 50_000
#: Joined keys :func:`_closure_vectors` adds to the set of seen vectors between two
#: looks at the deadline (about 6 ms on a 2-core machine).
KEYS_BLOCK = 2**14

def _closure_vectors(
    enc: Encoding, cap: int, max_cost: float | None = None, deadline: float | None = None
) -> list[tuple]:
    """Joins of every non-empty set of types (per protected value): the tight summaries
    a class can have. Breadth-first: each round joins the new vectors with every type.
    Vectors are handled as mixed-radix integers over the label counts.

    With `max_cost`, only the joins whose NCP per record is at most `max_cost`: a join
    costs at least what each of its parts costs, so pruning the costlier ones on the
    way loses none of the cheaper ones. Past `deadline`, :class:`BuildStopped`."""
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
            step = max(1, JOIN_BLOCK // len(base))
            for start in range(0, len(frontier), step):
                check_deadline(deadline, "joining the candidate classes")
                block = frontier[start : start + step]
                keys = np.zeros(len(block) * len(base), dtype=np.int64)
                for a, space in enumerate(enc.spaces):
                    # The deadline is looked at between attributes and between slices
                    # of the new keys too: a block's joins of 8 attributes and its new
                    # keys took up to 0.1 s on UCI Adult when looked at between blocks only.
                    check_deadline(deadline, "joining the candidate classes")
                    joined = space.join(
                        np.repeat(block[:, a], len(base)), np.tile(base_rows[:, a], len(block))
                    )
                    keys += joined * strides[a]
                check_deadline(deadline, "joining the candidate classes")
                uniq = pd.unique(keys)
                if max_cost is not None:
                    uniq = uniq[_vector_costs(enc, decode(uniq)) <= max_cost + 1e-9]
                for lo in range(0, len(uniq), KEYS_BLOCK):
                    check_deadline(deadline, "joining the candidate classes")
                    for key in uniq[lo : lo + KEYS_BLOCK].tolist():
                        if key not in seen:
                            seen.add(key)
                            fresh.append(key)
                if len(seen) + len(out) > cap:
                    raise ClosureTooLarge(
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


#: (type, vector) pairs of every vector covering a type up to which the join closure is
#: found by listing those pairs (:func:`_listed_closure`) rather than breadth-first;
#: up to 8 times more while they are fewer than 8 times the breadth-first closure's
#: first round of joins over the attributes (every type with every type of its
#: protected value; 10,000 types: 1e8 an attribute). German credit's 7 quasi-identifiers
#: (976 types), 11 M pairs: the candidates took 7.0 s CPU breadth-first, 3.3 s listed;
#: the 7 of the tests' German table (733 types), 3.3 M pairs: the closure 5.4 s and 0.9 s.
LISTED_PAIRS = 4_000_000
#: Listed pairs sorted and joined at a time (between two looks at the deadline): about
#: 10-20 ms CPU each for German credit's 7 quasi-identifiers.
LISTED_CHUNK = 2**17


def _listed_closure(
    enc: Encoding,
    cap: int,
    max_cost: float | None = None,
    deadline: float | None = None,
    on_pairs: Callable[[int, int], None] | None = None,
) -> tuple[list[tuple], np.ndarray, np.ndarray] | None:
    """The join closure of :func:`_closure_vectors` and its (type, vector) pairs of
    :func:`_covering_pairs`, found from the other side: a vector v is the join of some
    set of types exactly when it is the join of every type it covers (that set holds
    any set v is the join of, so its join is at least v, and it is at most v), so the
    vectors covering some type are listed with the types they cover and those whose
    covered types join to v itself are kept. As the breadth-first closure does, with
    `max_cost` only the joins costing at most `max_cost` per record besides the types'
    own vectors.

    The vectors are listed by their first attribute's label, a slice of labels at a
    time (about :data:`LISTED_CHUNK` pairs; a label holding more, such as the root, is
    split by the next attributes' labels), so only the kept pairs are held and the
    deadline is looked at between slices: past it, :class:`BuildStopped`.
    ``on_pairs(vectors, pairs)`` is told the vectors and pairs kept so far after each
    slice (it may raise). None when the labels are not runs (a space of masks) or the
    listing would take more pairs than :data:`LISTED_PAIRS` allows."""
    if enc.d == 0 or any(s.rank is None for s in enc.spaces):
        return None
    counts = [s.covering_counts() for s in enc.spaces]
    rest = np.ones(enc.n_types)  # vectors covering a type, past the first attribute
    for a in range(1, enc.d):
        rest *= counts[a][enc.qi[:, a]]
    listed = float((rest * counts[0][enc.qi[:, 0]]).sum())
    first_round = float((np.bincount(enc.protected).astype(float) ** 2).sum())
    if listed > max(LISTED_PAIRS, min(8 * enc.d * first_round, 8 * LISTED_PAIRS)):
        return None
    radix = [s.n_labels for s in enc.spaces]
    if math.prod(radix) >= 2**62:
        return None
    strides = np.array([math.prod(radix[a + 1 :]) for a in range(enc.d)], dtype=np.int64)
    # Per attribute, the labels covering each active value (CSR: value i's labels are
    # cover[a][start[a][i] : start[a][i + 1]]); the first attribute's the other way,
    # each label's values in label order.
    cover, start = [], []
    for s in enc.spaces:
        check_deadline(deadline, "joining the candidate classes")
        sizes = s.sizes.astype(np.int64)
        labels = np.repeat(np.arange(s.n_labels, dtype=np.int64), sizes)
        by_rank = np.empty(s.m, dtype=np.int64)
        by_rank[s.rank] = np.arange(s.m)
        value = by_rank[s.lo[labels] + _within(sizes)]
        if not cover:
            first_labels, first_values = labels, value
        order = np.argsort(value, kind="stable")
        cover.append(labels[order])
        start.append(np.concatenate([[0], np.cumsum(np.bincount(value, minlength=s.m))]))
    # suffix[a][t]: the (type, vector) pairs grown from one of type t's pairs once its
    # labels of attributes a and beyond are added.
    suffix = [np.ones(enc.n_types) for _ in range(enc.d + 1)]
    for a in range(enc.d - 1, 0, -1):
        suffix[a] = suffix[a + 1] * counts[a][enc.qi[:, a]]

    def grow(pair_t: np.ndarray, key: np.ndarray, a: int) -> tuple[np.ndarray, np.ndarray]:
        """Each pair once per label of attribute a covering its type's value."""
        value = enc.qi[pair_t, a]
        first, n = start[a][value], counts[a][value]
        key = np.repeat(key, n) + cover[a][np.repeat(first, n) + _within(n)] * strides[a]
        return np.repeat(pair_t, n), key

    out: list[tuple] = []
    pairs_t, pairs_v = [], []
    counted = 0
    for p in dict.fromkeys(enc.protected.tolist()):
        check_deadline(deadline, "joining the candidate classes")
        ts = np.flatnonzero(enc.protected == p)
        own = np.unique(enc.qi[ts] @ strides)
        # (first label, type) pairs, label by label: each label's values, each value's types
        by_value = ts[np.argsort(enc.qi[ts, 0], kind="stable")]
        at = np.concatenate([[0], np.cumsum(np.bincount(enc.qi[ts, 0], minlength=enc.spaces[0].m))])
        many = at[first_values + 1] - at[first_values]
        label0 = np.repeat(first_labels, many)
        type0 = by_value[np.repeat(at[first_values], many) + _within(many)]
        grown = np.concatenate([[0], np.cumsum(suffix[1][type0])])
        # slices end where a label ends and the pairs grown from them pass a chunk
        ends = np.flatnonzero(np.diff(label0)) + 1
        ends = np.append(ends, len(label0))
        bins = (grown[ends] // LISTED_CHUNK).astype(np.int64)
        cuts = ends[np.append(np.flatnonzero(np.diff(bins)), len(bins) - 1)] if len(ends) else ends
        lo = 0
        slices = []
        for hi in cuts.tolist():
            slices.append((type0[lo:hi], label0[lo:hi] * strides[0], 1))
            lo = hi
        slices.reverse()
        while slices:
            check_deadline(deadline, "joining the candidate classes")
            pair_t, key, a = slices.pop()
            # A slice of more than a chunk (a label covering many types: the root) is
            # split by its next attributes' labels, so that no step below takes much more
            # than LISTED_CHUNK pairs between two looks at the deadline.
            while a < enc.d and suffix[a][pair_t].sum() > LISTED_CHUNK:
                pair_t, key = grow(pair_t, key, a)
                a += 1
                check_deadline(deadline, "joining the candidate classes")
                order = np.argsort(key, kind="stable")
                key, pair_t = key[order], pair_t[order]
                check_deadline(deadline, "joining the candidate classes")
                ends = np.append(np.flatnonzero(np.diff(key)) + 1, len(key))
                grown = np.concatenate([[0], np.cumsum(suffix[a][pair_t])])
                bins = (grown[ends] // LISTED_CHUNK).astype(np.int64)
                parts = ends[np.append(np.flatnonzero(np.diff(bins)), len(bins) - 1)]
                if len(parts) > 1:
                    bounds = np.concatenate([[0], parts]).tolist()
                    slices.extend((pair_t[i:j], key[i:j], a) for i, j in
                                  reversed(list(zip(bounds[:-1], bounds[1:]))))
                    pair_t, key, a = slices.pop()
            for b in range(a, enc.d):
                pair_t, key = grow(pair_t, key, b)
            check_deadline(deadline, "joining the candidate classes")
            order = np.argsort(key, kind="stable")
            key, pair_t = key[order], pair_t[order]
            starts = np.concatenate([[0], np.flatnonzero(np.diff(key)) + 1])
            uniq = key[starts]
            keep = np.ones(len(uniq), dtype=bool)
            labels = (uniq[:, None] // strides[None, :]) % np.array(radix, dtype=np.int64)[None, :]
            for a, s in enumerate(enc.spaces):
                rank = s.rank[enc.qi[pair_t, a]]
                joined = s._join_runs(np.minimum.reduceat(rank, starts),
                                      np.maximum.reduceat(rank, starts) + 1)
                keep &= joined == labels[:, a]
            if max_cost is not None:
                at_own = np.zeros(len(uniq), dtype=bool)
                at_own[np.isin(uniq, own)] = True
                keep &= at_own | (_vector_costs(enc, labels) <= max_cost + 1e-9)
            size = np.diff(np.append(starts, len(key)))
            held = np.repeat(keep, size)
            pairs_t.append(pair_t[held])
            pairs_v.append(np.repeat(np.cumsum(keep) - 1 + len(out), size)[held])
            out.extend((p,) + tuple(row) for row in labels[keep].tolist())
            if len(out) > cap:
                raise ClosureTooLarge(
                    f"The 'max_vars' parameter of cpsat ({cap}) is smaller than the number of "
                    f"candidate classes of instance {enc.instance.name!r} (more than {cap}). "
                    "Raise max_vars, use recoding='suppression' or fewer quasi-identifiers, or "
                    "method='mondrian'."
                )
            counted += len(pairs_t[-1])
            if on_pairs is not None:
                on_pairs(len(out), counted)
    empty = np.zeros(0, dtype=np.int64)
    return (out, np.concatenate(pairs_t) if pairs_t else empty,
            np.concatenate(pairs_v) if pairs_v else empty)


def _within(sizes: np.ndarray) -> np.ndarray:
    """0, 1, ..., size - 1 for each of `sizes`, one after the other."""
    sizes = np.asarray(sizes, dtype=np.int64)
    return np.arange(int(sizes.sum())) - np.repeat(np.cumsum(sizes) - sizes, sizes)


def _chain_vectors(
    enc: Encoding, length: int, max_cost: float | None = None, deadline: float | None = None
) -> list[tuple]:
    """For each type, the joins of it with its nearest 1, 2, ..., `length` - 1 other
    types (per protected value; nearest by the NCP of the pairwise join): the classes a
    type would form with its neighbours, far fewer than the join closure."""
    out: dict[tuple, None] = {}
    ncp = [np.array([float(c) for c in space.ncp]) for space in enc.spaces]
    for p in dict.fromkeys(enc.protected.tolist()):
        base = np.unique(enc.qi[enc.protected == p], axis=0)
        n = len(base)
        steps = min(length, n)
        # Each type's nearest types, a block of types at a time: the n x n costs are
        # never held whole (2,642 types of UCI Adult took 510 MB and 7 s CPU in one
        # piece), and the deadline is looked at between blocks and attributes.
        order = np.empty((n, steps), dtype=np.int64)
        block = max(1, CHAIN_BLOCK // max(n, 1))
        for lo in range(0, n, block):
            rows = base[lo : lo + block]
            cost = np.zeros((len(rows), n))
            for a, space in enumerate(enc.spaces):
                check_deadline(deadline, "joining the candidate classes")
                joined = space.join(np.repeat(rows[:, a], n), np.tile(base[:, a], len(rows)))
                cost += ncp[a][joined].reshape(len(rows), n)
            check_deadline(deadline, "joining the candidate classes")
            order[lo : lo + len(rows)] = np.argsort(cost, axis=1, kind="stable")[:, :steps]
        current = base.copy()
        alive = np.ones(n, dtype=bool)
        for row in current.tolist():
            out[(p, *row)] = None
        for step in range(1, steps):
            check_deadline(deadline, "joining the candidate classes")
            partner = base[order[:, step]]
            for a, space in enumerate(enc.spaces):
                current[:, a] = space.join(current[:, a], partner[:, a])
            if max_cost is not None:
                alive &= _vector_costs(enc, current) <= max_cost + 1e-9
            for row in current[alive].tolist():
                out[(p, *row)] = None
            if not alive.any():
                break
    return list(out)


def _vector_costs(enc: Encoding, rows: np.ndarray) -> np.ndarray:
    """NCP per record of vectors (label ids per attribute, one row each)."""
    out = np.zeros(len(rows))
    for a, space in enumerate(enc.spaces):
        out += np.array([float(c) for c in space.ncp])[rows[:, a]]
    return out


def _pairs_count(enc: Encoding) -> int:
    """Type-vector pairs of the full candidate set (every covering label combination)."""
    total = 0
    counts = [s.covering_counts() for s in enc.spaces]
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


def _covering_pairs(
    enc: Encoding,
    vectors: list[tuple],
    offset: int = 0,
    deadline: float | None = None,
    on_pairs: Callable[[int, int], None] | None = None,
):
    """Every (type, vector) pair where the vector covers the type (same protected value,
    each label covering the type's value); vector ids start at `offset`. Before each
    protected value's pairs are listed, ``on_pairs(vectors, pairs)`` is told how many
    vectors there are and how many pairs there will be so far (it may raise)."""
    arr = np.array(vectors, dtype=np.int64).reshape(len(vectors), enc.d + 1)
    pair_t, pair_v = [], []
    counted = 0
    for p in dict.fromkeys(enc.protected.tolist()):
        vs = np.flatnonzero(arr[:, 0] == p)
        ts = np.flatnonzero(enc.protected == p)
        ok = np.ones((len(vs), len(ts)), dtype=bool)
        for a, space in enumerate(enc.spaces):
            check_deadline(deadline, "pairing the types with the candidate classes")
            ok &= space.covers(arr[vs, a + 1][:, None], enc.qi[ts, a][None, :])
        if on_pairs is not None:
            counted += int(np.count_nonzero(ok))
            on_pairs(len(vectors), counted)
        vi, ti = np.nonzero(ok)
        pair_v.append(vs[vi] + offset)
        pair_t.append(ts[ti])
    empty = np.zeros(0, dtype=np.int64)
    return (
        np.concatenate(pair_t) if pair_t else empty,
        np.concatenate(pair_v) if pair_v else empty,
    )


def _candidates(
    enc: Encoding,
    closure: bool,
    k: int,
    max_vars: int,
    extra: Sequence[tuple] = (),
    held: Callable[[tuple], int] | None = None,
    max_cost: float | None = None,
    type_cap: np.ndarray | None = None,
    chains: int | None = None,
    deadline: float | None = None,
    on_pairs: Callable[[int, int], None] | None = None,
) -> _Candidates:
    """The candidate vectors and their (type, vector) pairs.

    `extra` vectors are candidates too (a neighbourhood's current classes and the
    classes around it); ``held(vector)`` gives the records outside the model that are
    already released as it, which count towards k; `max_cost` bounds the NCP per record
    of the join closure's vectors, and `type_cap` (per type) that of the vectors each
    type may take other than the `extra` ones. With `chains`, the closure is replaced by
    the joins of each type with its nearest neighbours (:func:`_chain_vectors`). Past
    `deadline` (``time.perf_counter``), :class:`BuildStopped`. `on_pairs`: as in
    :func:`_covering_pairs`, for the closure's pairs."""
    if closure and chains:
        vectors = _chain_vectors(enc, chains, max_cost, deadline)
        pair_t, pair_v = _covering_pairs(enc, vectors, deadline=deadline)
        mode = "chains"
    elif closure:
        listed = _listed_closure(enc, max_vars, max_cost, deadline, on_pairs)
        if listed is not None:
            vectors, pair_t, pair_v = listed
        else:
            vectors = _closure_vectors(enc, max_vars, max_cost, deadline)
            pair_t, pair_v = _covering_pairs(enc, vectors, deadline=deadline, on_pairs=on_pairs)
        mode = "closure"
    else:
        needed = _pairs_count(enc)
        if needed > max_vars:
            raise ModelTooLarge(
                f"The 'max_vars' parameter of cpsat ({max_vars}) is smaller than the {needed} "
                f"assignment variables the model of instance {enc.instance.name!r} needs. Raise "
                "max_vars, use recoding='suppression' or fewer quasi-identifiers, or "
                "method='mondrian'."
            )
        index: dict[tuple, int] = {}
        vectors, pt, pv = [], [], []
        for t in range(enc.n_types):
            if t % 256 == 0:
                check_deadline(deadline, "listing the candidate classes")
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
    known = set(vectors)
    fresh = [v for v in dict.fromkeys(extra) if v not in known]
    if fresh:
        more_t, more_v = _covering_pairs(enc, fresh, offset=len(vectors), deadline=deadline)
        vectors = vectors + fresh
        pair_t, pair_v = np.concatenate([pair_t, more_t]), np.concatenate([pair_v, more_v])
    if type_cap is not None and len(pair_v):
        arr = np.array(vectors, dtype=np.int64).reshape(len(vectors), enc.d + 1)[:, 1:]
        fixed = np.zeros(len(vectors), dtype=bool)
        fixed[len(vectors) - len(fresh) :] = True
        known_extra = {v for v in dict.fromkeys(extra)}
        fixed |= np.array([vec in known_extra for vec in vectors], dtype=bool)
        keep = fixed[pair_v] | (_vector_costs(enc, arr)[pair_v] <= type_cap[pair_t] + 1e-9)
        pair_t, pair_v = pair_t[keep], pair_v[keep]
    # With a look at the deadline either side (German credit's 7 QIs, 1.5 M pairs: the
    # sort takes 0.08 s CPU, the rest 0.02 s).
    check_deadline(deadline, "sorting the candidate classes' pairs")
    order = np.lexsort((pair_v, pair_t))
    pair_t, pair_v = pair_t[order], pair_v[order]
    check_deadline(deadline, "sorting the candidate classes' pairs")
    if k > 1 and len(pair_v):
        # A used vector holds at least k records, so vectors covering fewer are useless.
        reach = np.bincount(pair_v, weights=enc.weight[pair_t], minlength=len(vectors))
        if held is not None:
            reach += np.array([held(vec) for vec in vectors], dtype=float)
        keep = reach[pair_v] >= k
        pair_t, pair_v = pair_t[keep], pair_v[keep]
    used = np.flatnonzero(np.bincount(pair_v, minlength=len(vectors)))  # np.unique: 0.1 s
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
    """The size of the exact model
    :func:`~fairanon.solver.local_recoding.local_recoding` would build, without building it.

    Parameters
    ----------
    instance, requirements, recoding, objective, max_range_values
        As in :func:`~fairanon.solver.local_recoding.local_recoding`.
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
    refuse_risk(requirements, "cpsat", LINEAR_RISK)
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


def _use_closure(requirements, objective) -> bool:
    """Whether tight class summaries lose no optimum (module docstring). For privacy
    objectives too: releasing each class with its tight summary can only merge classes
    (two classes with the same summary become one), which keeps k, l and t, never
    lowers privacy and never raises a monotone loss."""
    terms = objective.terms if isinstance(objective, Objective) else (objective,)
    return all(isinstance(r, (KAnonymity, LDiversity, TCloseness)) for r in requirements) and all(
        t in MONOTONE_OBJECTIVES + PRIVACY_OBJECTIVES for t in terms
    )
