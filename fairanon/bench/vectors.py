"""The property vectors a benchmark run stores, and the suite settings behind them.

Every run of an instance must measure the same properties, whatever requirements it
was asked to meet, or its releases could not be compared: a Mondrian release under k
alone is still compared on alpha-protection and on the diversity constraints of the
suite. The suite's ``metrics`` section fixes them once:

.. code-block:: yaml

    metrics:
      suppression: as_class        # as_class | as_population | exclude (docs/papers.md, DW-8)
      fairness:
        measure: ER                # per-record alpha-protection measure; null: none
        min_support: null
        diversity: auto            # auto: every diversity constraint of the suite; or a list

The alpha-protection vector is measured on instances with a protected and a decision
attribute; each diversity constraint on the instances that have its attributes and
values.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

import pandas as pd

from ..exceptions import InvalidParameterError
from ..models.metrics import (
    SUPPRESSION_POLICIES,
    fairness_vectors,
    property_vectors,
    suppression_summary,
)
from ..models.metrics.fairness import measure_name
from ..models.requirements import DiversityConstraint, KAnonymity, requirement_from_spec
from .quality import PropertyContext

__all__ = ["check_fairness", "property_context", "run_vectors", "write_frame"]

_FAIRNESS_KEYS = {"measure", "min_support", "diversity"}


def check_fairness(section, requirement_specs: Sequence[Mapping]) -> dict:
    """Validate ``metrics.fairness`` and resolve ``diversity: auto`` to the diversity
    constraints of every requirement set of the suite (each listed once, as its
    job-file form).

    >>> check_fairness({}, [{"diversity": "job(skilled) [1, 5]"}, {"k_anonymity": {"k": 5}}])
    {'measure': 'ER', 'min_support': None, 'diversity': [{'diversity': {'target': {'job': 'skilled'}, 'lower': 1, 'upper': 5}}]}
    """
    if section is None:
        section = {}
    if not isinstance(section, Mapping):
        raise InvalidParameterError("metrics.fairness of a suite must be a mapping.")
    unknown = set(section) - _FAIRNESS_KEYS
    if unknown:
        raise InvalidParameterError(
            f"Unknown keys {sorted(unknown)} in metrics.fairness; allowed: {sorted(_FAIRNESS_KEYS)}."
        )
    measure = section.get("measure", "ER")
    if measure is not None:
        measure = measure_name(measure)
    support = section.get("min_support")
    if support is not None and (
        isinstance(support, bool) or not isinstance(support, int) or support < 1
    ):
        raise InvalidParameterError(
            f"metrics.fairness.min_support must be an int ≥ 1 or null. Got {support!r} instead."
        )
    diversity = section.get("diversity", "auto")
    if diversity == "auto":
        specs = [s for s in requirement_specs if _is_diversity(s)]
    elif isinstance(diversity, list):
        specs = [s if isinstance(s, Mapping) else {"diversity": s} for s in diversity]
    else:
        raise InvalidParameterError(
            f"metrics.fairness.diversity must be 'auto' or a list of constraints. Got {diversity!r} instead."
        )
    resolved, seen = [], set()
    for spec in specs:
        req = requirement_from_spec(spec)
        if not isinstance(req, DiversityConstraint):
            raise InvalidParameterError(
                f"metrics.fairness.diversity lists diversity constraints only. Got {spec!r} instead."
            )
        if repr(req) not in seen:
            seen.add(repr(req))
            resolved.append(req.to_spec())
    return {"measure": measure, "min_support": support, "diversity": resolved}


def _is_diversity(spec) -> bool:
    try:
        return isinstance(requirement_from_spec(spec), DiversityConstraint)
    except InvalidParameterError:
        return False


def property_context(instance) -> PropertyContext:
    """What the flip bounds and ideal vectors of the properties read from the data
    (:data:`~fairanon.bench.quality.PROPERTIES`): N, the number of quasi-identifiers and
    of distinct values of the first protected attribute (none when there is none)."""
    targets = instance.schema.default_targets()
    return PropertyContext(
        n_rows=instance.n_rows,
        n_qi=len(instance.schema.qi),
        n_sensitive=int(instance.table[targets[0]].nunique()) if targets else None,
    )


def run_vectors(instance, release, requirements, metrics: Mapping):
    """The property vectors of one run and the columns they add to its results row.

    Returns
    -------
    frame : pandas.DataFrame
        Per record (index ``record_id``): :func:`~fairanon.models.metrics.property_vectors`
        under the suite's suppression policy, then the fairness columns.
    groups : pandas.DataFrame or None
        Per diversity constraint (index ``group``), when the instance has any.
    columns : dict
        ``suppression_policy``, ``suppressed_records``, ``suppressed_classes`` and
        ``suppression_warning`` (set when a class of suppressed records is smaller than
        the run's k under "as_class").
    """
    policy = metrics.get("suppression", "as_class")
    if policy not in SUPPRESSION_POLICIES:
        raise InvalidParameterError(
            f"metrics.suppression must be one of {list(SUPPRESSION_POLICIES)}. Got {policy!r} instead."
        )
    ks = [r.k for r in requirements if isinstance(r, KAnonymity)]
    summary = suppression_summary(instance, release, k=max(ks) if ks else None, policy=policy)
    frame = property_vectors(
        instance, release, numeric_loss=metrics.get("numeric_loss", "width"), suppression=policy
    )
    fairness = metrics.get("fairness") or check_fairness({}, [])
    constraints = [requirement_from_spec(s) for s in fairness.get("diversity") or []]
    extra = fairness_vectors(
        instance,
        release,
        measure=fairness.get("measure"),
        min_support=fairness.get("min_support"),
        constraints=constraints,
    )
    if len(extra.columns):
        frame = frame.join(extra)
    groups = None
    if constraints:
        groups = fairness_vectors(instance, release, constraints=constraints, unit="group")
        if not len(groups.columns):
            groups = None
    frame.index = frame.index.rename("record_id")
    columns = {
        "suppression_policy": policy,
        "suppressed_records": summary["suppressed"],
        "suppressed_classes": " ".join(map(str, summary["suppressed_classes"])) or None,
        "suppression_warning": summary["warning"],
    }
    return frame, groups, columns


def write_frame(frame: pd.DataFrame, path: str) -> None:
    """Write a parquet file through a temporary name, so a killed run leaves none."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{path}.{os.getpid()}.tmp"  # one per process: an orphan of an interrupted run may still write
    frame.to_parquet(tmp, engine="pyarrow")
    os.replace(tmp, path)
