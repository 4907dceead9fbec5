"""The utility report: a plain object with :meth:`UtilityReport.to_dict` and a readable text."""

from __future__ import annotations

import math
from dataclasses import dataclass

from .classification import ClassificationUtility
from .distributions import AttributeDistribution

__all__ = ["UtilityReport"]

#: How the report heads a discrimination measure's column.
_SHOWN = {"ER": "elift", "RR": "slift"}


@dataclass(frozen=True)
class UtilityReport:
    """What an anonymization cost: the distributions before and after, and whether a
    model trained on the release is still accurate and still fair.

    Attributes
    ----------
    instance, method, status : str
    n_rows : int
    attributes : tuple of AttributeDistribution
    classification : ClassificationUtility or None
        None when no classifier was asked for (``classifier=None``).
    distributions_s : float
        Seconds the distributions took (reading the release included).
    """

    instance: str
    method: str
    status: str
    n_rows: int
    attributes: tuple[AttributeDistribution, ...]
    classification: ClassificationUtility | None = None
    distributions_s: float = 0.0

    def __getitem__(self, name: str) -> AttributeDistribution:
        for a in self.attributes:
            if a.name == name:
                return a
        raise KeyError(f"No attribute {name!r} in the report; attributes: {[a.name for a in self.attributes]}")

    def to_dict(self) -> dict:
        return {
            "instance": self.instance,
            "method": self.method,
            "status": self.status,
            "n_rows": self.n_rows,
            "attributes": [a.to_dict() for a in self.attributes],
            "classification": None if self.classification is None else self.classification.to_dict(),
            "distributions_s": self.distributions_s,
            "summary": self.summary(),
        }

    def summary(self) -> dict:
        """The report's headline figures, flat and JSON-ready (for ``report.json`` and
        the columns of ``fairanon bench``): the largest and the mean total variation
        distance over the attributes, the share of the attributes' cells released exact,
        generalized and suppressed, and with a classifier each model's accuracy and AUC
        and the discrimination of its predictions (``<measure>_original``,
        ``<measure>_release``)."""
        out: dict = {}
        if self.attributes:
            worst = max(self.attributes, key=lambda a: a.tv_distance)
            out.update(tv_max=worst.tv_distance, tv_max_attribute=worst.name,
                       tv_mean=sum(a.tv_distance for a in self.attributes) / len(self.attributes))
            cells = sum(a.n for a in self.attributes)
            for case in ("exact", "generalized", "suppressed"):
                out[f"{case}_share"] = sum(a.totals[case] for a in self.attributes) / cells if cells else 0.0
        c = self.classification
        if c is not None:
            out.update(classifier=c.classifier, accuracy_original=c.original.accuracy,
                       accuracy_release=c.release.accuracy, auc_original=c.original.auc,
                       auc_release=c.release.auc, accuracy_loss=c.accuracy_loss)
            for m in c.measures if c.protected else ():
                out[f"{m}_original"] = c.original.discrimination[m]
                out[f"{m}_release"] = c.release.discrimination[m]
        return out

    def __str__(self) -> str:
        lines = [f"Utility of a {self.method!r} release of {self.instance!r} ({self.n_rows} rows, status {self.status})"]
        if self.attributes:
            lines.append("  distributions: the share of records released exact / generalized / suppressed; TV, the total")
            lines.append("  variation distance between the original histogram and the release's, labels read as uniform spreads")
            width = max([9] + [len(a.name) for a in self.attributes])
            lines.append(f"    {'attribute':<{width}}  {'kind':<11}  {'exact':>7}  {'generalized':>11}  "
                         f"{'suppressed':>10}  {'labels':>6}  {'TV':>6}")
            for a in self.attributes:
                s = a.shares()
                lines.append(
                    f"    {a.name:<{width}}  {a.kind:<11}  {_pct(s['exact']):>7}  {_pct(s['generalized']):>11}  "
                    f"{_pct(s['suppressed']):>10}  {a.n_labels:>6}  {a.tv_distance:>6.3f}"
                )
            for a in self.attributes:
                if a.totals["untruthful"]:
                    lines.append(f"    {a.name}: {a.totals['untruthful']} cell(s) do not cover their original value")
                if a.unplaced:
                    lines.append(f"    {a.name}: {a.unplaced:g} record(s) under labels covering no value of the data")
            for a in self.attributes:
                if a.summary:
                    b, f = a.summary["before"], a.summary["after"]
                    lines.append(
                        f"    {a.name} (labels at midpoints): mean {b['mean']:.4g} -> {f['mean']:.4g}, "
                        f"std {b['std']:.4g} -> {f['std']:.4g} (uniform spread {f['std_uniform']:.4g}), "
                        f"median {b['median']:.4g} -> {f['median']:.4g}, quartiles [{b['q25']:.4g}, {b['q75']:.4g}] "
                        f"-> [{f['q25']:.4g}, {f['q75']:.4g}]"
                    )
        c = self.classification
        if c is not None:
            lines.append(
                f"  classification: {c.classifier} predicting {c.target} = {c.negative!r}, trained on "
                f"{c.n_train} records, tested on {c.n_test} held-out original records (seed {c.seed})"
            )
            shown = [_SHOWN.get(m, m) for m in c.measures] if c.protected else []
            header = f"    {'trained on':<14}  {'accuracy':>8}  {'AUC':>6}  {'negative':>8}" + "".join(
                f"  {m:>7}" for m in shown
            )
            lines.append(header)
            for score in (c.original, c.release, c.truth):
                label = "held-out truth" if score.trained_on == "truth" else score.trained_on
                line = (f"    {label:<14}  {_num(score.accuracy):>8}  {_num(score.auc):>6}  "
                        f"{_pct(score.negative_rate):>8}")
                if c.protected:
                    line += "".join(f"  {_num(score.discrimination[m]):>7}" for m in c.measures)
                lines.append(line)
            lines.append(
                f"    accuracy lost {c.accuracy_loss:+.3f}; always predicting the majority decision: "
                f"{c.majority_accuracy:.3f}"
                + (f"; discrimination of the predictions for {c.protected} (protected group)" if c.protected
                   else "; no protected attribute, no discrimination measured")
            )
        return "\n".join(lines)


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def _num(x) -> str:
    if x is None:
        return "-"
    if isinstance(x, float) and math.isinf(x):
        return "inf"
    return f"{x:.3f}"
