"""Classification utility: is a model trained on the release still accurate, and still fair?

The protocol (as ARX's classification utility, with the fairness of the predictions added):

1. The records are split once, by the seed, into a training part and a held-out part
   of `test_size` of the records, stratified by the decision (each decision value keeps
   its share in both parts).
2. Two models of the same kind learn to predict the negative decision of the decision
   attribute: one from the *original* training records, one from the *released* rows of
   the same records. Features are the released attributes other than the decision (the
   protected attribute included, as a model trained on the release can read it), or
   the ones named.
3. Both are evaluated on the held-out *original* records, so the two scores answer the
   same question on the same people.

Encodings (:mod:`.encoding`): categorical and ordered attributes are one-hot encoded —
original values for the original model, released labels (those of the training rows)
for the release model; numeric attributes are numbers — original values, and released
labels read at their midpoints. A held-out original record is read in the release's
label space by mapping its value to every training label that covers it, with the
weights w(l | v) of :func:`~.encoding.label_weights` (numeric values are read as they
are).

Reported per model: accuracy, the area under the ROC curve of the predicted probability
of the negative decision, and the discrimination of the model's predictions on the
held-out records for the protected group: the measures of
:func:`~fairanon.models.measures.discrimination_exact` (Ruggieri, TDP 2014, Fig. 1;
risk difference RD = p1 − p2 and elift ER = p1 / p by default, where p1 and p2 are the
rates of predicted negative decisions among protected and unprotected held-out records,
p over all of them), beside the same measures of the held-out records' true decisions
and the accuracy of always predicting the training part's majority decision.

scikit-learn is an optional dependency (``pip install 'fairanon[ml]'``).

References
----------
- V. S. Iyengar. Transforming data to satisfy privacy constraints. KDD 2002 (classifiers
  trained on generalized data as the measure of its usefulness).
- F. Prasser, J. Eicher, H. Spengler, R. Bild, K. A. Kuhn. Flexible data anonymization
  using ARX — current status and challenges ahead. Software: Practice and Experience
  50(7), 2020 (ARX's classification-based utility evaluation).
- S. Ruggieri. Using t-closeness anonymity to control for non-discrimination. Trans.
  Data Privacy 7(2), 2014 (the discrimination measures and their 4-fold tables).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np
import scipy.sparse as sp

from ..._memory import check_memory
from ..._validation import check_fraction, check_option, check_random_state
from ...exceptions import FairanonError, InvalidParameterError, SchemaError
from .. import measures as M
from ..metrics.classes import _Prepared
from ..metrics.fairness import measure_name
from .encoding import label_weights, numeric_reading, released_attributes

__all__ = [
    "CLASSIFIERS",
    "ClassificationUtility",
    "MissingDependencyError",
    "ModelScore",
    "check_classifier",
    "classification_utility",
    "stratified_split",
]

#: The classifiers named by a string (any scikit-learn classifier object is taken too).
CLASSIFIERS = ("logistic", "tree", "forest")


class MissingDependencyError(FairanonError, ImportError):
    """An optional dependency is not installed; the message names the extra to install."""


def _sklearn():
    try:
        import sklearn  # noqa: F401
    except ImportError:
        raise MissingDependencyError(
            "The classification utility needs scikit-learn, which is not installed: install the "
            "'ml' extra (pip install 'fairanon[ml]', or pip install scikit-learn), or pass "
            "classifier=None for the distributions only."
        ) from None
    import sklearn

    return sklearn


@dataclass(frozen=True)
class ModelScore:
    """One model's figures on the held-out original records.

    Attributes
    ----------
    trained_on : str
        ``"original"``, ``"release"``, or ``"truth"`` (the held-out decisions
        themselves: discrimination only).
    accuracy, auc : float or None
    negative_rate : float
        The share of held-out records with a (predicted) negative decision.
    discrimination : dict
        Measure name -> value (float; ``inf`` when unbounded); empty without a
        protected attribute.
    counts : tuple of int
        The 4-fold table (a, b, c, d): protected & negative, protected & positive,
        unprotected & negative, unprotected & positive.
    """

    trained_on: str
    accuracy: float | None
    auc: float | None
    negative_rate: float
    discrimination: dict = field(default_factory=dict)
    counts: tuple[int, ...] = ()

    def to_dict(self) -> dict:
        return {
            "trained_on": self.trained_on,
            "accuracy": self.accuracy,
            "auc": self.auc,
            "negative_rate": self.negative_rate,
            "discrimination": dict(self.discrimination),
            "counts": list(self.counts),
        }


@dataclass(frozen=True)
class ClassificationUtility:
    """The classification utility of a release (see the module docstring).

    Attributes
    ----------
    classifier : str
    target : str
        The decision attribute; the models predict its negative value.
    negative : str
    features : tuple of str
    n_train, n_test : int
    seed : int or None
    majority_accuracy : float
        Accuracy on the held-out records of always predicting the training majority.
    original, release, truth : ModelScore
    measures : tuple of str
    elapsed_s : float
    """

    classifier: str
    target: str
    negative: str
    features: tuple[str, ...]
    n_train: int
    n_test: int
    seed: int | None
    majority_accuracy: float
    original: ModelScore
    release: ModelScore
    truth: ModelScore
    measures: tuple[str, ...]
    protected: str | None
    elapsed_s: float = 0.0

    @property
    def accuracy_loss(self) -> float:
        """Accuracy of the original model minus that of the release model."""
        return self.original.accuracy - self.release.accuracy

    def to_dict(self) -> dict:
        return {
            "classifier": self.classifier,
            "target": self.target,
            "negative": self.negative,
            "protected": self.protected,
            "features": list(self.features),
            "n_train": self.n_train,
            "n_test": self.n_test,
            "seed": self.seed,
            "measures": list(self.measures),
            "majority_accuracy": self.majority_accuracy,
            "accuracy_loss": self.accuracy_loss,
            "models": [s.to_dict() for s in (self.original, self.release, self.truth)],
            "elapsed_s": self.elapsed_s,
        }


def check_classifier(classifier, instance, test_size=0.3, measures=("RD", "ER")) -> tuple[Fraction, tuple[str, ...]]:
    """Refuse, before any work, a classifier that is not one of :data:`CLASSIFIERS` or an
    object with ``fit`` and ``predict_proba``, an instance without a decision attribute,
    a missing scikit-learn, a test size outside (0, 1) and an unknown measure; returns
    the test size as a Fraction and the measures' canonical names."""
    test_size = check_fraction(test_size, "test_size", "utility", low=0, high=1, low_open=True,
                               high_open=True)
    if isinstance(measures, str):
        measures = (measures,)
    measures = tuple(dict.fromkeys(measure_name(m) for m in measures))
    if not measures:
        raise InvalidParameterError("The 'measures' parameter of utility is empty; give e.g. ('RD', 'ER').")
    if isinstance(classifier, str):
        check_option(classifier, "classifier", "utility", CLASSIFIERS)
    elif not (hasattr(classifier, "fit") and hasattr(classifier, "predict_proba")):
        raise InvalidParameterError(
            f"The 'classifier' parameter of utility must be one of {', '.join(map(repr, CLASSIFIERS))}, "
            f"None, or a scikit-learn classifier with fit and predict_proba. Got {classifier!r} instead."
        )
    if instance.schema.decision is None:
        raise SchemaError(
            f"Instance {instance.name!r} has no decision attribute, so there is nothing to classify: "
            "give one the role 'decision', or pass classifier=None for the distributions only."
        )
    _sklearn()
    return test_size, measures


def _estimator(classifier, random_state: int):
    sklearn = _sklearn()
    if not isinstance(classifier, str):
        return sklearn.base.clone(classifier), type(classifier).__name__
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import MaxAbsScaler
    from sklearn.tree import DecisionTreeClassifier

    if classifier == "logistic":
        return make_pipeline(MaxAbsScaler(), LogisticRegression(solver="newton-cholesky", max_iter=1000)), classifier
    if classifier == "tree":
        return DecisionTreeClassifier(min_samples_leaf=5, random_state=random_state), classifier
    return RandomForestClassifier(n_estimators=100, min_samples_leaf=5, random_state=random_state, n_jobs=1), classifier


def stratified_split(y: np.ndarray, test_size: Fraction, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Row indices (train, test), sorted: per value of `y`, round(test_size · count)
    of its rows drawn without replacement into the test part.

    >>> tr, te = stratified_split(np.array([0, 0, 0, 0, 1, 1]), Fraction(1, 2), np.random.default_rng(0))
    >>> len(te), sorted(np.array([0, 0, 0, 0, 1, 1])[te].tolist())
    (3, [0, 0, 1])
    """
    test = []
    for value in np.unique(y):
        rows = np.flatnonzero(y == value)
        take = int(round(test_size * len(rows)))
        test.append(rng.permutation(rows)[:take])
    test = np.sort(np.concatenate(test)) if test else np.zeros(0, dtype=np.int64)
    is_test = np.zeros(len(y), dtype=bool)
    is_test[test] = True
    return np.flatnonzero(~is_test), test


def _one_hot(codes: np.ndarray, n_columns: int) -> sp.csr_matrix:
    n = len(codes)
    return sp.csr_matrix((np.ones(n), (np.arange(n), codes)), shape=(n, n_columns))


def _features(p: _Prepared, names: Sequence[str], train: np.ndarray, test: np.ndarray):
    """(original train, original test, release train, release test) feature matrices."""
    blocks = {"ot": [], "oe": [], "rt": [], "re": []}
    for name in names:
        col = p.column(name)
        if col.numeric:
            orig = np.asarray(col.orig, dtype=float)
            mid = numeric_reading(col.covers, col.values).mid[col.codes]
            blocks["ot"].append(sp.csr_matrix(orig[train, None]))
            blocks["oe"].append(sp.csr_matrix(orig[test, None]))
            blocks["rt"].append(sp.csr_matrix(mid[train, None]))
            blocks["re"].append(sp.csr_matrix(orig[test, None]))
            continue
        m = len(col.attr.domain)
        orig = col.orig.astype(np.int64)
        blocks["ot"].append(_one_hot(orig[train], m))
        blocks["oe"].append(_one_hot(orig[test], m))
        codes = col.codes.astype(np.int64)
        rows = np.bincount(codes[train], minlength=col.n_labels)
        used = np.flatnonzero(rows)
        renumber = np.full(col.n_labels, -1, dtype=np.int64)
        renumber[used] = np.arange(len(used))
        blocks["rt"].append(_one_hot(renumber[codes[train]], len(used)))
        # The label rows (1 byte a cell) and the values-by-labels weights (8 bytes, twice).
        check_memory(
            17 * len(used) * m,
            f"the classification encoding of the {len(used):,} released labels of {col.name!r} over "
            f"its {m:,} values",
            f"generalize {col.name!r} to fewer distinct values, or leave out the classifier (classifier=None)",
        )
        weights = label_weights(col.covers.mask[used], col.active, rows[used])
        blocks["re"].append(weights[orig[test]])
    return tuple(sp.hstack(blocks[k], format="csr") for k in ("ot", "oe", "rt", "re"))


def _fourfold(protected: np.ndarray, negative: np.ndarray) -> tuple[int, int, int, int]:
    a = int(np.sum(protected & negative))
    b = int(np.sum(protected & ~negative))
    c = int(np.sum(~protected & negative))
    d = int(np.sum(~protected & ~negative))
    return a, b, c, d


def _discrimination(protected, negative, measures) -> tuple[dict, tuple[int, ...]]:
    if protected is None:
        return {}, ()
    a, b, c, d = _fourfold(protected, negative)
    out = {}
    for m in measures:
        value = M.discrimination_exact(m, a, b, c, d, a + c, a + b + c + d)
        out[m] = float(value) if not (isinstance(value, float) and math.isinf(value)) else math.inf
    return out, (a, b, c, d)


def _score(trained_on, model, X, y, protected, measures) -> ModelScore:
    from sklearn.metrics import roc_auc_score

    classes = list(model.classes_)
    proba = model.predict_proba(X)[:, classes.index(True)] if True in classes else np.zeros(X.shape[0])
    predicted = np.asarray(model.predict(X), dtype=bool)
    disc, counts = _discrimination(protected, predicted, measures)
    return ModelScore(
        trained_on=trained_on,
        accuracy=float(np.mean(predicted == y)),
        auc=float(roc_auc_score(y, proba)),
        negative_rate=float(predicted.mean()),
        discrimination=disc,
        counts=counts,
    )


def classification_utility(
    p: _Prepared,
    *,
    classifier="logistic",
    features: Sequence[str] | None = None,
    test_size=0.3,
    measures: Sequence[str] = ("RD", "ER"),
    seed=0,
) -> ClassificationUtility:
    """The classification utility of a prepared release (see the module docstring).

    Parameters
    ----------
    p : _Prepared
        The release aligned with its instance (:func:`fairanon.models.metrics.classes._prepare`).
    classifier : {"logistic", "tree", "forest"} or scikit-learn classifier
        Logistic regression (Newton-Cholesky, L2 penalty C = 1, features scaled by their
        largest absolute value), a
        decision tree or a random forest of 100 trees (leaves of at least 5 records),
        or any classifier with ``fit`` and ``predict_proba`` (cloned for each model).
    features : sequence of str, optional
        Attributes the models read; default: every released attribute but the decision.
    test_size : float or Fraction in (0, 1)
        The held-out share of each decision value's records.
    measures : sequence of str
        Discrimination measures of the predictions (names or aliases: ``elift`` = ER).
    seed : int, numpy Generator or None
        Draws the split and the classifiers' own randomness.
    """
    import time

    started = time.perf_counter()
    instance = p.instance
    schema = instance.schema
    test_size, measures = check_classifier(classifier, instance, test_size, measures)
    target = schema.decision
    table = p.release.table
    if features is None:
        features = [a for a in schema.released if a != target and a in table.columns]
    else:
        features = released_attributes(features, "features", instance, table)
        if target in features:
            raise InvalidParameterError(
                f"The 'features' parameter of utility names the decision attribute {target!r}, "
                "which the models predict."
            )
    if not features:
        raise InvalidParameterError("The 'features' parameter of utility is empty: the models need a feature.")
    rng = check_random_state(seed)
    random_state = int(rng.integers(2**31 - 1))
    model, classifier_name = _estimator(classifier, random_state)

    attr = schema[target]
    negative_code = attr.domain.index(attr.negative)
    y = _original_negative(p, target, negative_code)
    n_negative = int(y.sum())
    if n_negative < 2 or len(y) - n_negative < 2:
        raise InvalidParameterError(
            f"The classification utility needs at least two records of each decision value; "
            f"instance {instance.name!r} has {n_negative} negative and {len(y) - n_negative} other."
        )
    train, test = stratified_split(y, test_size, rng)
    for part, rows in (("training", train), ("held-out", test)):
        if y[rows].all() or not y[rows].any():
            raise InvalidParameterError(
                f"The {part} part ({len(rows)} records at test_size={float(test_size):g}) holds one decision "
                "value only; choose a test_size that leaves both values in each part."
            )
    y_release = _released_negative(p, target, attr.negative)
    X_ot, X_oe, X_rt, X_re = _features(p, features, train, test)
    protected = None
    if schema.protected is not None:
        protected = _aligned(p, instance.protected_mask())[test]

    from sklearn.base import clone

    original_model = clone(model).fit(X_ot, y[train])
    release_model = clone(model).fit(X_rt, y_release[train])
    y_test = y[test]
    majority = bool(y[train].mean() > 0.5)
    disc, counts = _discrimination(protected, y_test, measures)
    return ClassificationUtility(
        classifier=classifier_name,
        target=target,
        negative=attr.negative,
        features=tuple(features),
        n_train=len(train),
        n_test=len(test),
        seed=seed if seed is None or isinstance(seed, numbers.Integral) else None,
        majority_accuracy=float(np.mean(y_test == majority)),
        original=_score("original", original_model, X_oe, y_test, protected, measures),
        release=_score("release", release_model, X_re, y_test, protected, measures),
        truth=ModelScore("truth", None, None, float(y_test.mean()), disc, counts),
        measures=measures,
        protected=schema.protected,
        elapsed_s=time.perf_counter() - started,
    )


def _aligned(p: _Prepared, values: np.ndarray) -> np.ndarray:
    """Per-instance-row values in the release's row order."""
    return values if p.pos is None else values[p.pos]


def _original_negative(p: _Prepared, target: str, negative_code: int) -> np.ndarray:
    return _aligned(p, p.instance.codes(target) == negative_code)


def _released_negative(p: _Prepared, target: str, negative: str) -> np.ndarray:
    """Per release row: is the released decision the negative value? (the original
    decision when the release leaves the column out)"""
    table = p.release.table
    if target not in table.columns:
        attr = p.instance.schema[target]
        return _original_negative(p, target, attr.domain.index(negative))
    col = p.column(target)
    return np.array([label == negative for label in col.labels], dtype=bool)[col.codes]
