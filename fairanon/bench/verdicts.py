"""What a comparison says, in plain words: the verdicts at the top of the report.

For each comparison (the releases of one instance, or of one instance under one
requirement set) :func:`comparison_verdicts` says which release leads on each
property record by record (the Copeland order under ▶cov, the tuple-aligned
comparator), whether one release dominates the others on every property or which
releases no other dominates (the joint Pareto set, the one ranking-free statement of
Dewri et al.), which run was fastest, which runs gave no verified release, where a
class of suppressed records is smaller than k, and where ▶cov went round in a circle.
:func:`headline` counts, over all comparisons, how often each algorithm leads.
"""

from __future__ import annotations

from collections import Counter

import pandas as pd

from .compare import Comparison
from .plots import cap_of, display_names, shown_properties, values
from .quality import PROPERTIES

__all__ = ["comparison_verdicts", "headline"]

#: How a verdict names the leader on a property.
_LEAD = {
    "size": "Most privacy (largest classes, lowest re-identification risk)",
    "risk": "Lowest re-identification risk",
    "ldist": "Most distinct sensitive values per class",
    "tclose": "Sensitive values closest to the table's",
    "loss": "Least information loss",
    "util_paper": "Most utility",
    "div_share": "Most of each diversity group kept visible",
}


#: Ruggieri's measures under the names discrimination analysis gives them.
_MEASURE_WORDS = {
    "RD": "risk difference",
    "ED": "extended difference",
    "RR": "slift",
    "ER": "elift",
    "OR": "odds ratio",
    "RC": "slift_c",
    "EC": "elift_c",
}


def _lead_text(prop: str) -> str:
    if prop.startswith("alpha_"):
        measure = _MEASURE_WORDS.get(prop[6:], prop[6:])
        return f"Least discrimination (the worst {measure} of the contexts a record falls in)"
    return _LEAD.get(prop, PROPERTIES[prop].label)


def _num(value: float, cap: float | None = None) -> str:
    if cap is not None and value >= cap:
        return "unbounded"
    return f"{value:.4g}" if abs(value) < 1e4 else f"{value:,.0f}"


def _summary_value(prop: str, arr) -> tuple[str, float]:
    """The figure quoted for a release: the worst value for alpha-protection (the
    verifier's achieved alpha), the mean otherwise."""
    if prop.startswith("alpha_"):
        worst = arr.max() if PROPERTIES[prop].direction == "lower" else arr.min()
        return "worst", float(worst)
    return "mean", float(arr.mean())


def _leaders(comparison: Comparison, prop: str) -> list[str]:
    ranking = comparison.rankings.get((prop, "cov"))
    if ranking is None:
        return []
    top = max(ranking.scores.values())
    return [n for n in ranking.order if ranking.scores[n] == top]


def _rows(results: pd.DataFrame, comparison: Comparison) -> pd.DataFrame:
    """The results rows behind a comparison (all repetitions, every outcome)."""
    rows = results[results["instance"].astype(str) == comparison.instance]
    requirements = comparison.metadata.get("requirements")
    if requirements is not None and "requirements" in rows.columns:
        rows = rows[rows["requirements"].astype(str) == requirements]
    return rows


def comparison_verdicts(comparison: Comparison, results: pd.DataFrame | None = None) -> list[str]:
    """Plain-word verdicts of one comparison, most important first.

    Parameters
    ----------
    comparison : Comparison
    results : pandas.DataFrame, optional
        The benchmark's results table: adds the fastest run, the runs without a
        verified release and the suppression warnings.

    Returns
    -------
    list of str
    """
    out = []
    names = comparison.releases
    show = display_names(names)
    props = shown_properties(comparison)
    if len(names) > 1:
        for prop in props:
            line = _property_verdict(comparison, prop, show)
            if line:
                out.append(line)
        joint = comparison.pareto.get("joint")
        if joint is not None:
            if len(joint) == 1:
                out.append(
                    f"{show[joint[0]]} is not dominated on all compared properties together, and "
                    "every other release is: it is the one choice that loses nothing."
                )
            else:
                out.append(
                    "No release is best on every property; those no other release dominates on all "
                    f"of them together (joint Pareto set): {', '.join(show[n] for n in joint)}."
                )
        cycles: dict = {}
        for comp, text in comparison.cycles():
            prop = comp.split(":")[0]
            if prop in props and comp.endswith(":cov"):
                cycles.setdefault(prop, []).append(text)
        for prop, texts in cycles.items():
            for name in sorted(names, key=len, reverse=True):
                texts = [t.replace(name, show[name]) for t in texts]
            count = f"{len(texts)} circles, e.g. " if len(texts) > 1 else ""
            out.append(
                f"On {prop}, ▶cov goes round in a circle ({count}{texts[0]}): its score order is an "
                "aggregate, not a ranking."
            )
    else:
        out.append(f"One release ({names[0]}): nothing to compare it with.")
    if results is not None and len(results):
        out += _run_verdicts(_rows(results, comparison))
    for release, info in comparison.metadata.get("suppression", {}).items():
        if info.get("warning"):
            out.append(f"{show.get(release, release)}: {info['warning']}")
    return out


def _property_verdict(comparison: Comparison, prop: str, show: dict) -> str | None:
    """Who leads on `prop` record by record (▶cov), how strongly, and who leads by the
    scalar summary when that is someone else."""
    names = comparison.releases
    leaders = _leaders(comparison, prop)
    if not leaders:
        return None
    vals = values(comparison, prop)
    cap = cap_of(comparison, prop)
    summary = {n: _summary_value(prop, vals[n]) for n in names}
    kind = summary[leaders[0]][0]
    lead_value = summary[leaders[0]][1]
    others = [summary[n][1] for n in names if n not in leaders]
    span = (
        f" against {_num(min(others), cap)}–{_num(max(others), cap)}"
        if others and min(others) != max(others)
        else (f" against {_num(others[0], cap)}" if others else "")
    )
    who = " and ".join(show[n] for n in leaders)
    if len(leaders) > 1:
        tail = "they share the best coverage score (▶cov wins minus losses)"
    elif comparison.pareto.get(prop) == leaders:
        # The only undominated release dominates every other (dominance is transitive).
        tail = "it dominates every other release record by record"
    elif comparison.rankings[prop, "cov"].scores[leaders[0]] == len(names) - 1:
        tail = "it is better than each other release on more records than it is worse"
    else:
        tail = "it has the best coverage score (▶cov wins minus losses)"
    line = f"{_lead_text(prop)}: {who} ({kind} {_num(lead_value, cap)}{span}); {tail}"
    higher = PROPERTIES[prop].direction == "higher"
    best = (max if higher else min)(summary[n][1] for n in names)
    if (best > lead_value) if higher else (best < lead_value):
        by_value = [show[n] for n in names if summary[n][1] == best]
        lead = "lead" if len(by_value) > 1 else "leads"
        line += f"; by the {kind} value, {' and '.join(by_value)} {lead} ({_num(best, cap)})"
    return line + "."


def _run_verdicts(rows: pd.DataFrame) -> list[str]:
    out = []
    if rows.empty:
        return out
    ok = rows[rows["outcome"] == "ok"]
    verified = (
        ok["verified"].astype(str) == "True" if "verified" in ok.columns else ok["outcome"] == "ok"
    )
    good = ok[verified]
    if "time_s" in good.columns and good["time_s"].notna().any() and good["release"].nunique() > 1:
        times = good.groupby("release", sort=False)["time_s"].median()
        show = display_names(list(times.index.astype(str)))
        out.append(
            f"Fastest: {show[times.idxmin()]} ({float(times.min()):.3g} s; slowest "
            f"{show[times.idxmax()]} {float(times.max()):.3g} s)."
        )
    bad = []
    show = display_names(list(rows["release"].astype(str).unique()))
    for release, group in rows.groupby("release", sort=False):
        first = group.iloc[0]
        status = first.get("status")
        if first["outcome"] != "ok":
            bad.append(f"{show[release]} ({first['outcome']})")
        elif status not in ("OPTIMAL", "FEASIBLE"):
            bad.append(f"{show[release]} ({status})")
        elif str(first.get("verified")) != "True":
            bad.append(f"{show[release]} (fails verification)")
    if bad:
        out.append("No release to compare from: " + ", ".join(bad) + ".")
    return out


def headline(comparisons: dict, results: pd.DataFrame | None = None) -> list[str]:
    """Over every comparison with several releases: how often each algorithm leads on
    privacy, loss and fairness, and how often it is in the joint Pareto set.

    Releases are counted by algorithm when the results table names it (the
    ``algorithm`` column), else by release name.
    """
    algorithm = {}
    if results is not None and "algorithm" in results.columns:
        algorithm = dict(zip(results["release"].astype(str), results["algorithm"].astype(str)))
    families = {
        "privacy": Counter(),
        "utility": Counter(),
        "fairness": Counter(),
        "joint": Counter(),
    }
    totals = Counter()
    for comparison in comparisons.values():
        if len(comparison.releases) < 2:
            continue
        for family in ("privacy", "utility", "fairness"):
            props = [p for p in shown_properties(comparison) if PROPERTIES[p].family == family]
            if not props:
                continue
            totals[family] += 1
            for alg in {algorithm.get(n, n) for p in props for n in _leaders(comparison, p)}:
                families[family][alg] += 1
        if "joint" in comparison.pareto:
            totals["joint"] += 1
            for alg in {algorithm.get(n, n) for n in comparison.pareto["joint"]}:
                families["joint"][alg] += 1
    words = {
        "privacy": "most privacy per record",
        "utility": "least information loss per record",
        "fairness": "least discrimination or most diversity kept",
        "joint": "not dominated on all properties together",
    }
    out = []
    for family, counter in families.items():
        if not totals[family]:
            continue
        ranked = counter.most_common(3)
        text = ", ".join(f"{a} ({c} of {totals[family]})" for a, c in ranked)
        out.append(f"{words[family].capitalize()} most often: {text}.")
    if not out:
        return ["No comparison holds two releases or more."]
    return out
