"""dMondrian: Mondrian for discrimination protection (Ruggieri, Trans. Data Privacy 2014, Alg. 1).

A top-down partitioning that never cuts or generalizes the protected (PD) attribute:
a part is cut at a value of one of the other quasi-identifiers (the PND attributes,
each an ordered domain) only if both children are d-allowable, i.e. in each the
protected and the unprotected records keep their share of negative decisions within
t of the whole table's (maximum variational distance τ <= t, Def. 17-18). Among the
d-allowable cuts, the one with the smallest max(τ(P1), τ(P2)) is taken. By Thm 20 the
release is then bd_f(max(t, τ(R)))-protective for every discrimination measure f
(Thm 10, 15). Where it departs from the paper: docs/papers.md, R-4 to R-7.
"""

from __future__ import annotations

import dataclasses
import math
import time
from fractions import Fraction

import numpy as np

from .._validation import check_option, check_random_state
from ..exceptions import IncompatibleRequirementError, InvalidParameterError
from ..instances.instance import Instance
from ..models import measures as M
from ..models.requirements import (
    MEASURES,
    AlphaProtection,
    KAnonymity,
    LDiversity,
    TCloseness,
    requirement_targets,
    validate_requirements,
)
from ..models.verify import verify
from ..release import Release, Status, generalize_partition, provenance
from . import topdown as E

__all__ = ["FIND_CUT_RULES", "K_MODES", "PD_GROUPS", "dmondrian"]

#: How a part's cut value is found on one attribute (docs/papers.md, R-4):
#: "balanced", the most balanced non-trivial cut (the value v, other
#: than the largest, minimizing | |P1| - |P2| |, ties to the smaller v); "median", the
#: value of the ceil(|P| / 2)-th smallest record, or the next smaller value when that
#: is the largest (the cut would leave P2 empty).
FIND_CUT_RULES = ("balanced", "median")
#: "strict": every released class (records sharing their released quasi-identifiers,
#: the PD attribute included) has 0 or >= k records, as the verifier checks; "ec": each
#: part has >= k records (Ruggieri §5.1), i.e. k-anonymity w.r.t. the PND attributes only.
K_MODES = ("strict", "ec")
#: Which groups of the PD attribute a cut keeps within t: "binary", protected and
#: unprotected records (Ruggieri's τ); "values", the records of each PD value (what
#: t-closeness of the decision in every released class requires).
PD_GROUPS = ("binary", "values")

_MEASURE_ORDER = ("RD", "ED", "RR", "ER", "RC", "EC", "OR")


# ------------------------------------------------------------------ τ of candidate parts
class _Tau:
    """Variational distances of candidate parts from their counts per (PD value, decision).

    Counts come as (parts x 2B) arrays: column 2b + 1 counts the negative decisions of
    PD value b, column 2b its positive ones.
    """

    def __init__(self, neg: int, total: int, protected_block: np.ndarray, values: bool):
        self.neg, self.total = neg, total
        self.p_minus = Fraction(neg, total)
        self.pm = neg / total
        self.protected_block = protected_block
        self.values = values
        # Exact comparisons of distances multiply numbers up to total**3.
        self.exact_dtype = np.int64 if total**3 < 2**62 else object

    def groups(self, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(negatives, sizes) of the groups each part is checked on (parts x groups)."""
        negatives = counts[:, 1::2]
        sizes = negatives + counts[:, 0::2]
        if self.values:
            return negatives, sizes
        prot = self.protected_block
        return (
            np.stack([negatives[:, prot].sum(axis=1), negatives[:, ~prot].sum(axis=1)], axis=1),
            np.stack([sizes[:, prot].sum(axis=1), sizes[:, ~prot].sum(axis=1)], axis=1),
        )

    def distances(self, negatives: np.ndarray, sizes: np.ndarray) -> np.ndarray:
        """|neg / size - p-| per group (0 for an empty group), floats."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(sizes > 0, np.abs(negatives / np.maximum(sizes, 1) - self.pm), 0.0)

    def within(self, negatives: np.ndarray, sizes: np.ndarray, t: Fraction) -> np.ndarray:
        """Per part: every group's distance <= t, decided exactly.

        Floats decide far from t; near it (many groups sit exactly on t = p- or
        1 - p-) |neg / n - NEG / N| <= p / q is decided as
        |neg N - NEG n| q <= p n N in Python integers.
        """
        vd = self.distances(negatives, sizes).ravel()
        t_float = float(t)
        ok = vd <= t_float
        near = np.flatnonzero(np.abs(vd - t_float) <= M.TOLERANCE * max(1.0, t_float))
        if len(near):
            a = negatives.ravel()[near].astype(object)
            n = sizes.ravel()[near].astype(object)
            lhs = np.abs(a * self.total - self.neg * n) * t.denominator
            ok[near] = (lhs <= t.numerator * n * self.total).astype(bool)
        return ok.reshape(negatives.shape).all(axis=1)

    def exact(self, counts: np.ndarray) -> Fraction:
        """τ of one part (its largest group distance), exactly."""
        negatives, sizes = self.groups(counts.reshape(1, -1))
        return max(
            (abs(Fraction(int(a), int(n)) - self.p_minus) for a, n in zip(negatives[0], sizes[0]) if n),
            default=Fraction(0),
        )


# ------------------------------------------------------------------ the engine
class _DMondrian:
    """Level-synchronous dMondrian. ``data`` columns: the PND ranks, the (PD value, decision) code, and one (PD value, target) code per
    target of the other checks."""

    def __init__(self, ranked, block, negative, n_blocks, tau, t, k, k_mode, rule, checks):
        self.ranked = ranked
        self.tau, self.t = tau, t
        self.k, self.k_mode, self.rule = k, k_mode, rule
        self.checks = checks
        self.n_blocks = n_blocks
        d = len(ranked)
        self.dec_col = d
        self.target_col = {name: 1 + d + i for i, name in enumerate(checks.targets)}
        self.columns = (
            [c.ranks for c in ranked]
            + [(2 * block + negative).astype(np.int32)]
            + [(block * t_.m + t_.codes).astype(np.int32) for t_ in checks.targets.values()]
        )
        self.min_split = 2 * max(1, k)

    def run(self, n: int, deadline):
        level = E.first_level(self.columns, np.arange(n, dtype=E.index_dtype(n)), [n], 0)
        leaves = E.Leaves(level)
        timed_out = False
        while level.n_segments:
            if deadline is not None and time.perf_counter() > deadline:
                timed_out = True
                leaves.add_level(level)
                break
            level = self._step(level, leaves)
        return leaves.groups(n), timed_out

    def _step(self, level: E.Level, leaves: E.Leaves) -> E.Level:
        p, d = level.n_segments, len(self.ranked)
        score = np.full((p, d), np.inf)
        value = np.zeros((p, d), dtype=np.int64)
        counts = {}
        live = level.sizes >= self.min_split
        if d and live.any():
            lo = np.stack([np.minimum.reduceat(level.column(a), level.starts) for a in range(d)], axis=1)
            hi = np.stack([np.maximum.reduceat(level.column(a), level.starts) for a in range(d)], axis=1)
            for a in range(d):
                segs = np.flatnonzero(live & (hi[:, a] > lo[:, a]))
                if len(segs):
                    score[segs, a], value[segs, a], counts[a] = self._cuts(
                        level, segs, a, lo[segs, a], hi[segs, a]
                    )
        best = self._best(score, counts)
        split = np.isfinite(score[np.arange(p), best]) if d else np.zeros(p, dtype=bool)
        label = np.zeros(level.n_rows, dtype=np.int32)
        for a in np.unique(best[split]):
            segs = np.flatnonzero(split & (best == a))
            pos, lseg = level.positions(segs)
            label[pos] = level.column(a)[pos] > value[segs, a][lseg]
        n_children = np.where(split, 2, 0)
        return E.split_level(level, n_children, label, self.min_split, leaves)

    def _cuts(self, level, segs, a, lo, hi):
        """For parts `segs`: max(τ1, τ2) of the cut found on attribute a (inf if it is
        not d-allowable or breaks another requirement), the cut value, and the groups'
        (negatives, sizes) of the left then the right children, for exact ties."""
        pos, lseg = level.positions(segs)
        runs = E.frequency_runs(lseg, level.column(a)[pos], lo, hi, rows=True)
        sizes = level.sizes[segs]
        cum_all = np.cumsum(runs.count)
        base = cum_all[runs.first] - runs.count[runs.first]
        if self.rule == "median":
            cut = np.searchsorted(cum_all, base + (sizes + 1) // 2, side="left")
            cut = np.where(cut == runs.last, cut - 1, cut)
        else:
            left_of_run = cum_all - base[runs.seg]
            imbalance = np.abs(2 * left_of_run - sizes[runs.seg])
            not_last = np.arange(len(runs.count)) < runs.last[runs.seg]
            cut = E.first_min_per_segment(imbalance, not_last, runs)
        cum, total = E.prefix_counts(runs, level.column(self.dec_col)[pos], 2 * self.n_blocks)
        left = cum[cut]
        right = total - left
        both = np.vstack([left, right])
        ok = self._size_ok(both)
        negatives, group_sizes = self.tau.groups(both)
        ok &= self.tau.within(negatives, group_sizes, self.t)
        if self.checks.checks:
            ok &= self._others_ok(level, runs, pos, cut)
        n = len(segs)
        ok = ok[:n] & ok[n:]
        tau = self.tau.distances(negatives, group_sizes).max(axis=1)
        score = np.where(ok, np.maximum(tau[:n], tau[n:]), np.inf)
        return score, runs.value[cut], (segs, negatives, group_sizes)

    def _best(self, score: np.ndarray, counts: dict) -> np.ndarray:
        """Per part, the attribute with the smallest max(τ1, τ2), ties to the earlier
        attribute (choose_PND_dimension, Ruggieri §5.1; docs/papers.md, R-4).

        Floats rank cuts whose scores are far apart; scores within the float tolerance
        of a part's minimum (equal rationals such as |1/3 - 1/2| and |2/3 - 1/2| may
        round apart) are compared exactly, from the cuts' counts.
        """
        p, d = score.shape
        if not d:
            return np.zeros(p, dtype=np.int64)
        best = np.argmin(score, axis=1)
        low = score[np.arange(p), best][:, None]
        # A part with no allowable cut has low = inf: nothing is near it.
        near = np.isfinite(score) & (score <= low + M.TOLERANCE * np.maximum(1.0, low))
        rows = np.flatnonzero(near.sum(axis=1) > 1)
        if not len(rows):
            return best
        dtype = self.tau.exact_dtype
        best_num = np.zeros(len(rows), dtype=dtype)
        best_den = np.ones(len(rows), dtype=dtype)
        seen = np.zeros(len(rows), dtype=bool)
        for a in range(d):
            idx = np.flatnonzero(near[rows, a])
            if not len(idx):
                continue
            num, den = self._exact_scores(counts[a], rows[idx])
            # Strictly smaller only: an equal later attribute keeps the earlier one.
            better = ~seen[idx] | (num * best_den[idx] < best_num[idx] * den)
            upd = idx[better]
            best_num[upd], best_den[upd] = num[better], den[better]
            best[rows[upd]] = a
            seen[upd] = True
        return best

    def _exact_scores(self, cut_counts, parts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """max(τ(P1), τ(P2)) of the cuts found for `parts`, as N times that rational:
        (numerators, denominators) max over groups of |neg N - NEG size| / size, in
        integers (an empty group counts 0)."""
        segs, negatives, sizes = cut_counts
        n = len(segs)
        i = np.searchsorted(segs, parts)
        dtype = self.tau.exact_dtype
        neg = np.concatenate([negatives[i], negatives[n + i]], axis=1).astype(dtype)
        size = np.concatenate([sizes[i], sizes[n + i]], axis=1).astype(dtype)
        dist = np.abs(neg * self.tau.total - self.tau.neg * size)
        size = np.maximum(size, 1)
        num, den = dist[:, 0], size[:, 0]
        for g in range(1, dist.shape[1]):
            larger = dist[:, g] * den > num * size[:, g]
            num, den = np.where(larger, dist[:, g], num), np.where(larger, size[:, g], den)
        return num, den

    def _size_ok(self, counts: np.ndarray) -> np.ndarray:
        k = self.k
        per_value = counts[:, 0::2] + counts[:, 1::2]
        if self.k_mode == "strict":
            return ((per_value == 0) | (per_value >= k)).all(axis=1)
        return per_value.sum(axis=1) >= max(1, k)

    def _others_ok(self, level, runs, pos, cut) -> np.ndarray:
        """l-diversity / t-closeness of other targets in every released class of both
        children (one class per PD value present)."""
        b = self.n_blocks
        counts, sizes = {}, None
        for name, target in self.checks.targets.items():
            codes = level.column(self.target_col[name])[pos]
            cum, total = E.prefix_counts(runs, codes, b * target.m)
            left = cum[cut]
            counts[name] = np.vstack([left, total - left]).reshape(-1, target.m)
            sizes = counts[name].sum(axis=1)
        ok = self.checks.passing(sizes, counts) | (sizes == 0)
        return ok.reshape(-1, b).all(axis=1)


# ------------------------------------------------------------------ the method
def _show(x) -> str:
    if x == math.inf:
        return "inf"
    return f"{float(x):.4g}"


def dmondrian(
    instance,
    requirements,
    *,
    cut_rule: str = "balanced",
    k_mode: str = "strict",
    pd_groups: str | None = None,
    seed=None,
    time_limit=None,
) -> Release:
    """dMondrian [1]_ (Alg. 1): generalize the PND attributes so that the release is
    t-close on the decision and hence alpha-protective.

    Parameters
    ----------
    instance : Instance
        Needs a protected (PD) attribute, never cut or generalized, and a binary
        decision attribute. Every role "qi" attribute is a PND attribute, cut as an
        ordered domain (numeric by value, ordered by its order, categorical by the
        order of its hierarchy's leaves); a class releases the range ``[lo-hi]`` of a
        numeric or ordered attribute and the lowest common ancestor of a categorical
        one's values (so a class spanning ``housing`` and ``car`` shows
        ``housing-car``).
    requirements : sequence of Requirement
        The threshold t comes from a TCloseness of the decision attribute (every
        released class within t of the table, each PD value apart; for a binary
        decision every EMD is the variational distance) and/or from AlphaProtection
        requirements, each turned into t_alpha = bd_f^{-1}(alpha)
        (:func:`fairanon.models.measures.t_alpha`); the smallest is used. Also
        accepted: KAnonymity (see `k_mode`), and LDiversity / TCloseness of other
        targets, checked in every released class of both children of a cut.
    cut_rule : {"balanced", "median"}, default="balanced"
        :data:`FIND_CUT_RULES`; the rule used is recorded in the provenance.
    k_mode : {"strict", "ec"}, default="strict"
        :data:`K_MODES`. With "ec" the release is k-anonymous w.r.t. the PND
        attributes only (as in [1]_), which the provenance states; the verifier's
        KAnonymity, which groups by the PD attribute too, may then fail.
    pd_groups : {"binary", "values"}, optional
        :data:`PD_GROUPS`. Default: "values" when a TCloseness of the decision is
        given (so that the verifier's check of every released class passes), else
        "binary" (Ruggieri's τ). "binary" with such a TCloseness and a PD attribute
        with more than two values is refused.
    seed : None, int or numpy.random.Generator, default=None
        Recorded only: the algorithm uses no randomness.
    time_limit : float, optional
        Seconds; parts not yet cut when it runs out become classes (the release keeps
        every guarantee) and ``provenance["time_limit_reached"]`` is True.

    Returns
    -------
    Release
        FEASIBLE, or INFEASIBLE with a ``reason`` when (a) the t of a TCloseness is
        below the floor τ(R) ("binary") or the largest distance of one PD value's
        records ("values"): generalization never changes the whole table's 4-fold
        table, so no cut is d-allowable (Ruggieri §5, Ex. 21) and no release is t-close;
        (b) k or another requirement fails on the records of one PD value, which only
        form classes among themselves (the table is then the single class of every
        record); (c) the whole table, a context of every release, fails an alpha. An
        alpha whose t_alpha lies below the floor (or below 0) is beyond the guarantee
        of Thm 20: the release, made with t = the floor (guaranteeing bd_f(τ(R))), is
        measured against it by the verifier, FEASIBLE with
        ``provenance["unguaranteed"]`` saying so when it meets it, else UNKNOWN
        (:func:`settled`). The provenance records ``t`` (used),
        ``p_minus``, ``tau_R``, ``tau_floor``, ``guaranteed_t`` = max(t, τ(R))
        (Thm 20) and ``bounds``, for each of the seven measures its bd_f(guaranteed_t)
        (an upper bound; a lower bound for RC, EC) and the opposite side.

    Raises
    ------
    IncompatibleRequirementError
        No PD or decision attribute, a decision with more than two values, no
        TCloseness of the decision nor AlphaProtection, a requirement dMondrian cannot
        enforce (DiversityConstraint), or pd_groups="binary" as above.
    InvalidParameterError
        A bad option, time limit or seed, or k larger than the table.

    Notes
    -----
    Per part, every PND attribute gets one candidate cut (`cut_rule`); a cut is
    d-allowable iff both children have the required sizes and τ <= t; the cut with
    the smallest max(τ(P1), τ(P2)) is taken, ties to the earlier attribute [1]_. τ
    uses the whole table's p- throughout. The parts of one recursion level are
    processed together (:mod:`fairanon.heuristics.topdown`): per level and
    attribute, one counting pass over the active records builds the frequency sets
    and the prefix sums of the (PD value, decision) counts from which every
    candidate's τ follows, so a level costs O(a d) for a active records and d PND
    attributes, and the search tree has O(D) levels, D = Σ_A log |dom(A)| [1]_:
    O(n d D) in all. Memory O(n d).

    Departures from [1]_: (a) the cut value is the most balanced non-trivial one
    (the paper's "median" is undefined on repeated values and can leave a side empty,
    e.g. emp in Ex. 19; docs/papers.md, R-4); (b) categorical classes show the
    lowest common ancestor of their values rather than a range of the order (R-5);
    (c) the strict k mode (R-6) and the "values" PD groups (R-7), which the paper's
    binary PD attribute does not need.

    References
    ----------
    .. [1] S. Ruggieri. Using t-closeness anonymity to control for non-discrimination.
       Transactions on Data Privacy 7(2):99-129, 2014.

    Examples
    --------
    >>> inst = fa.load("ruggieri_loan")
    >>> rel = dmondrian(inst, [fa.TCloseness("1/4", attribute="decision")])
    >>> sorted(set(rel.table["purpose"].astype(str))), rel.n_groups
    (['housing-car'], 2)
    >>> rel.provenance["guaranteed_t"], rel.provenance["bounds"]["RD"]["bound"]
    (Fraction(1, 4), Fraction(1, 2))
    >>> fa.verify(inst, rel, [fa.TCloseness("1/4", attribute="decision")]).passed
    True
    """
    started = time.perf_counter()
    if not isinstance(instance, Instance):
        raise InvalidParameterError(
            "The 'instance' parameter of dmondrian must be an Instance. "
            f"Got {type(instance).__name__} instead."
        )
    requirements = validate_requirements(instance, requirements, caller="dmondrian")
    check_option(cut_rule, "cut_rule", "dmondrian", FIND_CUT_RULES)
    check_option(k_mode, "k_mode", "dmondrian", K_MODES)
    if pd_groups is not None:
        check_option(pd_groups, "pd_groups", "dmondrian", PD_GROUPS)
    limit = E.check_time_limit(time_limit, "dmondrian")
    check_random_state(seed)  # validated only: nothing here is random
    schema = instance.schema
    pd_name, dec_name = schema.protected, schema.decision
    missing = [role for role, name in (("protected", pd_name), ("decision", dec_name)) if name is None]
    if missing:
        raise IncompatibleRequirementError(
            f"dmondrian needs a {' and a '.join(missing)} attribute; instance {instance.name!r} "
            "has none."
        )
    n = instance.n_rows
    dec_values = E.dense_codes(instance.codes(dec_name))[0]
    if len(dec_values) > 2:
        raise IncompatibleRequirementError(
            f"dmondrian needs a binary decision attribute (Ruggieri §2); {dec_name!r} has "
            f"{len(dec_values)} values. Binarize it first (negative vs the rest)."
        )

    # Which requirement gives t, which are split checks.
    k, t_close, alphas, others = 1, [], [], []
    for req in requirements:
        if isinstance(req, KAnonymity):
            k = max(k, req.k)
        elif isinstance(req, AlphaProtection):
            alphas.append(req)
        elif isinstance(req, TCloseness) and dec_name in requirement_targets(schema, req):
            if requirement_targets(schema, req) != (dec_name,):
                raise IncompatibleRequirementError(
                    f"{req} protects {requirement_targets(schema, req)}; give the decision "
                    "attribute and the other targets separate TCloseness requirements."
                )
            t_close.append(req)
        elif isinstance(req, (LDiversity, TCloseness)):
            others.append(req)
        else:
            raise IncompatibleRequirementError(
                f"dmondrian cannot enforce {req}: it checks KAnonymity, LDiversity, "
                "TCloseness and AlphaProtection. Use method='diva' or method='cpsat'."
            )
    if not t_close and not alphas:
        raise IncompatibleRequirementError(
            "dmondrian needs its threshold from a TCloseness of the decision attribute "
            f"({dec_name!r}) or from an AlphaProtection requirement; got "
            f"{[str(r) for r in requirements]}."
        )

    # Global statistics, fixed for the whole run (p- is never recomputed, P18).
    pd_codes = instance.codes(pd_name)
    present, block = E.dense_codes(pd_codes)
    n_blocks = len(present)
    pd_attr = schema[pd_name]
    protected_idx = [pd_attr.domain.index(v) for v in pd_attr.protected]
    protected_block = np.isin(present, protected_idx)
    negative = instance.negative_mask().astype(np.int64)
    neg = int(negative.sum())
    if pd_groups is None:
        pd_groups = "values" if t_close else "binary"
    elif pd_groups == "binary" and t_close and n_blocks > 2:
        raise IncompatibleRequirementError(
            f"pd_groups='binary' keeps only protected and unprotected records within t, but "
            f"{t_close[0]} is checked in every released class, one per value of {pd_name!r} "
            f"({n_blocks} values). Use pd_groups='values'."
        )
    tau = _Tau(neg, n, protected_block, pd_groups == "values")
    p_minus = tau.p_minus
    whole = np.bincount(2 * block + negative, minlength=2 * n_blocks).reshape(1, -1)
    tau_r = _Tau(neg, n, protected_block, False).exact(whole)
    floor = tau.exact(whole)

    prot_row = protected_block[block]
    table = tuple(
        int(np.count_nonzero((prot_row == p_side) & (negative == is_neg)))
        for p_side, is_neg in ((True, 1), (True, 0), (False, 1), (False, 0))
    )
    t_used, source, t_alphas, reasons = _threshold(
        t_close, alphas, floor, tau_r, table, neg, n, pd_groups, pd_name
    )

    checks = E.Checks(instance, others)
    params = {"cut_rule": cut_rule, "k_mode": k_mode, "pd_groups": pd_groups, "time_limit": limit}
    notes = guarantee_notes(t_used, source, t_alphas, p_minus, tau_r, floor, k, k_mode, pd_name)

    def release(groups, status=Status.FEASIBLE, reason=None, timed_out=False):
        return Release(
            table=generalize_partition(instance, groups),
            groups=groups,
            status=status,
            reason=reason,
            provenance=provenance(
                "dmondrian", params, requirements, seed, started,
                time_limit_reached=timed_out, **notes,
            ),
        )

    # Requirements the records of one PD value already violate: they only ever form
    # classes among themselves, so nothing can repair it.
    block_sizes = np.bincount(block, minlength=n_blocks)
    failed = []
    if k_mode == "strict" and block_sizes.min() < k:
        b = int(np.argmin(block_sizes))
        failed.append((f"{k}-anonymity", b))
    if checks.checks:
        for b in range(n_blocks):
            rows = block == b
            counts = {
                name: np.bincount(t_.codes[rows], minlength=t_.m).reshape(1, -1)
                for name, t_ in checks.targets.items()
            }
            for text in checks.failures(np.array([int(rows.sum())]), counts):
                failed.append((text, b))
    if failed:
        text, b = failed[0]
        value = pd_attr.domain[int(present[b])]
        reason = (
            f"{text} is violated by the {int(block_sizes[b])} records with {pd_name}={value!r}: "
            "the PD attribute is released unchanged, so these records only form classes "
            "among themselves and no release satisfies the requirement."
        )
        return release(np.zeros(n, dtype=np.int64), Status.INFEASIBLE, reason)

    ranked = [E.rank_column(instance, name) for name in schema.generalizable]
    engine = _DMondrian(ranked, block, negative, n_blocks, tau, t_used, k, k_mode, cut_rule, checks)
    deadline = None if limit is None else started + limit
    groups, timed_out = engine.run(n, deadline)
    return settled(instance, release(groups, timed_out=timed_out), reasons)


def _with_whole_table(text: str, req: AlphaProtection, table, neg: int, n: int) -> tuple:
    """`text`, naming the whole table's value of alpha's measure when it fails alpha,
    whether it does, and `req`: only that proves that no release meets alpha (the whole
    table is a context of every release, checked when it has alpha's least support),
    where a release beyond the guarantee of Thm 20 may."""
    whole = M.discrimination_exact(req.measure, *table, neg, n)
    if req.larger_is_worse:
        met = whole < req.alpha if req.strict else whole <= req.alpha
    else:
        met = whole > req.alpha if req.strict else whole >= req.alpha
    # The whole table is checked only with the support it has.
    met = met or (req.min_support is not None and n < req.min_support)
    if not met:
        text += f"; the whole table, a context of every release, has {req.measure} = {_show(whole)}"
    return text, not met, req


def settled(instance: Instance, release: Release, reasons: list) -> Release:
    """`release` (FEASIBLE) with the status the `reasons` of :func:`_threshold` give it:
    INFEASIBLE when one proves that no release meets the requirements (t below the
    floor, or alpha failed by the whole table, a context of every release); else, the
    requirements beyond the guarantee of Thm 20, the release is measured against them
    (the verifier, exactly): FEASIBLE when it meets them, with
    ``provenance["unguaranteed"]`` saying so (UCI Adult, k = 5, elift 1.2: the guarantee
    reaches 1.275, the release measures 1.121), UNKNOWN otherwise."""
    if not reasons:
        return release
    said = "; ".join(text for text, _, _ in reasons)
    if any(proven for _, proven, _ in reasons):
        return dataclasses.replace(release, status=Status.INFEASIBLE, reason=f"{said}.")
    report = verify(instance, release, [req for _, _, req in reasons], metrics=False)
    if report.passed:
        return release.with_provenance(unguaranteed=(
            f"{said}; the release offered meets it all the same, as the verifier measures it"))
    failed = ", ".join(f"{c.name}: {c.achieved}" for c in report.failures)
    return dataclasses.replace(release, status=Status.UNKNOWN, reason=(
        f"{said}; the release offered fails it as measured ({failed}), and no release was "
        "proven to"))


def _bounds(measure: str, t: Fraction, p_minus: Fraction) -> dict:
    """bd_f(t) (Thm 10, 15), its direction and the opposite side; with p- in {0, 1}
    every measure is neutral (0 for RD/ED, 1 for the ratios; docs/papers.md, R-3)."""
    if p_minus in (0, 1):
        neutral = Fraction(0) if measure in ("RD", "ED") else Fraction(1)
        bound = opposite = neutral
    else:
        bound, opposite = M.bound(measure, t, p_minus), M.bound_opposite(measure, t, p_minus)
    direction = ">=" if MEASURES[measure] == "lower" else "<="
    return {"bound": bound, "direction": direction, "opposite": opposite}


def _threshold(t_close, alphas, floor, tau_r, table, neg, n, pd_groups, pd_name):
    """The t dMondrian runs with, where it comes from, each alpha's t_alpha, and the
    reasons (if any) why the requirements cannot all be guaranteed by generalization,
    each with whether it proves that no release meets them (:func:`settled`)."""
    p_minus = Fraction(neg, n)
    candidates = [(req.t, req) for req in t_close]
    t_alphas, reasons = {}, []
    for req in alphas:
        ta = M.t_alpha(req.measure, req.alpha, p_minus, strict=req.strict)
        t_alphas[str(req)] = ta
        if ta is None:
            text = (f"{req} cannot be guaranteed by t-closeness: even a 0-close table is only "
                    f"bd_{req.measure}(0) = {_show(M.bound(req.measure, 0, p_minus))}-protective")
            reasons.append(_with_whole_table(text, req, table, neg, n))
        else:
            candidates.append((ta, req))
    if pd_groups == "values":
        where = f"the records of one value of {pd_name!r}"
    else:
        where = "the protected or the unprotected records"
    for t_value, req in candidates:
        if t_value >= floor:
            continue
        label = f"{req} (t_alpha = {_show(t_value)})" if isinstance(req, AlphaProtection) else str(req)
        text = (
            f"{label} is out of reach: t = {_show(t_value)} is below {_show(floor)}, the "
            f"distance of {where} from the whole table's negative rate, which no "
            "generalization changes, so no cut is d-allowable"
        )
        if isinstance(req, AlphaProtection):
            text += (
                f"; the best guarantee is bd_{req.measure}(tau(R) = {_show(tau_r)}) = "
                f"{_show(M.bound(req.measure, tau_r, p_minus))}, that of the release offered"
            )
            reasons.append(_with_whole_table(text, req, table, neg, n))
        else:
            # Every class lies within one PD group, whose records' distance from the
            # table some class reaches at least: no release is t-close, where the
            # distance of the two decision values is 1 (with a declared order whose
            # absent values lie between them, it is less, and the release is measured).
            unit = req.distance == "equal" or (req.distance == "ordered"
                                               and req.ordered_domain == "present")
            reasons.append((text, unit, req))
    if not candidates:
        return floor, None, t_alphas, reasons
    t_req, req = min(candidates, key=lambda c: c[0])
    return (max(t_req, floor) if reasons else t_req), str(req), t_alphas, reasons


def guarantee_notes(t_used, source, t_alphas, p_minus, tau_r, floor, k, k_mode, pd_name) -> dict:
    """Provenance of Ruggieri's guarantee (Thm 20 for dMondrian, Thm 23 for dSabre): the
    release is max(t, τ(R))-close, hence bd_f(max(t, τ(R)))-protective for every measure."""
    guaranteed = max(t_used, tau_r)
    notes = {
        "t": t_used,
        "t_source": source,
        "t_alpha": t_alphas,
        "p_minus": p_minus,
        "tau_R": tau_r,
        "tau_floor": floor,
        "guaranteed_t": guaranteed,
        "bounds": {f: _bounds(f, guaranteed, p_minus) for f in _MEASURE_ORDER},
    }
    if k > 1 and k_mode == "ec":
        notes["k_anonymity"] = (
            f"{k}-anonymity w.r.t. the PND attributes only (k_mode='ec'): a released class "
            f"(which also fixes {pd_name!r}) may hold fewer than {k} records"
        )
    return notes
