"""The verifier: every guarantee re-checked from the released table itself.

:func:`verify` never looks at the group ids or the claims of the method that made a
release. It regroups rows by their released quasi-identifier values, reads released
labels back into sets of original values, and decides every threshold in exact
arithmetic. It imports no algorithm.
"""

from __future__ import annotations

import dataclasses
import itertools
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd

from ..exceptions import InvalidParameterError, SchemaError
from ..instances.generalization import label_covers, readable_covers
from ..instances.instance import Instance
from ..release import Release, _jsonable
from . import closeness as C
from .contexts import itemset_groupings
from . import measures as M
from .bounds import release_bounds
from .metrics import summary as metric_summary
from .metrics.classes import first_appearance
from .released import factorize, group_ids, id_type, in_record_order, narrow, record_order, rows_in_record_order
from .risk.sample import size_summary
from .risk.requirements import risk_requirement
from .requirements import (
    RISK_REQUIREMENTS,
    AlphaProtection,
    DiversityConstraint,
    KAnonymity,
    LDiversity,
    MultiplicativeTCloseness,
    Requirement,
    StochasticTCloseness,
    TCloseness,
    requirement_targets,
    validate_requirements,
)

__all__ = ["CheckResult", "Report", "verify"]

_MAX_WITNESS_ROWS = 10


@dataclass(frozen=True)
class CheckResult:
    """One verdict.

    Attributes
    ----------
    name : str
        The requirement as text ("5-anonymity") or an integrity check ("truthfulness").
    passed : bool
    achieved : number or None
        The achieved value, exact where it is a ratio: smallest class, achieved l,
        largest EMD, worst discrimination measure, a count.
    threshold : number or None
    witness : dict or None
        The offending (or, when passed, the tightest) group or itemset.
    detail : str
    """

    name: str
    passed: bool
    achieved: Any = None
    threshold: Any = None
    witness: dict | None = None
    detail: str = ""
    integrity: bool = False

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "passed": self.passed,
            "achieved": _jsonable(self.achieved),
            "achieved_exact": str(self.achieved) if isinstance(self.achieved, Fraction) else None,
            "threshold": _jsonable(self.threshold),
            "witness": _jsonable(self.witness),
            "detail": self.detail,
            "integrity": self.integrity,
        }


@dataclass(frozen=True)
class Report:
    """What :func:`verify` found: one :class:`CheckResult` per integrity check and per
    requirement, plus the information-loss metrics of the release and the method's
    reason for its status (``Release.reason``: why it stopped, when it gives one)."""

    instance: str
    method: str
    status: str
    n_rows: int
    n_classes: int
    checks: tuple[CheckResult, ...]
    metrics: dict = field(default_factory=dict)
    elapsed_s: float = 0.0
    bounds: dict = field(default_factory=dict)
    risk: dict = field(default_factory=dict)
    reason: str | None = None

    @property
    def passed(self) -> bool:
        """True iff every check passed."""
        return all(c.passed for c in self.checks)

    @property
    def failures(self) -> list[CheckResult]:
        return [c for c in self.checks if not c.passed]

    def __getitem__(self, name: str) -> CheckResult:
        for c in self.checks:
            if c.name == name:
                return c
        raise KeyError(f"No check named {name!r}; checks: {[c.name for c in self.checks]}")

    def to_dict(self) -> dict:
        return {
            "instance": self.instance,
            "method": self.method,
            "status": self.status,
            "passed": self.passed,
            "n_rows": self.n_rows,
            "n_classes": self.n_classes,
            "checks": [c.to_dict() for c in self.checks],
            "metrics": _jsonable(self.metrics),
            "bounds": {
                objective: {**_jsonable(b), **{f"{key}_exact": str(b[key]) for key in ("loss", "bound")
                                              if isinstance(b.get(key), Fraction)}}
                for objective, b in self.bounds.items()
            },
            "elapsed_s": self.elapsed_s,
            "risk": self.risk,
            "reason": self.reason,
        }

    def __str__(self) -> str:
        verdict = "PASSED" if self.passed else "FAILED"
        lines = [
            f"Verification of a {self.method!r} release of {self.instance!r} "
            f"({self.n_rows} rows, {self.n_classes} classes, status {self.status}): {verdict}",
            f"  ({self.status}: {STATUS_MEANINGS.get(self.status, 'as the method reports it')}; "
            f"{verdict}: {VERDICT_MEANINGS[verdict]})",
        ]
        if self.reason:
            # Why the method stopped, in its own words: the time, a cap of its search, ...
            lines.append(f"  reason: {self.reason}")
        width = max([len(c.name) for c in self.checks] + [5])
        for c in self.checks:
            achieved = _display(c.achieved)
            if c.threshold is not None and achieved == _display(c.threshold) and c.achieved != c.threshold:
                # rounding must not show a value on the other side of its bound
                exact = isinstance(c.achieved, (float, np.floating))
                achieved = repr(float(c.achieved)) if exact else str(c.achieved)
            bound = f" (bound {_display(c.threshold)})" if c.threshold is not None else ""
            line = f"  {'pass' if c.passed else 'FAIL'}  {c.name:<{width}}  {achieved}{bound}"
            if c.detail:
                line += f"  {c.detail}"
            if not c.passed and c.witness:
                line += f"\n        witness: {_witness_text(c.witness)}"
            lines.append(line)
        if self.risk:
            r = self.risk
            lines.append(
                f"  risk: prosecutor highest {r['prosecutor_highest']['exact']} ({r['records_at_highest']} records), "
                f"average {r['prosecutor_average']['value']:.4g}, {r['sample_uniques']} sample uniques, "
                f"{r['records_above_threshold']} records above {r['threshold']['exact']} (fairanon risk: every figure)"
            )
        if self.metrics:
            shown = ", ".join(f"{k}={_display(v)}" for k, v in self.metrics.items() if not isinstance(v, dict))
            lines.append(f"  metrics: {shown}")
        for objective, b in self.bounds.items():
            lines.append(
                f"  bound: {objective.upper()} {_display(b['loss'])} >= {_display(b['bound'])}, "
                f"gap {_display(b['gap'])} ({b['source']})"
            )
        return "\n".join(lines)


#: The one-line legend under a report's first line: what the method's status says...
STATUS_MEANINGS = {
    "OPTIMAL": "the method proved that no release meeting the requirements loses less",
    "FEASIBLE": "the method gave a release meeting the requirements, not proven to lose least",
    "INFEASIBLE": "the method proved that no release can meet the requirements, or found none",
    "UNKNOWN": "the method stopped before it found a release meeting the requirements (its reason "
               "says why: the time limit, a cap of its search, ...)",
}
#: ... and what the verdict says.
VERDICT_MEANINGS = {
    "PASSED": "every check below, redone by the verifier from the released table, holds",
    "FAILED": "a check below, redone by the verifier from the released table, fails",
}


def _display(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, Fraction):
        return f"{float(value):.4g}" if value.denominator != 1 else str(value.numerator)
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def _witness_text(witness: dict) -> str:
    return ", ".join(f"{k}={_display(v) if not isinstance(v, (dict, list)) else v}" for k, v in witness.items())


# ------------------------------------------------------------------ integrity
def _check_rows(instance: Instance, release: Release) -> CheckResult:
    ids = release.table.index
    dup = ids[ids.duplicated()].unique()
    order = record_order(dup)  # listed in id order, as lost and unknown ids are
    dup = dup if order is None else dup[order]
    lost = instance.row_ids.difference(ids)
    extra = ids.difference(instance.row_ids)
    bad_suppressed = []
    if release.suppressed:  # a set of the ids only when records are listed as suppressed
        listed = list(release.suppressed)
        bad_suppressed = [r for r, known in zip(listed, pd.Index(listed).isin(ids)) if not known]
    ok = len(dup) == 0 and len(lost) == 0 and len(extra) == 0 and not bad_suppressed
    witness = None
    if not ok:
        witness = {
            "lost": list(lost[:_MAX_WITNESS_ROWS]),
            "duplicated": list(dup[:_MAX_WITNESS_ROWS]),
            "unknown": list(extra[:_MAX_WITNESS_ROWS]),
            "suppressed_not_released": bad_suppressed[:_MAX_WITNESS_ROWS],
        }
    detail = f"{len(lost)} lost, {len(dup)} duplicated, {len(extra)} unknown"
    if release.suppressed:
        detail += f", {len(release.suppressed)} suppressed records listed"
    return CheckResult("rows", ok, achieved=len(ids), witness=witness, detail=detail, integrity=True)


def _check_columns(instance: Instance, release: Release) -> CheckResult:
    """Every released attribute once, and nothing else: a column that is not a schema
    attribute allowed in a release (an identifier, an ignored column, a name the schema
    does not know) fails, by name, whatever it holds."""
    names = [str(c) for c in release.table.columns]
    columns = set(names)
    allowed = set(instance.schema.released)
    missing = [n for n in instance.schema.released if n not in columns]
    twice = sorted({n for n in names if names.count(n) > 1})
    role = {a.name: a.role for a in instance.schema}
    extra = [n for n in dict.fromkeys(names) if n not in allowed]
    ok = not missing and not extra and not twice
    witness = None if ok else {"missing": missing, "not_allowed": extra, "duplicated": twice}
    problems = []
    if extra:
        problems.append("not allowed in a release: " + ", ".join(
            f"{n!r} ({role[n] if n in role else 'not in the schema'})" for n in extra))
    if missing:
        problems.append(f"missing: {', '.join(map(repr, missing))}")
    if twice:
        problems.append(f"released twice: {', '.join(map(repr, twice))}")
    detail = "; ".join(problems) if problems else "every released attribute, nothing else"
    return CheckResult("columns", ok, achieved=len(names), witness=witness, detail=detail, integrity=True)


def _aligned(instance: Instance, release: Release) -> tuple[pd.DataFrame, np.ndarray]:
    """The released rows whose ids the instance knows (first occurrence) and their
    positions in the instance."""
    if release.table.index.equals(instance.row_ids):
        return release.table, np.arange(instance.n_rows, dtype=id_type(instance.n_rows))
    table = release.table[~release.table.index.duplicated()]
    table = table[table.index.isin(instance.row_ids)]
    positions = instance.row_ids.get_indexer(table.index)
    return table, positions


#: Rows per slice where a check builds several per-row temporaries.
_CHUNK = 1 << 16


def _check_truthful(instance: Instance, table: pd.DataFrame, positions: np.ndarray) -> CheckResult:
    """Every released cell of a generalizable attribute covers its original; a cell
    whose label cannot be read at all counts as one untruthful cell, like any other."""
    bad: dict | None = None
    n_bad = 0
    for name in instance.schema.generalizable:
        if name not in table.columns:
            continue
        attr = instance.schema[name]
        codes, labels = factorize(table[name])
        covers, unreadable = readable_covers(attr, labels)
        unread = np.zeros(len(labels), dtype=bool)
        unread[list(unreadable)] = True
        full = instance.codes(name)
        # By slices of rows: the per-row bounds a label test reads stay small.
        wrong = [
            np.flatnonzero(
                ~covers.contains(codes[s:s + _CHUNK], full[positions[s:s + _CHUNK]]) | unread[codes[s:s + _CHUNK]]
            ) + s
            for s in range(0, len(codes), _CHUNK)
        ]
        n_wrong = sum(len(w) for w in wrong)
        if n_wrong:
            n_bad += n_wrong
            if bad is None:
                marked = np.zeros(len(codes), dtype=bool)
                marked[np.concatenate(wrong)] = True
                # The witness: the wrong cell of the smallest record id.
                i = int(rows_in_record_order(marked, record_order(table.index))[0])
                bad = {
                    "row": table.index[i],
                    "attribute": name,
                    "original": _original(instance, name, positions[i]),
                    "released": labels[codes[i]],
                }
                if int(codes[i]) in unreadable:
                    bad["detail"] = unreadable[int(codes[i])]
    return CheckResult(
        "truthfulness", n_bad == 0, achieved=n_bad, witness=bad,
        detail="every released cell generalizes its original" if n_bad == 0 else f"{n_bad} untruthful cell(s)",
        integrity=True,
    )


def _original(instance: Instance, name: str, position: int):
    value = instance.table[name].iloc[position]
    return value.item() if hasattr(value, "item") else value


def _check_unchanged(
    instance: Instance, table: pd.DataFrame, positions: np.ndarray, masked: frozenset = frozenset()
) -> CheckResult:
    """`masked`: attributes a requirement lets the release mask (its own check reads them)."""
    n_bad, bad = unchanged_cells(instance.schema, table, lambda name: instance.codes(name)[positions],
                                 masked, table.index)
    if bad is not None:
        bad = {"row": table.index[bad[1]], "attribute": bad[0],
               "original": _text(instance.table[bad[0]].iloc[positions[bad[1]]]), "released": bad[2]}
    return CheckResult(
        "unchanged values", n_bad == 0, achieved=n_bad, witness=bad,
        detail="protected, sensitive and decision values as in the original" if n_bad == 0 else f"{n_bad} changed cell(s)",
        integrity=True,
    )


def _text(value) -> str:
    return str(value.item() if hasattr(value, "item") else value)


def unchanged_cells(schema, table: pd.DataFrame, original, masked: frozenset = frozenset(),
                    ids: pd.Index | None = None):
    """Released cells of the unchanged attributes that differ from the original.

    `original(name)` gives the original codes (domain indices, or numbers for numeric
    attributes) of the rows of `table`. Released values are read once per distinct
    value: a categorical or ordered cell is unchanged when its text is the original
    value, a numeric one when it reads as the same number. Returns the number of
    changed cells and the first one, as (attribute, row position, released text): of
    the first attribute with a changed cell, the row of the smallest record id of
    `ids`, the rows' ids (:func:`~fairanon.models.released.record_order`; None: the
    first row).
    """
    n_bad, first = 0, None
    for name in schema.unchanged:
        if name not in table.columns or name in masked:
            continue
        codes, labels = factorize(table[name])
        differ = unchanged_lookup(schema[name], labels)[codes] != original(name)
        if differ.any():
            n_bad += int(differ.sum())
            if first is None:
                order = None if ids is None else record_order(ids)
                i = int(rows_in_record_order(np.asarray(differ), order)[0])
                first = (name, i, str(labels[codes[i]]))
    return n_bad, first


def unchanged_lookup(attr, labels) -> np.ndarray:
    """What each distinct released text of an unchanged attribute reads as: its number
    (numeric attributes; NaN when it is not one) or its domain index (-1 when it is not
    a value of the attribute), to compare with the original codes."""
    if attr.kind == "numeric":
        return np.array([_number(v) for v in labels], dtype=float)
    index = {v: i for i, v in enumerate(attr.domain)}
    return np.array([index.get(v, -1) for v in labels], dtype=np.int64)


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        return float("nan")


# ----------------------------------------------------------------- the classes
class _Classes:
    """Released equivalence classes and the lookups the requirement checks share.

    Classes are numbered by their released quasi-identifier values (the codes of each
    column in order of first appearance in record-id order, compared column by column:
    :func:`~fairanon.models.released.record_order`, so the witnesses do not depend on
    the order of the rows); the checks read only class-level data: sizes, each class's
    labels and its counts over the values of a row-level attribute (:meth:`counts`).
    """

    def __init__(self, instance: Instance, table: pd.DataFrame):
        self.table = table
        self.qi = [c for c in instance.schema.qi if c in table.columns]
        self.order = record_order(table.index)
        self.columns = {c: _narrowed(in_record_order(*factorize(table[c]), self.order)) for c in self.qi}
        if self.columns:
            self.ids, self.n = group_ids([(codes, len(labels)) for codes, labels in self.columns.values()])
        else:
            self.ids, self.n = np.zeros(len(table), dtype=id_type(len(table))), 1 if len(table) else 0
        self.sizes = np.bincount(self.ids, minlength=self.n)
        first = np.full(self.n, -1, dtype=self.ids.dtype)
        first[self.ids[::-1]] = np.arange(len(self.ids), dtype=self.ids.dtype)[::-1]
        self.first_row = first
        self._values: dict[str, tuple[np.ndarray, list]] = {}

    def class_codes(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """The label code of every class on a quasi-identifier, and the labels."""
        codes, labels = self.columns[name]
        return codes[self.first_row], labels

    def describe(self, g: int, **extra) -> dict:
        """A witness for class g: its released QI values, size and some record ids."""
        out = {"class": {c: str(self.columns[c][1][self.columns[c][0][self.first_row[g]]]) for c in self.qi},
               "size": int(self.sizes[g])}
        out.update(extra)
        members = self.table.index[rows_in_record_order(self.ids == g, self.order)[:_MAX_WITNESS_ROWS]]
        out["records"] = [r.item() if hasattr(r, "item") else r for r in members]
        return out

    def values(self, instance: Instance, name: str) -> tuple[np.ndarray, list]:
        """Codes of the released values of a target attribute, ordered by the attribute's
        order (numeric: by value), and the list of values."""
        if name not in self._values:
            codes, labels = factorize(self.table[name])
            remap, order = value_order(instance.schema[name], labels)
            self._values[name] = (remap[codes], order)
        return self._values[name]

    def counts(self, instance: Instance, name: str) -> tuple[np.ndarray, list]:
        """Counts[g, v] of each released value v of an attribute in class g, and the values."""
        codes, values = self.values(instance, name)
        return M.group_counts(self.ids, codes, self.n, len(values)), values


def _narrowed(coded: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    codes, labels = coded
    return narrow(codes, len(labels)), labels


def value_order(attr, labels) -> tuple[np.ndarray, list]:
    """The released values of a row-level attribute in the attribute's order (numeric:
    by value; values outside the domain last, sorted), and each label's position there."""
    if attr.kind == "numeric":
        numbers = np.array([_number(v) for v in labels], dtype=float)
        uniq, remap = np.unique(numbers, return_inverse=True)
        return remap.reshape(-1).astype(np.int64), list(uniq)
    present = set(str(v) for v in labels)
    order = [v for v in (attr.domain or ()) if v in present]
    order += sorted(present - set(order))
    position = {v: i for i, v in enumerate(order)}
    return np.array([position[str(v)] for v in labels], dtype=np.int64), order


def _check_k(req: KAnonymity, cls: _Classes) -> CheckResult:
    g = int(np.argmin(cls.sizes))
    smallest = int(cls.sizes[g])
    ok = smallest >= req.k
    n_small = int((cls.sizes < req.k).sum())
    detail = "" if ok else f"{n_small} class(es) smaller than {req.k}"
    return CheckResult(str(req), ok, achieved=smallest, threshold=req.k, witness=cls.describe(g), detail=detail)


def _check_risk(req, cls: _Classes) -> CheckResult:
    """A risk requirement (average risk, sample or population uniques) from the class
    sizes, exactly (:func:`fairanon.models.risk.requirements.risk_requirement`)."""
    result = risk_requirement(req, cls.sizes)
    witness = None
    if result.witness == "smallest":
        witness = cls.describe(int(np.argmin(cls.sizes)))
    elif result.witness == "unique":
        witness = cls.describe(int(np.flatnonzero(cls.sizes == 1)[0]))
    if result.parameters:
        witness = {**(witness or {}), "model": result.parameters}
    threshold = req.r if hasattr(req, "r") else req.u
    return CheckResult(str(req), result.passed, achieved=result.achieved, threshold=threshold, witness=witness,
                       detail=result.detail)


def _check_l(req: LDiversity, cls: _Classes, instance: Instance) -> list[CheckResult]:
    out = []
    for name in requirement_targets(instance.schema, req):
        counts, values = cls.counts(instance, name)
        label = str(req) if req.attribute or len(requirement_targets(instance.schema, req)) == 1 else f"{req} of {name}"
        if req.variant == "distinct":
            achieved = M.distinct_l(counts)
            ok = achieved >= req.l
            g = int(np.argmin(achieved))
            best = int(achieved[g])
        elif req.variant == "entropy":
            achieved = M.entropy_l(counts)
            ok = M.entropy_l_ok(counts, req.l)
            failing = np.flatnonzero(~ok)
            g = int(failing[np.argmin(achieved[failing])]) if len(failing) else int(np.argmin(achieved))
            best = M.entropy_l_value(counts[g], req.l, bool(ok[g]))
        else:
            ok, ratios = M.recursive_cl_ok(counts, req.c, req.l)
            g = int(max(range(cls.n), key=lambda i: ratios[i]))
            best = ratios[g]
        if not ok.all():
            g = int(np.flatnonzero(~ok)[0]) if req.variant == "recursive" else g
        distribution = {str(values[j]): int(counts[g, j]) for j in np.flatnonzero(counts[g])}
        detail = "" if ok.all() else f"{int((~ok).sum())} class(es) fail"
        threshold = req.c if req.variant == "recursive" else req.l
        out.append(
            CheckResult(label, bool(ok.all()), achieved=best, threshold=threshold,
                        witness=cls.describe(g, distribution=distribution), detail=detail)
        )
    return out


def _ground(instance: Instance, name: str, values: list, req: TCloseness) -> M.EMDGround:
    attr = instance.schema[name]
    if req.distance == "hierarchical":
        unknown = [v for v in values if str(v) not in attr.hierarchy.leaf_index]
        if unknown:
            raise SchemaError(f"Released values {unknown[:5]} of {name!r} are not leaves of its hierarchy.")
    return M.emd_ground(req.distance, values, attr, req.ordered_domain)


def _check_t(req: TCloseness, cls: _Classes, instance: Instance) -> list[CheckResult]:
    out = []
    targets = requirement_targets(instance.schema, req)
    for name in targets:
        counts, values = cls.counts(instance, name)
        global_counts = counts.sum(axis=0)
        label = str(req) if req.attribute or len(targets) == 1 else f"{req} of {name}"
        try:
            ground = _ground(instance, name, values, req)
        except SchemaError as exc:
            # A released value the distance has no place for (a changed cell, which the
            # check of unchanged values names): the check fails, it does not raise.
            out.append(CheckResult(label, False, threshold=req.t, detail=f"not measured: {exc}"))
            continue
        distances = M.emd(counts, global_counts, ground)

        def exact(g: int) -> Fraction:
            return M.emd_exact(counts[g], global_counts, ground)

        ok = M.exact_compare(distances, exact, req.t, "le")
        top = float(distances.max())
        near = np.flatnonzero(distances >= top - M.TOLERANCE * max(1.0, top))
        g = max(near, key=exact)
        worst = exact(int(g))
        if not ok.all():
            g = int(np.flatnonzero(~ok)[0])
        distribution = {str(values[j]): int(counts[g, j]) for j in np.flatnonzero(counts[g])}
        out.append(
            CheckResult(label, bool(ok.all()), achieved=worst, threshold=req.t,
                        witness=cls.describe(int(g), emd=exact(int(g)), distribution=distribution),
                        detail="" if ok.all() else f"{int((~ok).sum())} class(es) farther than t")
        )
    return out


def diversity_count(req: DiversityConstraint, table: pd.DataFrame, schema) -> int:
    """The number of released rows showing every target value of a diversity constraint
    (each distinct released value is read once)."""
    match = np.ones(len(table), dtype=bool)
    for name, value in req.target:
        codes, labels = factorize(table[name])
        if schema[name].kind == "numeric":
            hit = np.array([_number(v) for v in labels], dtype=float) == float(value)
        else:
            hit = labels == value
        match &= hit.astype(bool)[codes]
    return int(match.sum())


def _check_diversity(req: DiversityConstraint, table: pd.DataFrame, instance: Instance) -> CheckResult:
    return diversity_result(req, diversity_count(req, table, instance.schema))


def diversity_result(req: DiversityConstraint, count: int) -> CheckResult:
    ok = req.lower <= count <= req.upper
    witness = {"count": count, "lower": req.lower, "upper": req.upper}
    detail = "" if ok else ("too few" if count < req.lower else "too many") + " visible target records"
    return CheckResult(str(req), ok, achieved=count, threshold=(req.lower, req.upper), witness=witness, detail=detail)


def _check_alpha(req: AlphaProtection, cls: _Classes, instance: Instance) -> CheckResult:
    """Every PND itemset over released values (Ruggieri Defs. 2-5), by one group-by per
    subset of PND attributes; each subset refines its parent's grouping.

    The itemsets are read from the classes: the protected attribute and every PND
    attribute are quasi-identifiers, so a class lies in one context of each itemset,
    with its counts of negative decisions. The walk is
    :func:`~fairanon.models.contexts.itemset_groupings`, which
    :func:`~fairanon.models.contexts.contexts` lists."""
    schema = instance.schema
    pd_attr, dec_attr = schema[schema.protected], schema[schema.decision]
    codes, labels = cls.class_codes(pd_attr.name)
    protected = np.isin(labels.astype(str), list(pd_attr.protected))[codes] if len(labels) else codes.astype(bool)
    counts, values = cls.counts(instance, dec_attr.name)
    is_negative = np.array([v == dec_attr.negative for v in values], dtype=bool)
    sizes = cls.sizes.astype(np.int64)
    negative = counts[:, is_negative].sum(axis=1).astype(np.int64) if len(values) else np.zeros(cls.n, np.int64)
    weights = [
        np.where(protected, negative, 0), np.where(protected, sizes - negative, 0),
        np.where(protected, 0, negative), np.where(protected, 0, sizes - negative),
    ]
    total, neg = int(sizes.sum()), int(negative.sum())
    pnd = [c for c in schema.generalizable if c in cls.qi]
    columns = [cls.class_codes(c) for c in pnd]
    min_support = req.min_support or 1
    op = ("lt" if req.strict else "le") if req.larger_is_worse else ("gt" if req.strict else "ge")
    sign = 1.0 if req.larger_is_worse else -1.0
    state = {"worst": None, "witness": None, "violations": 0, "contexts": 0}

    def visit(itemset: tuple[int, ...], key: np.ndarray, n_key: int) -> None:
        a, b, c, d = (np.bincount(key, weights=w, minlength=n_key).astype(np.int64) for w in weights)
        keep = (a + b + c + d) >= min_support
        if not keep.any():
            return
        idx = np.flatnonzero(keep)
        props = M.Proportions(a[idx], b[idx], c[idx], d[idx], neg, total)
        values = M.discrimination(req.measure, props)

        def exact(i: int):
            return M.discrimination_exact(req.measure, *props.row(i), neg, total)

        ok = M.exact_compare(values, exact, req.alpha, op)
        state["contexts"] += len(idx)
        state["violations"] += int((~ok).sum())
        signed = sign * values
        top = float(np.max(signed))
        near = np.flatnonzero(signed >= (top - M.TOLERANCE * max(1.0, abs(top)) if np.isfinite(top) else top))
        i = max(near, key=lambda j: sign * exact(int(j)))
        value = exact(int(i))
        if state["worst"] is None or sign * value > sign * state["worst"]:
            first = np.flatnonzero(key == idx[i])[0]
            state["worst"] = value
            state["witness"] = {
                "itemset": {pnd[j]: str(columns[j][1][columns[j][0][first]]) for j in itemset},
                "a,b,c,d": list(props.row(int(i))),
                req.measure: value,
                "tau": M.tau_exact(*props.row(int(i)), neg, total),
            }

    for itemset, key, n_key in itemset_groupings(columns, sizes, min_support):
        visit(itemset, key, n_key)
    ok = state["violations"] == 0
    detail = f"{state['contexts']} contexts checked"
    if not ok:
        detail += f", {state['violations']} discriminatory"
    return CheckResult(str(req), ok, achieved=state["worst"], threshold=req.alpha, witness=state["witness"], detail=detail)


# ------------------------------------------------- multiplicative and stochastic closeness
def _bucket_problem(instance: Instance, name: str, table: pd.DataFrame, positions: np.ndarray) -> dict | None:
    """Why the released labels of a coarsened attribute are not a bucketing of it: an
    unreadable or untruthful label, or two labels sharing a value (None if they are)."""
    attr = instance.schema[name]
    codes, labels = factorize(table[name])
    try:
        covers = label_covers(attr, labels)
    except SchemaError as exc:
        return {"attribute": name, "detail": str(exc)}
    ok = covers.contains(codes, instance.codes(name)[positions])
    if not ok.all():
        i = int(np.flatnonzero(~ok)[0])
        return {
            "row": table.index[i],
            "attribute": name,
            "original": _original(instance, name, positions[i]),
            "released": labels[codes[i]],
        }
    if not covers.numeric:
        shared = np.flatnonzero(covers.labels_per_value() > 1)
        if len(shared):
            every = np.arange(len(labels))
            both = np.flatnonzero(covers.contains(every, np.full(len(labels), shared[0])))[:2]
            return {"attribute": name, "overlapping": [labels[i] for i in both]}
        return None
    order = np.argsort(covers.lo, kind="stable")
    for a, b in itertools.pairwise(order):
        apart = covers.hi[a] < covers.lo[b] or (
            covers.hi[a] == covers.lo[b] and (covers.hi_open[a] or covers.lo_open[b])
        )
        if not apart:
            return {"attribute": name, "overlapping": [labels[a], labels[b]]}
    return None


def _check_multiplicative(
    req: MultiplicativeTCloseness, cls: _Classes, instance: Instance, table: pd.DataFrame, positions: np.ndarray
) -> list[CheckResult]:
    """Def. 4 distance (Prop. 2) of every class over the released values, which must be
    truthful and pairwise disjoint buckets (DS §6), decided in integers."""
    out = []
    targets = requirement_targets(instance.schema, req)
    for name in targets:
        label = str(req) if req.attribute or len(targets) == 1 else f"{req} of {name}"
        problem = _bucket_problem(instance, name, table, positions)
        codes, values = factorize(cls.table[name])
        counts = M.group_counts(cls.ids, codes, cls.n, len(values))
        glob = counts.sum(axis=0)
        ok = C.multiplicative_within(counts, glob, req.t)
        g = int(np.argmax(C.multiplicative_distance(counts, glob)))
        if not ok.all():
            g = int(np.flatnonzero(~ok)[0])
        worst = C.multiplicative_distance_exact(counts[g], glob)
        distribution = {str(values[j]): int(counts[g, j]) for j in np.flatnonzero(counts[g])}
        passed = bool(ok.all()) and problem is None
        if problem is not None:
            detail = "the released values are not disjoint truthful buckets"
        else:
            detail = "" if passed else f"{int((~ok).sum())} class(es) farther than t"
        witness = problem or cls.describe(g, distance=worst, distribution=distribution)
        out.append(CheckResult(label, passed, achieved=worst, threshold=req.t, witness=witness, detail=detail))
    return out


def _check_stochastic(req: StochasticTCloseness, cls: _Classes, instance: Instance, release: Release) -> list[CheckResult]:
    """Prop. 1 (corrected): every class E is stochastically (|E| + (N - |E|) e^eps)/N-close
    under an eps-DP mask, worst at the smallest class, decided exactly. The mask itself
    cannot be read back from one draw; its preconditions (public bounds holding every
    original value) are checked, and the exact distance the mask induces on these data
    (docs/papers.md, DS-7: Laplace mixtures, or randomized response) is reported."""
    out = []
    schema = instance.schema
    targets = requirement_targets(schema, req)
    n = len(cls.ids)
    g = int(np.argmin(cls.sizes))
    smallest = int(cls.sizes[g])
    bound = float(C.stochastic_bound(smallest, n, req.epsilon))
    within = C.stochastic_bound_within(smallest, n, req.epsilon, req.t)
    known = ~release.table.index.duplicated() & release.table.index.isin(instance.row_ids)
    positions = instance.row_ids.get_indexer(release.table.index[known])
    classes = cls.ids[known]
    spans = {}
    for name in targets:
        if schema[name].kind == "numeric" and req.bounds_of(name) is not None:
            low, high = req.bounds_of(name)
            spans[name] = float(high - low)
    for name in targets:
        label = str(req) if req.attribute or len(targets) == 1 else f"{req} of {name}"
        attr = schema[name]
        witness = cls.describe(g, prop1_bound=bound)
        problem = None
        if attr.kind == "numeric":
            pair = req.bounds_of(name)
            values = instance.codes(name)
            if pair is None:
                problem = f"{name!r} is numeric: the Laplace mask needs public bounds (L, U)"
            elif values.min() < pair[0] or values.max() > pair[1]:
                problem = f"original values of {name!r} lie outside the public bounds [{pair[0]}, {pair[1]}]"
            else:
                delta = sum(spans.values()) if req.joint else spans[name]
                exact = C.laplace_mixture_distance(values[positions], classes, delta / float(req.epsilon))
                witness["exact_laplace_distance"] = float(exact.max())
        else:
            exact = C.randomized_response_distance(
                instance.codes(name)[positions], classes, len(attr.domain), req.epsilon
            )
            witness["exact_randomized_response_distance"] = float(exact.max())
        passed = within and problem is None
        detail = problem or (
            f"Prop. 1 at the smallest class ({smallest} of {n} records)"
            + ("" if within else ": above t")
        )
        out.append(CheckResult(label, passed, achieved=bound, threshold=req.t, witness=witness, detail=detail))
    return out


# --------------------------------------------------------------------- verify
def _read_columns(instance: Instance, requirements: Sequence[Requirement]) -> list[str]:
    """The released columns the requirement checks read."""
    schema = instance.schema
    needed = list(schema.qi)
    for req in requirements:
        if isinstance(req, DiversityConstraint):
            needed += [name for name, _ in req.target]
        elif isinstance(req, AlphaProtection):
            needed += [schema.protected, schema.decision]
        elif not isinstance(req, (KAnonymity, *RISK_REQUIREMENTS)):
            needed += list(requirement_targets(schema, req))
    return list(dict.fromkeys(n for n in needed if n is not None))


def verify(
    instance: Instance,
    release: Release,
    requirements: Sequence[Requirement] | Requirement = (),
    *,
    metrics: bool = True,
    bound: bool = False,
) -> Report:
    """Re-check every guarantee of `release` from its released table.

    Parameters
    ----------
    instance : Instance
        The original data.
    release : Release
    requirements : sequence of Requirement
    metrics : bool, default=True
        Also compute the information-loss metrics of :mod:`fairanon.models.metrics`.
    bound : bool, default=False
        With the metrics, the report shows the lower bound the release carries for its
        objective and the gap to it; with ``bound=True`` also the per-record lower bounds
        on the NCP and LM losses, computed here
        (:func:`fairanon.models.bounds.release_bounds`).

    Returns
    -------
    Report
        Integrity checks (rows neither lost nor duplicated, columns, truthfulness of
        every generalized cell, unchanged protected/sensitive/decision values) and one
        result per requirement (and per protected attribute), each with the achieved
        value and a witness.

    Examples
    --------
    >>> inst = fa.load("diva_table1")
    >>> from fairanon.instances.datasets import diva_table3
    >>> rel = fa.Release(diva_table3(), groups=np.zeros(10))
    >>> report = fa.verify(inst, rel, [fa.KAnonymity(2)])
    >>> report.passed, report["2-anonymity"].achieved
    (True, 2)
    """
    started = time.perf_counter()
    if not isinstance(instance, Instance):
        raise InvalidParameterError(f"verify needs an Instance; got {type(instance).__name__}.")
    if not isinstance(release, Release):
        raise InvalidParameterError(f"verify needs a Release; got {type(release).__name__}.")
    requirements = validate_requirements(instance, requirements, caller="verify", sizes=False)

    checks = [_check_rows(instance, release), _check_columns(instance, release)]
    twice = release.table.columns.duplicated()
    if twice.any():  # the columns check names them; the other checks read the first
        release = dataclasses.replace(release, table=release.table.loc[:, ~twice])
    table, positions = _aligned(instance, release)
    checks.append(_check_truthful(instance, table, positions))
    masked = frozenset(
        name
        for req in requirements
        if getattr(req, "masks_target", False)
        for name in requirement_targets(instance.schema, req)
    )
    checks.append(_check_unchanged(instance, table, positions, masked))
    released = release.table
    missing_cols = [c for c in _read_columns(instance, requirements) if c not in released.columns]
    if missing_cols:
        raise SchemaError(
            f"The release lacks column(s) {missing_cols} that the checks read "
            "(quasi-identifiers and requirement targets); nothing can be verified."
        )
    cls = _Classes(instance, released)
    n_classes = cls.n
    # The suppressed block (every quasi-identifier '*') is one class here and in every risk model.
    risk = size_summary(cls.sizes)
    for req in requirements:
        if len(released) == 0:
            checks.append(CheckResult(str(req), False, detail="the release holds no rows"))
        elif isinstance(req, KAnonymity):
            checks.append(_check_k(req, cls))
        elif isinstance(req, LDiversity):
            checks.extend(_check_l(req, cls, instance))
        elif isinstance(req, TCloseness):
            checks.extend(_check_t(req, cls, instance))
        elif isinstance(req, DiversityConstraint):
            checks.append(_check_diversity(req, released, instance))
        elif isinstance(req, AlphaProtection):
            checks.append(_check_alpha(req, cls, instance))
        elif isinstance(req, MultiplicativeTCloseness):
            checks.extend(_check_multiplicative(req, cls, instance, table, positions))
        elif isinstance(req, StochasticTCloseness):
            checks.extend(_check_stochastic(req, cls, instance, release))
        elif isinstance(req, RISK_REQUIREMENTS):
            checks.append(_check_risk(req, cls))
        else:  # pragma: no cover - every Requirement subclass is handled above
            raise InvalidParameterError(f"verify does not know requirement {req!r}.")
    summary = {}
    # Losses are measured against the original cell by cell, so only a release that
    # holds every record once, truthfully, has any.
    if metrics and checks[0].passed and checks[2].passed:
        k = next((r.k for r in requirements if isinstance(r, KAnonymity)), None)
        classes = first_appearance(cls.ids, cls.n)
        # The metrics code the columns again: the checks' row-sized arrays go first.
        del cls, table, positions
        summary = metric_summary(instance, release, k=k, classes=classes)
        del classes
    bounds = {}
    if summary:
        bounds = release_bounds(instance, release, requirements, summary, compute=bound)
    return Report(
        instance=instance.name,
        method=release.method,
        status=str(release.status),
        n_rows=len(released),
        n_classes=n_classes,
        checks=tuple(checks),
        metrics=summary,
        elapsed_s=time.perf_counter() - started,
        bounds=bounds,
        risk=risk,
        reason=release.reason,
    )

