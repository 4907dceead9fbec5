"""Comparing the releases of one instance by every quality index (docs/papers.md, Dewri et al.).

:func:`compare_releases` takes the per-tuple property vectors of several releases of
the same data (:func:`fairanon.models.metrics.property_vectors`, aligned by record id)
and computes

- the **unary table**: per release and property, min / mean / max / sum of the values
  as measured, P_rank of the oriented vector with its D_max, and the bias descriptors;
- the **pairwise table**: per property and ordered pair, the dominance outcome, the
  record counts W12 / W21 / ties, P_binary, P_cov, P_spr, log P_hv and the verdict of
  every comparator;
- the **Pareto sets** per property and for the joint (set-level) dominance;
- a **Copeland tournament** per property and comparator, with its cycles;
- the **multi-property** verdicts (WTD, LEX, GOAL) and unary-GOAL scores the
  configuration asks for.

A property may be undefined (NaN) on some records: records no diversity constraint
targets, or suppressed records under the policy ``exclude`` (docs/papers.md, DW-8).
Each property is compared on the records where it is defined in every release, and
the report says how many those are. Group-level properties (diversity constraints)
are compared per group with ``unit="group"`` (docs/papers.md, DW-10).

:func:`compare_results` does this for every instance (or every instance and
requirement set, ``by="requirements"``) of a benchmark output directory and writes
``comparison/<instance>/{unary,pairwise,multi,ranking}.csv``, ``properties.parquet``
(the long form: run, record_id, property, value),
``group_properties.parquet`` (run, group, property, value) and ``report.json``
(orientation transforms, D_max, tolerances, normalizations, suppression policies).
:func:`compare_runs` groups and compares releases held in memory the same way (the
app's Compare page), measuring their vectors as a benchmark run does.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np
import pandas as pd

from ..exceptions import InvalidParameterError
from ..instances.files import safe_file_name
from ..models.metrics import UNITS
from . import quality as Q
from .ranking import pareto_set, tournament

__all__ = [
    "GROUPINGS",
    "CompareConfig",
    "Comparison",
    "RunRelease",
    "compare_releases",
    "compare_results",
    "compare_runs",
]

#: Which releases :func:`compare_results` compares together.
GROUPINGS = ("instance", "requirements")


_PAIR_COLUMNS = [
    "property",
    "first",
    "second",
    "dominance",
    "W12",
    "W21",
    "ties",
    "P_binary",
    "P_cov",
    "P_spr",
    "log_P_hv",
]
_MULTI_COLUMNS = ["procedure", "first", "second", "value_first", "value_second", "verdict"]


@dataclass(frozen=True)
class CompareConfig:
    """What :func:`compare_releases` computes.

    Attributes
    ----------
    properties : tuple of str
        Columns of the property vectors to compare (those present are used).
    comparators : tuple of str
        Subset of :data:`~fairanon.bench.quality.COMPARATORS`.
    rank_norm : float, default=2
    rank_eps : float, default=0
        Tolerance of ▶rank.
    hv_reference : float, default=0
        Reference point of P_hv (the oriented vectors are ≥ 0).
    multi : tuple of dict
        Multi-property procedures: ``{"procedure": "wtd" | "lex" | "goal" |
        "goal_unary", "properties": [...], "index": ..., "weights" | "eps" | "goals":
        ..., "normalization": ..., "one_sided": ..., "name": ...}``.
    unit : {"tuple", "group"}, default="tuple"
        How group-level properties (``div_share``) are compared: over the records,
        each group broadcast to the records it targets (groups weigh by their size),
        or over the groups (N = the number of groups); docs/papers.md, DW-10.
    by : {"instance", "requirements"}, default="instance"
        Which releases are compared together: all those of an instance, or those of
        an instance under one requirement set (the methods for the same task).
    """

    properties: tuple = tuple(Q.PROPERTIES)
    comparators: tuple = Q.COMPARATORS
    rank_norm: float = 2
    rank_eps: float = 0
    hv_reference: float = 0
    multi: tuple = ()
    unit: str = "tuple"
    by: str = "instance"

    def __post_init__(self):
        if self.unit not in UNITS:
            raise InvalidParameterError(
                f"The 'unit' of a comparison must be one of {list(UNITS)}. Got {self.unit!r} instead."
            )
        if self.by not in GROUPINGS:
            raise InvalidParameterError(
                f"The 'by' of a comparison must be one of {list(GROUPINGS)}. Got {self.by!r} instead."
            )

    @classmethod
    def from_dict(cls, section: Mapping | None) -> CompareConfig:
        section = dict(section or {})
        out = {}
        for key in ("properties", "comparators", "multi"):
            if section.get(key) is not None:
                out[key] = tuple(section[key])
        for key in ("rank_norm", "rank_eps", "hv_reference", "unit", "by"):
            if section.get(key) is not None:
                out[key] = section[key]
        return cls(**out)

    def to_dict(self) -> dict:
        return {
            "properties": list(self.properties),
            "comparators": list(self.comparators),
            "rank_norm": self.rank_norm,
            "rank_eps": self.rank_eps,
            "hv_reference": self.hv_reference,
            "multi": [dict(m) for m in self.multi],
            "unit": self.unit,
            "by": self.by,
        }


@dataclass
class Comparison:
    """Everything :func:`compare_releases` found for one instance.

    Attributes
    ----------
    instance : str
    releases : list of str
    unary, pairwise, multi : pandas.DataFrame
    rankings : dict (property, comparator) -> Ranking
    pareto : dict property (or "joint") -> list of release names
    multi_rankings : dict procedure name -> Ranking
    goal_scores : dict procedure name -> dict release -> E(Υ)
    metadata : dict
        Orientation, D_max, reference point, tolerances, normalizations, the records
        (or groups) each property was compared on, suppression policies.
    vectors, group_vectors : dict release -> DataFrame
        The per-record and per-group property vectors compared.
    """

    instance: str
    releases: list
    unary: pd.DataFrame
    pairwise: pd.DataFrame
    rankings: dict
    pareto: dict
    multi: pd.DataFrame = field(default_factory=pd.DataFrame)
    multi_rankings: dict = field(default_factory=dict)
    goal_scores: dict = field(default_factory=dict)
    metadata: dict = field(default_factory=dict)
    vectors: dict = field(default_factory=dict)
    group_vectors: dict = field(default_factory=dict)

    def long_form(self, unit: str = "tuple") -> pd.DataFrame:
        """The property vectors in long form (long form): one row per run,
        record (or group) and property, with its value as a float; undefined values are
        left out."""
        frames = self.vectors if unit == "tuple" else self.group_vectors
        key = "record_id" if unit == "tuple" else "group"
        parts = []
        for run, frame in frames.items():
            props = [c for c in frame.columns if c in Q.PROPERTIES]
            if not props:
                continue
            wide = pd.DataFrame({p: _as_floats(frame[p]) for p in props}, index=frame.index)
            long = (
                wide.rename_axis(key)
                .reset_index()
                .melt(id_vars=key, var_name="property", value_name="value")
            )
            long.insert(0, "run", run)
            parts.append(long.dropna(subset=["value"]))
        if not parts:
            return pd.DataFrame(columns=["run", key, "property", "value"])
        return pd.concat(parts, ignore_index=True)

    def ranking_table(self) -> pd.DataFrame:
        """Copeland scores: one row per release, one column per ``property:comparator``
        (and per multi-property procedure), plus Pareto membership per property."""
        cols = {}
        for (prop, comp), ranking in self.rankings.items():
            cols[f"{prop}:{comp}"] = [ranking.scores[r] for r in self.releases]
        for name, ranking in self.multi_rankings.items():
            cols[name] = [ranking.scores[r] for r in self.releases]
        for name, scores in self.goal_scores.items():
            cols[name] = [_plain(scores[r]) for r in self.releases]
        for prop, members in self.pareto.items():
            cols[f"pareto:{prop}"] = [r in members for r in self.releases]
        return pd.DataFrame(cols, index=pd.Index(self.releases, name="release"))

    def cycles(self) -> list[tuple[str, str]]:
        """(comparator, cycle text) for every ranking that found a cycle."""
        out = []
        for (prop, comp), ranking in self.rankings.items():
            out += [(f"{prop}:{comp}", text) for text in ranking.describe_cycles()]
        for name, ranking in self.multi_rankings.items():
            out += [(name, text) for text in ranking.describe_cycles()]
        return out

    def write(self, directory: str) -> None:
        """Write unary.csv, pairwise.csv, multi.csv, ranking.csv, properties.parquet,
        group_properties.parquet (when there are group vectors) and report.json."""
        os.makedirs(directory, exist_ok=True)
        if self.vectors:
            self.long_form("tuple").to_parquet(
                os.path.join(directory, "properties.parquet"), engine="pyarrow", index=False
            )
        if self.group_vectors:
            self.long_form("group").to_parquet(
                os.path.join(directory, "group_properties.parquet"), engine="pyarrow", index=False
            )
        _floats(self.unary).to_csv(os.path.join(directory, "unary.csv"), index=False)
        _floats(self.pairwise).to_csv(os.path.join(directory, "pairwise.csv"), index=False)
        _floats(self.multi).to_csv(os.path.join(directory, "multi.csv"), index=False)
        self.ranking_table().to_csv(os.path.join(directory, "ranking.csv"))
        report = dict(self.metadata)
        report["instance"] = self.instance
        report["releases"] = self.releases
        report["pareto"] = self.pareto
        report["rankings"] = {
            f"{p}:{c}": {
                "order": list(r.order),
                "scores": r.scores,
                "cycles": r.describe_cycles(),
                "transitive": r.transitive,
            }
            for (p, c), r in self.rankings.items()
        }
        report["multi_rankings"] = {
            n: {
                "order": list(r.order),
                "scores": r.scores,
                "cycles": r.describe_cycles(),
                "transitive": r.transitive,
            }
            for n, r in self.multi_rankings.items()
        }
        report["goal_scores"] = {
            n: {r: _plain(v) for r, v in s.items()} for n, s in self.goal_scores.items()
        }
        with open(os.path.join(directory, "report.json"), "w", encoding="utf-8") as fh:
            json.dump(report, fh, indent=2, default=_plain)


def _as_floats(series: pd.Series) -> np.ndarray:
    """A property column as floats (Fractions converted, None as NaN)."""
    if series.dtype != object:
        return series.to_numpy(dtype=float)
    return np.array([np.nan if v is None else float(v) for v in series], dtype=float)


def _plain(value):
    if isinstance(value, Fraction):
        return float(value)
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.floating,)):
        return float(value)
    if isinstance(value, (Q.Dominance, Q.Verdict)):
        return str(value)
    return value


def _floats(frame: pd.DataFrame) -> pd.DataFrame:
    out = frame.copy()
    for col in out.columns:
        if out[col].dtype == object:
            out[col] = [_plain(v) if not isinstance(v, str) else v for v in out[col]]
    return out


def _oriented(prop: str, values: np.ndarray, ctx: Q.PropertyContext):
    spec = Q.PROPERTIES[prop]
    upper = spec.bound(ctx, "upper")
    if spec.direction == "lower" and spec.transform == "flip" and upper is None:
        raise InvalidParameterError(f"Property {prop!r} needs {spec.upper!r} to be oriented.")
    return Q.orient(values, spec.direction, spec.transform, upper)


def compare_releases(
    vectors: Mapping[str, pd.DataFrame],
    context: Q.PropertyContext,
    config: CompareConfig | None = None,
    *,
    instance: str = "",
    groups: Mapping[str, pd.DataFrame] | None = None,
) -> Comparison:
    """Compare releases of one instance by their per-tuple property vectors.

    Parameters
    ----------
    vectors : mapping release name -> DataFrame
        Each indexed by record id with one column per property (as
        :func:`~fairanon.models.metrics.property_vectors` and
        :func:`~fairanon.models.metrics.fairness_vectors` return); all must hold the
        same records. Exact (Fraction) columns are compared exactly. NaN (or None)
        marks a value undefined on a record; each property is compared on the records
        where it is defined in every release.
    context : PropertyContext
        N, the number of quasi-identifiers and of distinct sensitive values (the flip
        bounds and ideal vectors of :data:`~fairanon.bench.quality.PROPERTIES`).
    config : CompareConfig, optional
    instance : str
        For reports.
    groups : mapping release name -> DataFrame, optional
        Group-level vectors (indexed by group, e.g. ``fairness_vectors(...,
        unit="group")``), compared instead of their per-record broadcast when
        ``config.unit == "group"``.

    Returns
    -------
    Comparison

    Raises
    ------
    InvalidParameterError
        If the releases do not hold the same records, or a property is unknown.

    Examples
    --------
    >>> import pandas as pd
    >>> vec = {n: pd.DataFrame({"size": s}) for n, s in
    ...        [("T3a", [3, 3, 3, 3, 4, 4, 4, 3, 3, 4]), ("T3b", [3, 7, 7, 3, 7, 7, 7, 3, 7, 7])]}
    >>> c = compare_releases(vec, Q.PropertyContext(n_rows=10, n_qi=3))
    >>> c.pareto["size"], c.rankings["size", "cov"].order
    (['T3b'], ('T3b', 'T3a'))
    """
    config = config or CompareConfig()
    names = list(vectors)
    if not names:
        raise InvalidParameterError("compare_releases needs at least one release.")
    frames = _aligned(vectors, names, "records")
    group_frames = {}
    if groups and all(n in groups for n in names):
        union = pd.Index([])
        for n in names:
            union = union.union(groups[n].index, sort=False)
        group_frames = {n: groups[n].reindex(union) for n in names}
    unknown = [p for p in config.properties if p not in Q.PROPERTIES]
    if unknown:
        raise InvalidParameterError(f"Unknown properties {unknown}; known: {sorted(Q.PROPERTIES)}.")
    raw, defined = {}, {}
    for p in config.properties:
        by_group = (
            config.unit == "group"
            and Q.PROPERTIES[p].group
            and bool(group_frames)
            and all(p in f.columns for f in group_frames.values())
        )
        source = group_frames if by_group else frames
        if not all(p in f.columns for f in source.values()):
            continue
        series = {n: source[n][p] for n in names}
        mask = np.logical_and.reduce([s.notna().to_numpy() for s in series.values()])
        if not mask.any():
            continue
        raw[p] = {n: _column(series[n][mask]) for n in names}
        defined[p] = {
            "unit": "group" if by_group else "tuple",
            "compared": int(mask.sum()),
            "total": len(mask),
        }
    props = list(raw)
    oriented = {p: {n: _oriented(p, raw[p][n], context) for n in names} for p in props}
    ideal = {p: Q.PROPERTIES[p].bound(context, "ideal") for p in props}
    ref = config.hv_reference
    # P_hv cannot separate vectors with an entry at the reference point (docs/papers.md, DW-5); the
    # report says which properties that concerns instead of warning once per pair.
    degenerate = [p for p in props if any(Q.p_min(oriented[p][n]) <= ref for n in names)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        comparison = _compare(
            names, props, raw, oriented, ideal, degenerate, context, config, instance
        )
    comparison.metadata["defined"] = defined
    comparison.vectors = frames
    comparison.group_vectors = group_frames
    return comparison


def _aligned(vectors: Mapping[str, pd.DataFrame], names: list, what: str) -> dict:
    index = vectors[names[0]].index
    frames = {}
    for name in names:
        frame = vectors[name]
        if len(frame) != len(index) or not frame.index.sort_values().equals(index.sort_values()):
            raise InvalidParameterError(
                f"compare_releases compares releases of the same {what}; {name!r} holds other "
                f"{what} than {names[0]!r}."
            )
        # Vectors are aligned by record id, never by row order (Dewri et al. compare
        # anonymizations of the same data).
        frames[name] = frame.reindex(index)
    return frames


def _compare(
    names, props, raw, oriented, ideal, degenerate, context, config, instance
) -> Comparison:
    ref = config.hv_reference

    unary_rows = []
    for p in props:
        for n in names:
            values = raw[p][n]
            row = {
                "property": p,
                "release": n,
                "min": Q.p_min(values),
                "mean": Q.p_mean(values),
                "max": Q.p_max(values),
                "sum": Q.p_sum(values),
                "p_rank": Q.p_rank(oriented[p][n], ideal[p], p=config.rank_norm)
                if ideal[p] is not None
                else math.nan,
                "d_max": ideal[p],
            }
            row.update(Q.descriptors(values))
            unary_rows.append(row)
    unary = pd.DataFrame(unary_rows)

    verdicts: dict = {}
    pair_rows = []
    for p in props:
        for a, b in itertools.combinations(names, 2):
            da, db = oriented[p][a], oriented[p][b]
            w_ab, w_ba, ties = Q.tuple_counts(da, db)
            dom = Q.dominance(da, db)
            spr_ab, spr_ba = Q.p_spr(da, db), Q.p_spr(db, da)
            hv_ab, hv_ba = Q.log_p_hv(da, db, reference=ref), Q.log_p_hv(db, da, reference=ref)
            n = w_ab + w_ba + ties
            per = {}
            for comp in config.comparators:
                if comp == "rank" and ideal[p] is None:
                    continue
                per[comp] = Q.compare(
                    da,
                    db,
                    comp,
                    d_max=ideal[p],
                    p=config.rank_norm,
                    eps=config.rank_eps if comp == "rank" else 0,
                    reference=ref,
                )
                verdicts[p, comp, a, b] = per[comp]
            for first, second, w12, w21, spr12, spr21, hv12, flip in (
                (a, b, w_ab, w_ba, spr_ab, spr_ba, hv_ab, False),
                (b, a, w_ba, w_ab, spr_ba, spr_ab, hv_ba, True),
            ):
                row = {
                    "property": p,
                    "first": first,
                    "second": second,
                    "dominance": str(_swap(dom) if flip else dom),
                    "W12": w12,
                    "W21": w21,
                    "ties": ties,
                    "P_binary": w12,
                    "P_cov": Fraction(n - w21, n),
                    "P_spr": spr12,
                    "log_P_hv": hv12,
                }
                for comp, v in per.items():
                    row[f"verdict_{comp}"] = str(v.swapped() if flip else v)
                pair_rows.append(row)
    pairwise = pd.DataFrame(pair_rows, columns=_PAIR_COLUMNS if not pair_rows else None)

    rankings = {}
    for p in props:
        for comp in config.comparators:
            if comp == "rank" and ideal[p] is None:
                continue
            rankings[p, comp] = tournament(
                names,
                lambda x, y, p=p, comp=comp: _lookup(verdicts, p, comp, x, y),
                comparator=f"{p}:{comp}",
            )
    pareto = {p: pareto_set(oriented[p]) for p in props}
    if len(props) > 1:
        pareto["joint"] = pareto_set({n: {p: oriented[p][n] for p in props} for n in names})

    multi_rows, multi_rankings, goal_scores = [], {}, {}
    for m in config.multi:
        missing = [p for p in m["properties"] if p not in props]
        if missing:
            continue
        sets = {n: {p: oriented[p][n] for p in m["properties"]} for n in names}
        d_max = {p: ideal[p] for p in m["properties"]}
        if m["procedure"] == "goal_unary":
            goal_scores[m["name"]] = {
                n: Q.goal_unary(
                    sets[n],
                    goals=m["goals"],
                    index=m.get("index", "mean"),
                    d_max=d_max,
                    one_sided=m.get("one_sided", False),
                )
                for n in names
            }
            continue
        results = {}
        for a, b in itertools.combinations(names, 2):
            res = _multi(m, sets[a], sets[b], d_max)
            results[a, b] = res.verdict
            for first, second, v1, v2, verdict in (
                (a, b, res.first, res.second, res.verdict),
                (b, a, res.second, res.first, res.verdict.swapped()),
            ):
                multi_rows.append(
                    {
                        "procedure": m["name"],
                        "first": first,
                        "second": second,
                        "value_first": v1,
                        "value_second": v2,
                        "verdict": str(verdict),
                    }
                )
        multi_rankings[m["name"]] = tournament(
            names,
            lambda x, y, r=results: r[x, y] if (x, y) in r else r[y, x].swapped(),
            comparator=m["name"],
        )

    metadata = {
        "context": {
            "n_rows": context.n_rows,
            "n_qi": context.n_qi,
            "n_sensitive": context.n_sensitive,
        },
        "orientation": {
            p: {
                "direction": Q.PROPERTIES[p].direction,
                "transform": "none"
                if Q.PROPERTIES[p].direction == "higher"
                else Q.PROPERTIES[p].transform,
                "upper": Q.PROPERTIES[p].bound(context, "upper")
                if Q.PROPERTIES[p].direction == "lower"
                else None,
                "d_max": ideal[p],
                "label": Q.PROPERTIES[p].label,
            }
            for p in props
        },
        "tolerance": Q.TOLERANCE,
        "hv_degenerate": degenerate,
        "config": config.to_dict(),
        "notes": [
            "spr decides as the mean does and hv as the product (geometric mean) does "
            "(docs/papers.md, DW-6).",
            "cov is not transitive (docs/papers.md, DW-6): its Copeland order is an aggregate; "
            "cycles are listed.",
            "Descriptors (variance, cv, gini, floor_share, quantiles) have no better/worse direction.",
            "P_cov of cov stays raw in WTD/GOAL; spr and hv use the share normalization unless configured.",
        ],
    }
    return Comparison(
        instance=instance,
        releases=names,
        unary=unary,
        pairwise=pairwise,
        rankings=rankings,
        pareto=pareto,
        multi=pd.DataFrame(multi_rows, columns=_MULTI_COLUMNS if not multi_rows else None),
        multi_rankings=multi_rankings,
        goal_scores=goal_scores,
        metadata=metadata,
    )


def _column(series: pd.Series) -> np.ndarray:
    values = series.to_numpy()
    if (
        values.dtype.kind == "f"
        and len(values)
        and np.all(values == np.round(values))
        and series.name in ("size", "sfreq", "ldist")
    ):
        return values.astype(np.int64)
    return values


def _swap(dom: Q.Dominance) -> Q.Dominance:
    return {Q.Dominance.BETTER: Q.Dominance.WORSE, Q.Dominance.WORSE: Q.Dominance.BETTER}.get(
        dom, dom
    )


def _lookup(verdicts: dict, p: str, comp: str, x: str, y: str) -> Q.Verdict:
    if (p, comp, x, y) in verdicts:
        return verdicts[p, comp, x, y]
    return verdicts[p, comp, y, x].swapped()


def _multi(m: dict, u1: dict, u2: dict, d_max: dict) -> Q.MultiResult:
    index = m.get("index", "cov")
    norm = m.get("normalization", "default")
    if m["procedure"] == "wtd":
        return Q.wtd(u1, u2, weights=m["weights"], index=index, normalization=norm)
    if m["procedure"] == "lex":
        return Q.lex(u1, u2, eps=m.get("eps", 0), index=index, normalization=norm, d_max=d_max)
    return Q.goal(
        u1,
        u2,
        goals=m["goals"],
        index=index,
        normalization=norm,
        one_sided=m.get("one_sided", False),
    )


def _slug(text: str, taken: set | None = None) -> str:
    """The folder of a comparison (or its anchor in the report): inside ``comparison/``
    whatever the instance is called, and one per comparison when `taken` collects them."""
    base = safe_file_name(text, "instance")
    if taken is None:
        return base
    name, n = base, 1
    while name in taken:
        n += 1
        name = f"{base}_{n}"
    taken.add(name)
    return name


def compare_results(
    out: str, config: CompareConfig | None = None, *, write: bool = True
) -> dict[str, Comparison]:
    """Compare, per instance, the releases of a benchmark output directory.

    The releases are the runs that ended ``ok`` with stored property vectors, first
    repetition only (repetitions repeat a release for timing). Runs on different
    instances are never compared (Dewri et al.); with ``config.by == "requirements"``
    only the runs of one instance under one requirement set are.

    Parameters
    ----------
    out : str
        A directory written by :func:`~fairanon.bench.runner.run_suite`.
    config : CompareConfig, optional
        Default: the suite's ``compare`` section.
    write : bool, default=True
        Write ``comparison/<name>/`` under `out`.

    Returns
    -------
    dict name -> Comparison
        Keyed by the instance, or by ``"<instance> · <requirement set>"`` (its name in
        the suite, or its requirements when that name stands for several).
    """
    from .runner import read_results

    results = read_results(out)
    if config is None:
        suite_path = os.path.join(out, "suite.json")
        section = {}
        if os.path.exists(suite_path):
            with open(suite_path, encoding="utf-8") as fh:
                section = json.load(fh).get("compare") or {}
        config = CompareConfig.from_dict(section)
    if "vectors" not in results.columns:
        return {}
    usable = results[
        (results["outcome"] == "ok") & results["vectors"].notna() & (results["repetition"] == 0)
    ]
    if "run_index" in usable.columns:
        usable = usable.sort_values("run_index", kind="stable")
    by_requirements = config.by == "requirements"
    keys = ["instance", "requirements"] if by_requirements else ["instance"]
    # A requirement set is named by its family ("k+alpha") where that is unambiguous.
    texts = (
        usable.groupby(["instance", "reqset"])["requirements"].nunique()
        if by_requirements
        else None
    )
    comparisons = {}
    folders: set = set()
    for key, group in usable.groupby(keys, sort=False):
        key = key if isinstance(key, tuple) else (key,)
        instance = key[0]
        name = str(instance)
        if by_requirements:
            family = group["reqset"].iloc[0]
            label = family if texts[instance, family] == 1 else key[1]
            name = f"{instance} · {label}"
        vectors, group_vectors, suppression = {}, {}, {}
        for _, row in group.drop_duplicates("release").iterrows():
            path = os.path.join(out, row["vectors"])
            if not os.path.exists(path):
                continue
            vectors[row["release"]] = pd.read_parquet(path)
            extra = row.get("group_vectors")
            if isinstance(extra, str) and os.path.exists(os.path.join(out, extra)):
                group_vectors[row["release"]] = pd.read_parquet(os.path.join(out, extra))
            suppression[row["release"]] = _suppression(row)
        if not vectors:
            continue
        first = group.iloc[0]
        n_sensitive = first.get("n_sensitive")
        context = Q.PropertyContext(
            n_rows=int(first["n_rows"]),
            n_qi=int(first["n_qi"]),
            n_sensitive=None if pd.isna(n_sensitive) else int(n_sensitive),
        )
        comparison = _comparison(
            name, str(instance), key[1] if by_requirements else None, vectors, group_vectors,
            suppression, context, config,
        )
        if write:
            comparison.write(os.path.join(out, "comparison", _slug(name, folders)))
        comparisons[name] = comparison
    return comparisons


def _comparison(
    name: str,
    instance: str,
    requirements: str | None,
    vectors: dict,
    group_vectors: dict,
    suppression: dict,
    context: Q.PropertyContext,
    config: CompareConfig,
) -> Comparison:
    """One comparison of :func:`compare_results` or :func:`compare_runs`: the releases'
    vectors compared, named, with their requirement set and suppression policies."""
    comparison = compare_releases(
        vectors, context, config, instance=instance, groups=group_vectors or None
    )
    comparison.metadata["name"] = name
    comparison.metadata["requirements"] = requirements
    comparison.metadata["suppression"] = suppression
    return comparison


@dataclass(frozen=True)
class RunRelease:
    """A release held in memory, for :func:`compare_runs`.

    Attributes
    ----------
    name : str
        The release's name in the comparison (one per release).
    instance : str
        The name of its data: equal for releases of the same data, different otherwise
        (their records could not be compared one by one).
    data : Instance
        The data it releases.
    requirements : tuple of dict
        The requirements it was asked to meet, in their job-file form.
    release : Release
        The released table (its classes are read from its labels, as the verifier does).
    """

    name: str
    instance: str
    data: object
    requirements: tuple
    release: object


def compare_runs(
    runs: list[RunRelease], config: CompareConfig | None = None, *, metrics: Mapping | None = None
) -> dict[str, Comparison]:
    """Compare releases held in memory as :func:`compare_results` compares those of a
    benchmark output directory.

    The releases are grouped as there: per instance, or per instance and requirement set
    when ``config.by == "requirements"``; releases of different data are never compared
    (Dewri et al. compare anonymizations of the same records). Each release's per-record
    vectors are measured as a benchmark run measures them
    (:func:`~fairanon.bench.vectors.run_vectors`), with ``metrics.fairness.diversity:
    auto`` reading the diversity constraints of the group's releases.

    Parameters
    ----------
    runs : list of RunRelease
    config : CompareConfig, optional
        Default: ``CompareConfig()`` (grouped per instance).
    metrics : mapping, optional
        A suite's ``metrics`` section (``suppression``, ``numeric_loss``, ``fairness``);
        default: the suite defaults.

    Returns
    -------
    dict name -> Comparison
        Keyed by the instance, or by ``"<instance> · <requirements>"``, in the order the
        groups first appear in `runs`.

    Raises
    ------
    InvalidParameterError
        If two releases have the same name.
    """
    from ..models.requirements import requirement_from_spec
    from .vectors import check_fairness, property_context, run_vectors

    config = config or CompareConfig()
    names = [r.name for r in runs]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise InvalidParameterError(f"compare_runs needs one name per release; {repeated} name several.")
    groups: dict = {}
    for run in runs:
        text = "; ".join(str(requirement_from_spec(r)) for r in run.requirements)
        name = f"{run.instance} · {text}" if config.by == "requirements" else run.instance
        groups.setdefault(name, []).append((run, text))
    comparisons = {}
    for name, group in groups.items():
        specs = [spec for run, _ in group for spec in run.requirements]
        measured = {"suppression": "as_class", "numeric_loss": "width", **(metrics or {})}
        measured["fairness"] = check_fairness(measured.get("fairness"), specs)
        vectors, group_vectors, suppression = {}, {}, {}
        for run, _ in group:
            requirements = [requirement_from_spec(r) for r in run.requirements]
            frame, per_group, columns = run_vectors(run.data, run.release, requirements, measured)
            vectors[run.name] = frame
            if per_group is not None:
                group_vectors[run.name] = per_group
            suppression[run.name] = _suppression(columns)
        first, text = group[0]
        comparisons[name] = _comparison(
            name, first.instance, text if config.by == "requirements" else None, vectors,
            group_vectors, suppression, property_context(first.data), config,
        )
    return comparisons


def _suppression(row) -> dict:
    """The suppression policy of a run's vectors and what the run reported about it."""

    def value(key):
        v = row.get(key)
        return None if v is None or (isinstance(v, float) and math.isnan(v)) else v

    suppressed = value("suppressed_records")
    return {
        "policy": value("suppression_policy") or "as_class",
        "suppressed": int(suppressed) if suppressed is not None else None,
        "warning": value("suppression_warning"),
    }
