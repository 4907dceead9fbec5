"""The verifier on Dask: the single-machine verdicts, achieved values and witnesses,
from per-partition checks and group-by counts.

A first pass numbers the distinct labels of every released column the checks read,
in their order of first appearance in the whole release read in record-id order (each
label's first record id and position; so the classes and their witnesses are those of
the single-machine verifier, whatever order the partitions hold the rows in:
:func:`~fairanon.models.released.record_order`). Row integrity, truthfulness and
unchanged values are then checked per partition of the release joined with the
original by record id (one shuffle), both sides travelling as narrow integer codes:
the release's labels by their numbers, the original's values as the checks compare
them; each label is read once, on the client. Each partition keeps its counts and its
offending row of the smallest record id (then position). The equivalence classes are counted per partition
with their counts over the target and decision values; the small per-class table
then goes through the single-machine checks of :mod:`fairanon.models.verify` on the
client. Only the records of the witness classes are read once more.

With ``utility=True`` the same join also counts, per quasi-identifier, the records of
each (released label, original value) pair; the counts are summed over the partitions
and the distributions before and after are measured from them on the client by
:func:`fairanon.models.utility.distributions.column_distribution` with the counts as
weights: the figures of :func:`fairanon.utility` without its classifier. With
``risk=True`` the risk figures of :func:`fairanon.risk` are measured from the class
counts (:mod:`.risk`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from functools import reduce
from types import SimpleNamespace

import numpy as np
import pandas as pd

from .._validation import check_int
from ..exceptions import FairanonError, IncompatibleRequirementError, InvalidParameterError, SchemaError
from ..instances.generalization import readable_covers
from ..models.metrics import loss as L
from ..models.metrics.classes import _Column, _Prepared
from ..models.released import factorize, id_type, narrow, record_order, rows_in_record_order
from ..models.risk.report import RiskReport
from ..models.risk.sample import size_summary
from ..models.utility.distributions import column_distribution
from ..models.utility.report import UtilityReport
from ..models.requirements import (
    RISK_REQUIREMENTS,
    AlphaProtection,
    DiversityConstraint,
    KAnonymity,
    LDiversity,
    TCloseness,
    requirement_targets,
    validate_requirements,
)
from ..models.verify import (
    _MAX_WITNESS_ROWS,
    CheckResult,
    Report,
    _check_alpha,
    _check_columns,
    _check_k,
    _check_l,
    _check_risk,
    _check_t,
    _text,
    diversity_count,
    diversity_result,
    unchanged_lookup,
    value_order,
)
from .instance import (
    DaskInstance,
    check_ids,
    compute as _compute,
    id_facts,
    merge_id_facts,
    persist as _persist,
    read_table,
    release_ids,
    tree,
    typed_ids,
)
from .risk import DaskRiskClasses, check_dask_options, measure_risk, release_risk_dask

__all__ = ["risk_dask", "verify_dask"]

_POS = "__pos"
#: Records coded at once on a worker.
_SLICE = 1 << 18
_SUFFIX = "__original"


def _dask():
    import dask

    return dask


# ------------------------------------------------------------------ label order
def _labels(frame: pd.DataFrame, columns: list[str], offset: int) -> dict:
    """Per column: each distinct label's first row in record-id order (its id and
    position; :func:`~fairanon.models.released.record_order`) and its count."""
    order = record_order(frame.index)
    rows = np.arange(len(frame)) if order is None else order
    ids = frame.index.to_numpy()
    out = {}
    for c in columns:
        codes, labels = factorize(frame[c])
        seen = np.full(len(labels), -1, dtype=np.int64)
        seen[codes[rows][::-1]] = np.arange(len(rows) - 1, -1, -1)
        first = rows[seen]
        out[c] = pd.DataFrame({"first_id": ids[first], "first": first + offset,
                               "count": np.bincount(codes, minlength=len(labels))},
                              index=pd.Index(labels, dtype=object))
    return out


def _merge_labels(a: dict, b: dict) -> dict:
    out = {}
    for c in a:
        both = pd.concat([a[c], b[c]]).sort_values(["first_id", "first"], kind="stable")
        out[c] = both.groupby(level=0, sort=False).agg({"first_id": "first", "first": "first", "count": "sum"})
    return out


# ------------------------------------------------------------------ classes
def _class_counts(frame: pd.DataFrame, qi: list, order: dict, radix: list, targets: list, diversity: list,
                  schema) -> dict:
    """The classes of one partition as keys (label codes in mixed radix, sorted), with
    sizes, first positions and, per target, the (class key, label code, count) triples
    present; and the diversity counts."""
    key = np.zeros(len(frame), dtype=np.int64)
    for c, r in zip(qi, radix):
        codes, labels = factorize(frame[c])
        key = key * r + order[c].reindex(labels).to_numpy(dtype=np.int64)[codes]
    pos = frame[_POS].to_numpy()
    uniq, inverse = np.unique(key, return_inverse=True)
    inverse = inverse.reshape(-1)
    first = np.full(len(uniq), np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(first, inverse, pos)
    out = {"keys": uniq, "size": np.bincount(inverse, minlength=len(uniq)), "first": first}
    for c in targets:
        codes, labels = factorize(frame[c])
        t = order[c].reindex(labels).to_numpy(dtype=np.int64)[codes]
        width = len(order[c])
        # Pairs numbered by the partition's own classes, so that no key times width
        # can overflow.
        pair, counts = np.unique(inverse * width + t, return_counts=True)
        out[("t", c)] = (uniq[pair // width], pair % width, counts)
    out["diversity"] = [diversity_count(req, frame, schema) for req in diversity]
    return out


def _merge_classes(parts: list, targets: list) -> dict:
    """The partitions' classes merged on the client (a class may span partitions):
    sorted keys, sizes and first positions, and per target the (class index, label
    code, count) triples."""
    keys, inverse = np.unique(np.concatenate([p["keys"] for p in parts]), return_inverse=True)
    inverse = inverse.reshape(-1)
    out = {"keys": keys,
           "size": np.bincount(inverse, weights=np.concatenate([p["size"] for p in parts]),
                               minlength=len(keys)).astype(np.int64)}
    first = np.full(len(keys), np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(first, inverse, np.concatenate([p["first"] for p in parts]))
    out["first"] = first
    for c in targets:
        g = np.searchsorted(keys, np.concatenate([p[("t", c)][0] for p in parts]))
        out[("t", c)] = (g, np.concatenate([p[("t", c)][1] for p in parts]),
                         np.concatenate([p[("t", c)][2] for p in parts]))
    out["diversity"] = [sum(column) for column in zip(*(p["diversity"] for p in parts))]
    return out


class _DistClasses:
    """The released classes from counts: the interface of
    :class:`fairanon.models.verify._Classes` that the requirement checks read."""

    def __init__(self, qi, order, radix, counted: dict, target_counts: dict):
        self.qi = qi
        self.keys = counted["keys"]  # sorted: the single-machine numbering
        self.n = len(self.keys)
        self.sizes = counted["size"]
        self.first_row = counted["first"]
        self.order = order
        self.digits = {}
        rest = self.keys.copy()
        for c, r in reversed(list(zip(qi, radix))):
            self.digits[c] = rest % r
            rest //= r
        self.target_counts = target_counts
        self.witnesses: dict[int, list] = {}
        self._counts = {}

    def class_codes(self, name: str):
        return self.digits[name], np.asarray(self.order[name].index, dtype=object)

    def describe(self, g: int, **extra) -> dict:
        out = {"class": {c: str(self.order[c].index[self.digits[c][g]]) for c in self.qi},
               "size": int(self.sizes[g])}
        out.update(extra)
        out["records"] = self.witnesses.setdefault(int(g), [])
        return out

    def counts(self, instance, name: str):
        if name not in self._counts:
            labels = np.asarray(self.order[name].index, dtype=object)
            remap, values = value_order(instance.schema[name], labels)
            g, t, n = self.target_counts[name]
            flat = np.bincount(g * len(values) + remap[t], weights=n, minlength=self.n * len(values))
            self._counts[name] = (flat.astype(np.int64).reshape(self.n, len(values)), values)
        return self._counts[name]


def _witness_rows(frame: pd.DataFrame, qi, order, radix, wanted: np.ndarray) -> pd.DataFrame:
    key = np.zeros(len(frame), dtype=np.int64)
    for c, r in zip(qi, radix):
        codes, labels = factorize(frame[c])
        key = key * r + order[c].reindex(labels).to_numpy(dtype=np.int64)[codes]
    hit = np.isin(key, wanted)
    return pd.DataFrame({"key": key[hit], "pos": frame[_POS].to_numpy()[hit], "id": frame.index[hit]})


# ------------------------------------------------------------------ integrity
@dataclass(frozen=True)
class _Decoded:
    """What the integrity checks read of one released column's distinct labels (by
    their codes in the whole release), worked out once on the client.

    ``covers``: each label's original values (generalizable columns; a label that
    cannot be read stands as ``*``, and ``unreadable`` maps its code to the reason).
    ``same``: per label, the original code it equals (NaN or -1: none), for the count
    of generalized cells. ``unchanged``: per label, what it reads as for the unchanged
    values (:func:`~fairanon.models.verify.unchanged_lookup`).
    """

    labels: np.ndarray
    covers: object = None
    unreadable: dict = field(default_factory=dict)
    same: np.ndarray | None = None
    unchanged: np.ndarray | None = None


def _decode(schema, order: dict, truth: list, kept: list) -> dict:
    out = {}
    for name in dict.fromkeys(truth + kept):
        attr = schema[name]
        labels = np.asarray(order[name].index, dtype=object)
        covers, unreadable, same = None, {}, None
        if name in truth:
            covers, unreadable = readable_covers(attr, labels)
            # A generalized cell is one whose label is not the original value itself.
            if attr.kind == "numeric":
                point = (covers.lo == covers.hi) & ~covers.lo_open & ~covers.hi_open
                same = np.where(point, covers.lo, np.nan)
            else:
                index = {v: i for i, v in enumerate(attr.domain)}
                same = np.array([index.get(lab, -1) for lab in labels], dtype=np.int64)
        unchanged = unchanged_lookup(attr, labels) if name in kept else None
        out[name] = _Decoded(labels, covers, unreadable, same, unchanged)
    return out


def _release_codes(part: pd.DataFrame, order: dict, columns: list, start: int, pos_type) -> pd.DataFrame:
    """One partition of the release as the codes of its labels in the whole release
    (narrow integers) and each row's position: what the join ships instead of text."""
    out = pd.DataFrame(index=part.index)
    for c in columns:
        codes, labels = factorize(part[c])
        out[c] = narrow(order[c].reindex(labels).to_numpy(dtype=np.int64), len(order[c]))[codes]
    out[_POS] = np.arange(start, start + len(part), dtype=pos_type)
    return out


def _original_codes(part: pd.DataFrame, coder, columns: list) -> pd.DataFrame:
    """One partition of the original as the codes the checks compare with: domain
    indices (narrow integers), or the numbers (float64, as the single-machine checks
    read them). Coded by slices, so that the coded copy stays small beside the
    shuffle's buffers."""
    pieces = []
    for start in range(0, len(part), _SLICE):
        inst = coder.part(part.iloc[start:start + _SLICE])
        pieces.append({c: _original_column(coder.schema[c], inst.stored_codes(c)) for c in columns})
    out = pd.DataFrame(index=part.index)
    for c in columns:
        out[c + _SUFFIX] = (np.concatenate([p[c] for p in pieces]) if pieces
                            else _original_column(coder.schema[c], np.zeros(0, dtype=np.int64)))
    return out


def _original_column(attr, codes: np.ndarray) -> np.ndarray:
    return codes.astype(float) if attr.kind == "numeric" else narrow(codes, len(attr.domain))


def _original_of(attr, column: pd.Series) -> np.ndarray:
    return column.to_numpy(dtype=float if attr.kind == "numeric" else np.int64)


def _original_value(attr, code, integer: bool):
    """The original cell of a code, as the single-machine verifier shows it (a whole
    number of an integer column as an int)."""
    if attr.kind == "numeric":
        return int(code) if integer else float(code)
    value = attr.domain[int(code)]
    return value.item() if hasattr(value, "item") else value


def _integrity(frame: pd.DataFrame, schema, decoded: dict, truth: list, kept: list, integer: dict,
               paired: tuple = ()) -> dict:
    """Rows lost, duplicated and unknown, untruthful and changed cells of one partition
    of the release joined with the original by record id, with the offending row of
    each kind of the smallest record id (then position); the number of generalized cells; and per attribute of
    `paired` the records of each (label code, original value) pair."""
    side = frame["_merge"]
    right_only = (side == "right_only").to_numpy()
    rel = frame[~right_only].sort_values(_POS, kind="stable")
    lost = frame.index[right_only]
    unknown = frame.index[(side == "left_only").to_numpy()]
    dup_mask = rel.index.duplicated(keep="first")
    dups = pd.DataFrame({"pos": rel[_POS].to_numpy(dtype=np.int64)[dup_mask], "id": rel.index[dup_mask]})
    aligned = rel[(rel["_merge"] == "both").to_numpy() & ~dup_mask]
    out = {"n_release": len(rel), "lost": lost, "unknown": unknown, "dups": dups,
           "truth": {}, "unchanged": {}, "generalized": 0, "pairs": {}}
    if not len(aligned):
        return out
    for name in paired:
        out["pairs"][name] = _pair_counts(aligned[name].to_numpy(dtype=np.int64),
                                          _original_of(schema[name], aligned[name + _SUFFIX]))
    pos = aligned[_POS].to_numpy(dtype=np.int64)
    order = record_order(aligned.index)  # the rows by id, then position: sorted by position
    for name in truth:
        attr, dec = schema[name], decoded[name]
        # An outer join fills the codes of rows it lacks with NaN: these rows have both.
        codes = aligned[name].to_numpy(dtype=np.int64)
        original = _original_of(attr, aligned[name + _SUFFIX])
        ok = dec.covers.contains(codes, original)
        if dec.unreadable:  # a cell whose label cannot be read is untruthful, like any other
            ok &= ~np.isin(codes, np.fromiter(dec.unreadable, dtype=np.int64))
        entry = {"n": int(len(ok) - ok.sum())}
        if entry["n"]:
            i = int(rows_in_record_order(~ok, order)[0])
            entry["first"] = ((aligned.index[i], int(pos[i])), {"row": aligned.index[i], "attribute": name,
                                           "original": _original_value(attr, original[i], integer.get(name, False)),
                                           "released": dec.labels[codes[i]]})
            if int(codes[i]) in dec.unreadable:
                entry["first"][1]["detail"] = dec.unreadable[int(codes[i])]
        out["truth"][name] = entry
        out["generalized"] += int(len(codes) - np.count_nonzero(dec.same[codes] == original))
    for name in kept:
        attr, dec = schema[name], decoded[name]
        codes = aligned[name].to_numpy(dtype=np.int64)
        original = _original_of(attr, aligned[name + _SUFFIX])
        differ = dec.unchanged[codes] != original
        entry = {"n": int(differ.sum())}
        if entry["n"]:
            i = int(rows_in_record_order(differ, order)[0])
            entry["first"] = ((aligned.index[i], int(pos[i])), {"row": aligned.index[i], "attribute": name,
                                           "original": _text(_original_value(attr, original[i], integer.get(name, False))),
                                           "released": str(dec.labels[codes[i]])})
        out["unchanged"][name] = entry
    return out


def _merge_integrity(a: dict, b: dict) -> dict:
    out = {"n_release": a["n_release"] + b["n_release"], "lost": a["lost"].append(b["lost"]),
           "unknown": a["unknown"].append(b["unknown"]), "dups": pd.concat([a["dups"], b["dups"]]),
           "generalized": a["generalized"] + b["generalized"], "truth": {}, "unchanged": {},
           "pairs": _merge_pairs(a["pairs"], b["pairs"])}
    for part in ("truth", "unchanged"):
        for name in a[part].keys() | b[part].keys():
            x, y = a[part].get(name, {}), b[part].get(name, {})
            entry = {"n": x.get("n", 0) + y.get("n", 0)}
            firsts = [e["first"] for e in (x, y) if "first" in e]
            if firsts:
                entry["first"] = min(firsts, key=lambda f: f[0])
            out[part][name] = entry
    return out


def _pair_counts(labels: np.ndarray, values: np.ndarray) -> pd.Series:
    """The records of each (label code, original value) pair, indexed by the pairs:
    both sides hashed to dense codes, then the pairs as one integer key (three times
    faster than a group-by on the two columns)."""
    value_codes, distinct = pd.factorize(values)
    key_codes, keys = pd.factorize(labels * len(distinct) + value_codes)
    index = pd.MultiIndex.from_arrays([keys // len(distinct), distinct[keys % len(distinct)]], names=["label", "value"])
    return pd.Series(np.bincount(key_codes, minlength=len(keys)), index=index)


def _merge_pairs(a: dict, b: dict) -> dict:
    out = {}
    for name in a.keys() | b.keys():
        both = [s for s in (a.get(name), b.get(name)) if s is not None]
        out[name] = both[0] if len(both) == 1 else pd.concat(both).groupby(level=[0, 1], sort=False).sum()
    return out


# ------------------------------------------------------------------ verify
def _release_frame(release, instance: DaskInstance):
    from .release import DistributedRelease

    if isinstance(release, DistributedRelease):
        # The release is a graph (passes and a shuffle): computed once, kept on the workers.
        return _persist(release.table[release.columns]), release.method, str(release.status)
    dd = __import__("dask.dataframe", fromlist=["DataFrame"])
    if isinstance(release, str):
        return read_table(release, **release_ids(release, instance)), "external", "FEASIBLE"
    if isinstance(release, dd.DataFrame):
        return release, "external", "FEASIBLE"
    raise InvalidParameterError(
        f"The distributed verifier needs a DistributedRelease, a Dask DataFrame or a Parquet path; "
        f"got {type(release).__name__}."
    )


def verify_dask(instance: DaskInstance, release, requirements=(), *, metrics: bool = True,
                progress: bool = False, utility: bool = False, bins: int = 10, risk: bool = False) -> Report:
    """Re-check every guarantee of a distributed release: the report of
    :func:`fairanon.models.verify.verify` (same verdicts, achieved values, witnesses
    and metrics).

    Parameters
    ----------
    instance : DaskInstance
    release : DistributedRelease, dask.dataframe.DataFrame or str
        The released table indexed by record id (a Parquet path is read).
    requirements : sequence of Requirement
        KAnonymity, LDiversity, TCloseness, DiversityConstraint, AlphaProtection.
    metrics : bool
    progress : bool
        Show Dask's progress bar for each pass.
    utility : bool, default=False
        Also measure the distributions of the quasi-identifiers before and after, from
        the integrity join (see the module docstring). The report then has a
        ``utility`` attribute: :func:`fairanon.models.utility.release_utility`'s dict
        (``{"error": ...}`` when the release does not hold every record exactly once or
        holds a label that cannot be read).
    bins : int, default=10
        Bins of the numeric attributes' histograms, as in :func:`fairanon.utility`.
    risk : bool, default=False
        Also measure the risk figures (:mod:`fairanon.distributed.risk`); the report
        then has a ``risk_report`` attribute: :func:`fairanon.models.risk.release_risk`'s
        dict.
    """
    report, figures = _verify_dask(instance, release, requirements, metrics=metrics, progress=progress,
                                   utility=utility, bins=bins, measure=release_risk_dask if risk else None)
    if risk:
        object.__setattr__(report, "risk_report", figures)
    return report


def risk_dask(instance: DaskInstance, release=None, *, progress: bool = False, **options) -> RiskReport:
    """:func:`fairanon.risk` on Dask: the same :class:`~fairanon.models.risk.report.RiskReport`,
    measured from the distributed verifier's class counts (:mod:`.risk`).

    Parameters
    ----------
    instance : DaskInstance
    release : DistributedRelease, dask.dataframe.DataFrame, str or None
        The released table indexed by record id (a Parquet path is read); None measures
        the instance itself, its own values standing as labels.
    progress : bool
        Show Dask's progress bar for each pass.
    **options
        As for :func:`fairanon.models.risk.report.risk`, but a weight column
        (:func:`~fairanon.distributed.risk.check_dask_options` refuses it, with any bad
        option, before the passes). ``population`` may also be a Dask DataFrame or a
        Parquet path: its quasi-identifiers are counted on Dask
        (:func:`~fairanon.distributed.risk.count_population`).

    Notes
    -----
    The classes come from the verifier's passes: the labels, the integrity join (so a
    release that does not hold the instance's records is read as it is, as on one
    machine, and its checks are not reported) and the per-class counts; the figures are
    then those of one machine from the classes.
    """
    if not isinstance(instance, DaskInstance):
        raise InvalidParameterError(f"risk_dask needs a DaskInstance; got {type(instance).__name__}.")
    # Every option checked before the passes over the table.
    checked = check_dask_options(instance.schema, options)
    sensitive = checked["sensitive"]
    if checked["population"] is not None:  # a path read once
        options = {**options, "population": checked["population"]}
    table = release
    if release is None:  # the instance's own values as labels
        table = instance.data[[c for c in instance.schema.released if c in instance.data.columns]]
    return _verify_dask(instance, table, (), metrics=False, progress=progress, utility=False, bins=10,
                        measure=lambda classes, seconds: measure_risk(
                            classes, seconds, population_file=checked["population_file"], **options),
                        sensitive=sensitive, of_release=release is not None)[1]


def _verify_dask(instance, release, requirements, *, metrics: bool, progress: bool, utility: bool, bins: int,
                 measure=None, sensitive: tuple | None = None, of_release: bool = True) -> tuple[Report, object]:
    """:func:`verify_dask`'s report and ``measure(classes, seconds)`` of the risk classes
    (None without `measure`), the classes counting the records of each class per value
    of the `sensitive` attributes (default: the schema's default targets); `of_release`:
    whether the table is a release rather than the instance itself."""
    started = time.perf_counter()
    dask = _dask()
    import dask.dataframe as dd

    if not isinstance(instance, DaskInstance):
        raise InvalidParameterError(f"verify_dask needs a DaskInstance; got {type(instance).__name__}.")
    bins = check_int(bins, "bins", "verify_dask", low=1)
    requirements = validate_requirements(instance, requirements, caller="verify", sizes=False)
    for req in requirements:
        if not isinstance(req, (KAnonymity, LDiversity, TCloseness, DiversityConstraint, AlphaProtection,
                                *RISK_REQUIREMENTS)):
            raise IncompatibleRequirementError(
                f"The distributed verifier checks k-anonymity, l-diversity, t-closeness, diversity constraints, "
                f"alpha-protection and the risk requirements; {req} needs the single-machine verifier "
                "(engine='local')."
            )
    schema = instance.schema
    frame, method, status = _release_frame(release, instance)
    released = [str(c) for c in frame.columns]
    index_name = frame.index.name or "record_id"
    sizes = dask.compute(*[dask.delayed(_size)(p) for p in frame.to_delayed()])
    # The release's ids, checked in the same pass (a Dask DataFrame or a Parquet path is
    # read as it is given).
    frame = typed_ids(frame, check_ids(*reduce(merge_id_facts, (f for *_, f in sizes), (0, frozenset())),
                                       "the release"))
    sizes = [(n, b) for n, b, _ in sizes]
    lengths = [n for n, _ in sizes]
    offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)

    n_release = int(sum(lengths))
    pos_type = id_type(n_release)

    def positions(part, partition_info=None):
        out = part.copy()
        start = offsets[partition_info["number"]] if partition_info else 0
        out[_POS] = np.arange(start, start + len(part), dtype=pos_type)
        out.index.name = index_name
        return out

    timings = {}
    checks = []
    missing_qi = [c for c in schema.qi if c not in released]
    masked = frozenset(name for req in requirements if getattr(req, "masks_target", False)
                       for name in requirement_targets(schema, req))
    qi = [c for c in schema.qi if c in released]
    targets = sorted({name for req in requirements if isinstance(req, (LDiversity, TCloseness))
                      for name in requirement_targets(schema, req)}
                     | ({schema.decision} if any(isinstance(r, AlphaProtection) for r in requirements) else set())
                     # The risk report's δ-disclosure and β-likeness read these counts.
                     | ({t for t in (schema.default_targets() if sensitive is None else sensitive) if t in released}
                        if measure is not None else set()))
    truth = [c for c in schema.generalizable if c in released]
    kept = [c for c in schema.unchanged if c in released and c not in masked]

    # Labels: every column the checks read, numbered in order of first appearance in
    # the whole release (the classes are then numbered as on one machine).
    clock = time.perf_counter()
    coded = list(dict.fromkeys(qi + [t for t in targets if t in released] + truth + kept))
    parts = [dask.delayed(_labels)(p, coded, int(offsets[i])) for i, p in enumerate(frame[coded].to_delayed())]
    label_table = _compute(tree(parts, _merge_labels), progress) if coded else {}
    order = {c: _label_codes(t) for c, t in label_table.items()}
    # One copy of the label tables in the graph, however many tasks read them.
    shared_order = dask.delayed(order)
    timings["labels"] = time.perf_counter() - clock

    # Integrity: the release joined with the original by record id. Both sides travel
    # as narrow integer codes: the release's labels by their numbers in the whole
    # release, the original's values as the checks compare them.
    clock = time.perf_counter()
    paired = tuple(c for c in schema.qi if c in released) if utility else ()
    joined_columns = list(dict.fromkeys(truth + kept + list(paired)))

    def release_codes(part, order, partition_info=None):
        start = offsets[partition_info["number"]] if partition_info else 0
        return _release_codes(part, order, joined_columns, start, pos_type).rename_axis(index_name)

    def original_codes(part, coder):
        # Both sides of the join under one index name, whatever each table calls its ids.
        return _original_codes(part, coder, joined_columns).rename_axis(index_name)

    release_meta = pd.DataFrame({c: np.zeros(0, dtype=narrow(np.zeros(0, np.int64), len(order[c])).dtype)
                                 for c in joined_columns}, index=frame._meta.index[:0])
    release_meta[_POS] = np.zeros(0, dtype=pos_type)
    release_meta.index.name = index_name
    release_side = frame[joined_columns].map_partitions(release_codes, shared_order, meta=release_meta)
    coder = instance.coder
    original_meta = pd.DataFrame({c + _SUFFIX: _original_column(schema[c], np.zeros(0, dtype=np.int64))
                                  for c in joined_columns}, index=instance.data._meta.index[:0].rename(index_name))
    original_side = instance.data.map_partitions(original_codes, coder, meta=original_meta)
    integer = {c: pd.api.types.is_integer_dtype(instance.data._meta[c].dtype) for c in joined_columns
               if schema[c].kind == "numeric"}
    # Partitions of the join small enough for a worker: about a quarter million records.
    parts = max(frame.npartitions, instance.data.npartitions, -(-n_release // 250_000))
    merged = dd.merge(release_side, original_side, left_index=True, right_index=True, how="outer",
                      indicator=True, npartitions=parts)
    decoded = dask.delayed(_decode(schema, order, truth, kept))
    parts = [dask.delayed(_integrity)(p, schema, decoded, truth, kept, integer, paired)
             for p in merged.to_delayed()]
    integrity = _compute(tree(parts, _merge_integrity), progress)
    timings["integrity"] = time.perf_counter() - clock
    checks.append(_rows_result(integrity))
    checks.append(_check_columns(instance, SimpleNamespace(table=SimpleNamespace(columns=released))))
    checks.append(_truth_result(schema, integrity))
    checks.append(_unchanged_result(schema, integrity, masked))
    if missing_qi:
        raise SchemaError(f"The release lacks quasi-identifier column(s) {missing_qi}; nothing can be verified.")

    # Classes: per-class counts.
    clock = time.perf_counter()
    meta = frame._meta.copy()
    meta[_POS] = np.zeros(0, dtype=pos_type)
    meta.index.name = index_name
    source, frame = frame, frame.map_partitions(positions, meta=meta)
    radix = [max(len(order[c]), 1) for c in qi]
    if float(np.prod([float(r) for r in radix])) >= 2.0**62:
        raise InvalidParameterError("Too many distinct released labels to number the classes in 64 bits.")
    diversity = [r for r in requirements if isinstance(r, DiversityConstraint)]
    parts = [dask.delayed(_class_counts)(p, qi, shared_order, radix, targets, diversity, schema)
             for p in frame.to_delayed()]
    # The per-class table is the client's: merged there, not on a worker.
    counted = _merge_classes(_compute(parts, progress), targets)
    cls = _DistClasses(qi, order, radix, counted, {c: counted[("t", c)] for c in targets})
    timings["classes"] = time.perf_counter() - clock

    clock = time.perf_counter()
    diversity_counts = dict(zip(map(id, diversity), counted["diversity"]))
    for req in requirements:
        if isinstance(req, KAnonymity):
            checks.append(_check_k(req, cls))
        elif isinstance(req, LDiversity):
            checks.extend(_check_l(req, cls, instance))
        elif isinstance(req, TCloseness):
            checks.extend(_check_t(req, cls, instance))
        elif isinstance(req, DiversityConstraint):
            checks.append(diversity_result(req, diversity_counts[id(req)]))
        elif isinstance(req, AlphaProtection):
            checks.append(_check_alpha(req, cls, instance))
        elif isinstance(req, RISK_REQUIREMENTS):
            checks.append(_check_risk(req, cls))
    if cls.witnesses:
        wanted = cls.keys[np.array(sorted(cls.witnesses), dtype=np.int64)]
        parts = [dask.delayed(_witness_rows)(p, qi, shared_order, radix, wanted) for p in frame.to_delayed()]
        rows = pd.concat(_compute(parts, progress)).sort_values(["id", "pos"], kind="stable")
        for g, records in cls.witnesses.items():
            ids = rows.loc[rows["key"] == cls.keys[g], "id"].head(_MAX_WITNESS_ROWS)
            records.extend(r.item() if hasattr(r, "item") else r for r in ids)
    timings["checks"] = time.perf_counter() - clock

    summary = {}
    if metrics and checks[0].passed and checks[2].passed:
        k = next((r.k for r in requirements if isinstance(r, KAnonymity)), None)
        summary = _summary(instance, cls, integrity["generalized"], k)
    report = Report(instance=instance.name, method=method, status=status, n_rows=int(sum(lengths)),
                    n_classes=cls.n, checks=tuple(checks), metrics=summary,
                    elapsed_s=time.perf_counter() - started, risk=size_summary(np.asarray(cls.sizes)))
    figures = None
    if measure is not None:
        clock = time.perf_counter()

        def fetch(mask: np.ndarray, limit: int | None) -> list:
            wanted = cls.keys[mask]
            # The quasi-identifiers only: a Parquet release is read once more, these columns.
            keyed = source[qi].map_partitions(positions, meta=meta[qi + [_POS]])
            parts = [dask.delayed(_witness_rows)(p, qi, shared_order, radix, wanted) for p in keyed.to_delayed()]
            ids = pd.concat(_compute(parts, progress)).sort_values(["id", "pos"], kind="stable")["id"]
            return [r.item() if hasattr(r, "item") else r for r in (ids if limit is None else ids.head(limit))]

        labels = {c: np.array([str(v) for v in order[c].index], dtype=object) for c in qi + targets if c in order}
        risk_classes = DaskRiskClasses(instance, qi, labels, cls.digits, cls.sizes,
                                       {c: counted[("t", c)] for c in targets}, fetch, released=of_release)
        figures = measure(risk_classes, {"classes": timings["classes"]})
        timings["risk"] = time.perf_counter() - clock
    if utility:
        clock = time.perf_counter()
        object.__setattr__(report, "utility", _utility(instance, order, integrity, checks[0], paired, bins,
                                                       method, status))
        timings["utility"] = time.perf_counter() - clock
    object.__setattr__(report, "phase_seconds", timings)
    # What the integrity join moves: each side's record as Dask's types hold it (index
    # included), before Arrow's encoding on the wire.
    id_bytes = _id_bytes(frame._meta.index.dtype, sum(b for _, b in sizes), n_release)
    object.__setattr__(report, "join_bytes", n_release * (_row_bytes(release_meta) + id_bytes)
                       + int(instance.n_rows) * (_row_bytes(original_meta) + id_bytes))
    return report, figures


def _size(part: pd.DataFrame) -> tuple[int, int, tuple]:
    """One partition's rows, the bytes its record ids take and what the id check reads
    of them (:func:`~fairanon.distributed.instance.id_facts`)."""
    return len(part), int(part.index.memory_usage(deep=True)), id_facts(part.index)


def _row_bytes(meta: pd.DataFrame) -> int:
    """The bytes of one row of a table of codes (numpy columns), without its index."""
    return int(sum(np.dtype(t).itemsize for t in meta.dtypes))


def _id_bytes(dtype, measured: int, n_rows: int) -> int:
    """The bytes of one record id: a numpy type's size, else (text, Arrow or object ids,
    whose size is their content) the release's ids' measured bytes per row, rounded up.
    Both sides of the join hold the same ids."""
    if isinstance(dtype, np.dtype):
        return dtype.itemsize
    return -(-measured // max(n_rows, 1))


def _label_codes(table: pd.DataFrame) -> pd.Series:
    """Label -> code, in order of first appearance in record-id order."""
    ordered = table.sort_values(["first_id", "first"], kind="stable")
    return pd.Series(np.arange(len(ordered), dtype=np.int64), index=ordered.index)


def _rows_result(integrity: dict) -> CheckResult:
    lost = sorted(integrity["lost"].tolist())
    unknown = sorted(integrity["unknown"].tolist())
    dups = integrity["dups"].sort_values(["id", "pos"], kind="stable")["id"].drop_duplicates().tolist()
    ok = not lost and not unknown and not dups
    witness = None
    if not ok:
        witness = {"lost": lost[:_MAX_WITNESS_ROWS], "duplicated": dups[:_MAX_WITNESS_ROWS],
                   "unknown": unknown[:_MAX_WITNESS_ROWS], "suppressed_not_released": []}
    detail = f"{len(lost)} lost, {len(dups)} duplicated, {len(unknown)} unknown"
    return CheckResult("rows", ok, achieved=integrity["n_release"], witness=witness, detail=detail, integrity=True)


def _truth_result(schema, integrity: dict) -> CheckResult:
    n_bad, bad = 0, None
    for name in schema.generalizable:
        entry = integrity["truth"].get(name)
        if entry is None:
            continue
        n_bad += entry["n"]
        if "first" in entry:
            bad = bad or entry["first"][1]
    return CheckResult(
        "truthfulness", n_bad == 0, achieved=n_bad, witness=bad,
        detail="every released cell generalizes its original" if n_bad == 0 else f"{n_bad} untruthful cell(s)",
        integrity=True,
    )


def _unchanged_result(schema, integrity: dict, masked) -> CheckResult:
    n_bad, bad = 0, None
    for name in schema.unchanged:
        entry = integrity["unchanged"].get(name)
        if entry is None:
            continue
        n_bad += entry["n"]
        if "first" in entry:
            bad = bad or entry["first"][1]
    return CheckResult(
        "unchanged values", n_bad == 0, achieved=n_bad, witness=bad,
        detail="protected, sensitive and decision values as in the original" if n_bad == 0 else f"{n_bad} changed cell(s)",
        integrity=True,
    )


# ------------------------------------------------------------------ metrics
class _ActiveDomain:
    """What the metrics read of the original: its schema, size and the values present."""

    def __init__(self, instance: DaskInstance):
        self.schema = instance.schema
        self.n_rows = instance.n_rows
        self.name = instance.name
        self._instance = instance

    def codes(self, name: str) -> np.ndarray:
        return self._instance.value_counts(name)[0]


def _utility(instance: DaskInstance, order: dict, integrity: dict, rows: CheckResult, names: tuple, bins: int,
             method: str, status: str) -> dict | None:
    """:func:`fairanon.models.utility.release_utility`'s dict from the counts of
    (label, original value) pairs: each pair is one row of a column, weighted by its
    records. None for a release without rows, as on one machine."""
    if not integrity["n_release"]:
        return None
    if not rows.passed:
        return {"error": f"The release does not hold the records of instance {instance.name!r} exactly once "
                         f"({integrity['n_release']} released rows for {instance.n_rows} records); utility "
                         "aligns them by record id."}
    started = time.perf_counter()
    domain = _ActiveDomain(instance)
    attributes = []
    try:
        for name in names:
            counts = integrity["pairs"][name]
            codes = counts.index.get_level_values(0).to_numpy(dtype=np.int64)
            labels = [str(label) for label in order[name].index]
            col = _Column(domain, name, pd.Series(pd.Categorical.from_codes(codes, categories=labels)), None)
            weights = counts.to_numpy(dtype=np.int64)
            values = counts.index.get_level_values(1).to_numpy()
            col.__dict__["orig"] = values if col.numeric else values.astype(np.int64)
            col.__dict__["label_rows"] = np.bincount(col.codes, weights=weights,
                                                     minlength=col.n_labels).astype(np.int64)
            attributes.append(column_distribution(col, bins, weights))
    except FairanonError as exc:
        return {"error": str(exc)}
    return UtilityReport(instance=instance.name, method=method, status=status, n_rows=int(instance.n_rows),
                         attributes=tuple(attributes), distributions_s=time.perf_counter() - started).to_dict()


def _summary(instance: DaskInstance, cls: _DistClasses, generalized: int, k) -> dict:
    """:func:`fairanon.models.metrics.summary` from the classes: every label is constant
    within a class, so each class stands for its records (weights: the class sizes)."""
    domain = _ActiveDomain(instance)
    qi = {}
    for name in instance.schema.qi:
        codes, labels = cls.class_codes(name)
        col = _Column(domain, name, pd.Series(pd.Categorical.from_codes(codes, categories=list(labels))), None)
        col.__dict__["label_rows"] = np.bincount(col.codes, weights=cls.sizes, minlength=col.n_labels).astype(np.int64)
        qi[name] = col
    p = _Prepared(domain, None, None, qi)
    p.__dict__["classes"] = (np.arange(cls.n, dtype=np.int64), cls.n)
    p.__dict__["class_sizes"] = cls.sizes
    p.__dict__["class_first_row"] = np.arange(cls.n, dtype=np.int64)
    names = [a for a in instance.schema.generalizable if a in qi]
    star = np.ones(cls.n, dtype=bool) if names else np.zeros(cls.n, dtype=bool)
    for name in names:
        star &= qi[name].tells_nothing[qi[name].codes]
    p.__dict__["suppressed_rows"] = star
    lm = L._loss_metric(p)
    return {
        "n_rows": p.n,
        "n_classes": p.n_classes,
        "min_class_size": int(p.class_sizes.min()),
        "avg_class_size": p.n / p.n_classes,
        "suppressed_cells": L._suppressed_cells(p),
        "generalized_cells": generalized,
        "discernibility": L._discernibility(p, k),
        "C_avg": float(L._average_class_size(p, k)),
        "LM_sum": lm["LM_sum"],
        "LM_avg": lm["LM_avg"],
        "GCP": L._ncp(p)["GCP"],
    }
