"""Utility analysis: what an anonymization cost, read from the released table.

:func:`utility` answers two questions a data steward asks before a release:

- **the distributions** (:mod:`.distributions`): per attribute, how the released labels
  spread over the original values — per original value (or bin of numbers) the records
  released exactly, generalized, suppressed — beside the original histogram and the
  release's histogram read as uniform spreads, with their total variation distance;
  for numeric attributes summary statistics before and after (labels at their
  midpoints; the standard deviation under the uniform spread as well). How labels are
  read: :mod:`.encoding`.
- **classification utility** (:mod:`.classification`): the same scikit-learn classifier
  trained on the original and on the release (the same training records), both
  evaluated on held-out original records: accuracy, AUC, and the discrimination of each
  model's predictions for the protected group (risk difference and elift by default) —
  is a model trained on this release still accurate, and still fair?

These are the two halves of ARX's utility perspective (distributions before and after;
classification accuracy on the output), with the fairness of the trained models added.
scikit-learn is needed for the second half only (the ``ml`` extra).
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from ..._validation import check_int
from ...exceptions import FairanonError, InvalidParameterError, SchemaError
from ...instances.instance import Instance
from ...release import Release
from ..metrics.classes import _prepare
from .classification import (
    CLASSIFIERS,
    ClassificationUtility,
    MissingDependencyError,
    ModelScore,
    check_classifier,
    classification_utility,
    stratified_split,
)
from .distributions import CASES, AttributeDistribution, attribute_distribution
from .encoding import NumericReading, label_weights, numeric_reading, released_attributes
from .report import UtilityReport

__all__ = [
    "CASES",
    "CLASSIFIERS",
    "AttributeDistribution",
    "ClassificationUtility",
    "MissingDependencyError",
    "ModelScore",
    "NumericReading",
    "UtilityReport",
    "label_weights",
    "numeric_reading",
    "release_utility",
    "stratified_split",
    "utility",
]


def utility(
    instance: Instance,
    release: Release,
    *,
    seed=0,
    attributes: Sequence[str] | None = None,
    bins: int = 10,
    classifier="logistic",
    features: Sequence[str] | None = None,
    test_size=0.3,
    measures: Sequence[str] = ("RD", "ER"),
) -> UtilityReport:
    """The utility of a release: distributions before and after, classification utility.

    Parameters
    ----------
    instance : Instance
        The original data.
    release : Release
        Its release, aligned by record id (every record exactly once).
    seed : int, numpy Generator or None, default=0
        Draws the held-out split and the classifier's randomness; the same seed gives
        the same report.
    attributes : sequence of str, optional
        Attributes whose distributions are compared; default: the quasi-identifiers
        (the protected attribute included). Any released attribute may be named.
    bins : int, default=10
        Bins of the numeric attributes' histograms (see :mod:`.distributions`).
    classifier : {"logistic", "tree", "forest"}, scikit-learn classifier or None
        The model of the classification utility; None skips it (and scikit-learn). It
        needs a decision attribute.
    features : sequence of str, optional
        Attributes the models read; default: every released attribute but the decision.
    test_size : float or Fraction in (0, 1), default=0.3
        The held-out share of the records (stratified by the decision).
    measures : sequence of str, default=("RD", "ER")
        Discrimination measures of the models' predictions (RD, RR, OR, ED, ER, EC, RC
        or an alias: ``elift`` = ER); measured when the instance has a protected
        attribute.

    Returns
    -------
    UtilityReport

    Raises
    ------
    InvalidParameterError
        For a bad argument (the message names it).
    SchemaError
        If the release does not hold every record exactly once, lacks a column, holds a
        label its attribute cannot read, or a classifier is asked for on an instance
        without a decision attribute.
    MissingDependencyError
        If a classifier is asked for and scikit-learn is not installed (``pip install
        'fairanon[ml]'``).

    Examples
    --------
    >>> import fairanon as fa
    >>> inst = fa.load("diva_table1")
    >>> rel = fa.anonymize(inst, [fa.KAnonymity(2)], method="mondrian", seed=0)
    >>> report = fa.utility(inst, rel, classifier=None)
    >>> sorted(report.attributes[0].totals)
    ['exact', 'generalized', 'suppressed', 'untruthful']
    """
    bins = check_int(bins, "bins", "utility", low=1)
    if not isinstance(release, Release):
        raise InvalidParameterError(
            f"The 'release' parameter of utility must be a Release. Got {type(release).__name__} instead."
        )
    if release.n_rows == 0:
        raise SchemaError(
            f"The release holds no rows (status {release.status}"
            f"{': ' + release.reason if release.reason else ''}): there is nothing to measure."
        )
    if not isinstance(instance, Instance):
        raise InvalidParameterError(
            f"The 'instance' parameter of utility must be an Instance. Got {type(instance).__name__} instead."
        )
    if classifier is not None:
        check_classifier(classifier, instance, test_size, measures)
    started = time.perf_counter()
    prepared = _prepare(instance, release, "utility")
    schema = instance.schema
    if attributes is None:
        names = list(schema.qi)
    else:
        names = released_attributes(attributes, "attributes", instance, release.table)
    distributions = tuple(attribute_distribution(prepared, name, bins) for name in names)
    distributions_s = time.perf_counter() - started
    classification = None
    if classifier is not None:
        classification = classification_utility(
            prepared, classifier=classifier, features=features, test_size=test_size, measures=measures, seed=seed
        )
    return UtilityReport(
        instance=instance.name,
        method=release.method,
        status=str(release.status),
        n_rows=release.n_rows,
        attributes=distributions,
        classification=classification,
        distributions_s=distributions_s,
    )


def release_utility(instance: Instance, release: Release, *, classifier=None, seed=0) -> dict | None:
    """:func:`utility`'s report as a dict, for the reports the command line and
    ``fairanon bench`` write: None when the release holds no table; ``{"error": ...}``
    when the figures cannot be computed (a label its attribute cannot read, say).

    The distributions only by default (no scikit-learn needed, the same figures for
    the same release); `classifier` adds the classification utility."""
    if not isinstance(release, Release) or release.n_rows == 0 or not len(release.table.columns):
        return None
    try:
        return utility(instance, release, classifier=classifier, seed=seed).to_dict()
    except FairanonError as exc:
        return {"error": str(exc)}
