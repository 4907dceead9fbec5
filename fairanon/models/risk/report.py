"""One call for every risk figure of a table: :func:`risk` and its :class:`RiskReport`."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from fractions import Fraction

from ..._validation import check_fraction, check_int, check_option
from ...exceptions import FairanonError, InvalidParameterError, SchemaError
from ...instances.instance import Instance
from ...instances.schema import Schema
from ...release import Release
from .classes import RiskClasses, risk_classes
from .disclosure import attribute_disclosure
from .individual import INDIVIDUAL_METHODS, IndividualRisk, individual_risk
from .population import PopulationModel, population_model
from .sample import JournalistRisk, SampleRisk, journalist_risk, sample_risk
from .suda import Suda, suda
from .uniqueness import ESTIMATORS, Uniqueness, check_models, uniqueness

__all__ = ["RiskReport", "release_risk", "risk", "risk_dict", "risk_options"]


@dataclass(frozen=True)
class RiskReport:
    """Every risk figure of a table (an instance, or a release of it).

    Attributes
    ----------
    instance : str
    released : bool
        Whether the figures are those of a release.
    sample : SampleRisk
        Prosecutor and marketer risk, records above the threshold, histogram.
    journalist : JournalistRisk or None
        Against a population table, when one is given.
    uniqueness : Uniqueness
        Sample uniques and, with a population model, population-uniques estimates.
    individual : IndividualRisk
    suda : Suda or None
        None when SUDA was not asked for (``suda_max_size=None``).
    disclosure : dict
        δ-disclosure and β-likeness per sensitive attribute.
    population : PopulationModel or None
    seconds : dict
        The time each part took.
    """

    instance: str
    released: bool
    sample: SampleRisk
    journalist: JournalistRisk | None
    uniqueness: Uniqueness
    individual: IndividualRisk
    suda: Suda | None
    disclosure: dict
    population: PopulationModel | None
    seconds: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        """A JSON-ready dict (exact ratios as {"value", "exact"}; no per-record arrays)."""
        journalist = self.journalist.to_dict() if self.journalist is not None else {
            "source": "individual risk (no population table)",
            "highest": self.individual.highest,
        }
        return {
            "instance": self.instance,
            "released": self.released,
            "population_model": None if self.population is None else self.population.to_dict(),
            "sample": self.sample.to_dict(),
            "journalist": journalist,
            "uniqueness": self.uniqueness.to_dict(),
            "individual": self.individual.to_dict(),
            "suda": None if self.suda is None else self.suda.to_dict(),
            "disclosure": {name: d.to_dict() for name, d in self.disclosure.items()},
            "seconds": dict(self.seconds),
        }

    def rows(self) -> list[tuple[str, str]]:
        """(figure, value) pairs, in the order :meth:`__str__` prints them."""
        s = self.sample
        out = [
            ("records", f"{s.n_records}"),
            ("classes", f"{s.n_classes}"
             + (f" (suppressed: {s.n_suppressed} records)" if s.n_suppressed else "")),
            ("prosecutor risk, highest", _ratio(s.highest)),
            ("records at the highest risk", f"{s.records_at_highest} in {s.classes_at_highest} class(es)"),
            ("prosecutor risk, average (marketer)", _ratio(s.average)),
        ]
        if s.threshold is not None:
            out.append((f"records above risk {s.threshold}",
                        f"{s.records_above} ({_share(s.records_above, s.n_records)})"))
        out.extend(_histogram_rows(s.histogram, s.n_records))
        u = self.uniqueness
        out.append(("sample uniques", f"{u.sample_uniques} ({_share(u.sample_uniques, s.n_records)})"))
        for name, est in u.estimates.items():
            if est.fitted:
                value = f"{est.uniques:.1f} ({100 * est.share:.4g} % of {self.population.population_size})"
                if name == "dankar":
                    value += f" [{est.detail}]"
            else:
                value = f"no estimate: {est.detail}"
            out.append((f"population uniques, {name}", value))
        if self.journalist is not None:
            j = self.journalist
            out.append(("journalist risk, highest", _ratio(j.highest)))
            out.append(("marketer risk (population table)", _ratio(j.marketer)))
        i = self.individual
        out.append((f"individual risk, highest [{i.source}]", f"{i.highest:.6g}"))
        out.append(("expected re-identifications", f"{i.expected_reidentifications:.6g}"))
        out.append(("global risk", f"{i.global_risk:.6g}"))
        if self.suda is not None:
            sd = self.suda
            out.append((f"MSUs up to size {sd.max_size}", f"{sd.n_msus} on {sd.records_with_msu} records; by size "
                        + ", ".join(f"{k}: {v}" for k, v in sd.by_size.items())))
            if sd.n_msus:
                top = sorted(sd.contributions.items(), key=lambda kv: -kv[1])
                out.append(("SUDA contribution", ", ".join(f"{a} {c:.1f} %" for a, c in top)))
            if sd.dis is not None and sd.dis.probability is not None:
                dis = sd.dis.to_dict()
                out.append(("DIS-SUDA", f"highest {dis['highest']:.4g}, expected correct matches "
                            f"{dis['expected_correct_matches']:.4g} (DIS probability {sd.dis.probability:.4g})"))
        for name, d in self.disclosure.items():
            delta = f"{d.delta:.4g}" if d.delta != float("inf") else "inf (a class lacks a value)"
            out.append((f"δ-disclosure of {name}", delta))
            out.append((f"β-likeness of {name}", f"{_ratio(d.beta)}; enhanced {'holds' if d.enhanced else 'fails'}"))
        return out

    def __str__(self) -> str:
        rows = self.rows()
        width = max(len(k) for k, _ in rows)
        head = f"Risk of {'a release of ' if self.released else ''}{self.instance!r}"
        return "\n".join([head] + [f"  {k:<{width}}  {v}" for k, v in rows])


def _histogram_rows(histogram: list[dict], n_records: int) -> list[tuple[str, str]]:
    """The non-empty bands ]lo, hi] of the risk histogram
    (:func:`~fairanon.models.risk.sample.risk_histogram`), each named by the class sizes
    it holds: lo < 1/f <= hi exactly when ceil(1/hi) <= f <= ceil(1/lo) - 1."""
    out = []
    for band in histogram:
        if not band["classes"]:
            continue
        lo, hi = Fraction(band["lo"]), Fraction(band["hi"])
        smallest = math.ceil(1 / hi)
        largest = math.ceil(1 / lo) - 1 if lo else None
        if smallest == largest:
            sizes = f"class size {smallest}"
        elif largest is None:
            sizes = f"class sizes {smallest} and more"
        else:
            sizes = f"class sizes {smallest}-{largest}"
        out.append((f"histogram: risk ]{_percent(lo)}, {_percent(hi)}] ({sizes})",
                    f"{band['records']} records ({_share(band['records'], n_records)}) "
                    f"in {band['classes']} class(es)"))
    return out


def _percent(x: Fraction) -> str:
    return f"{100 * float(x):.4g} %"


def _describe_classes(classes) -> str:
    if isinstance(classes, RiskClasses):
        return f"the classes of instance {getattr(classes.instance, 'name', None)!r}"
    return type(classes).__name__


def _ratio(x: Fraction) -> str:
    return f"{float(x):.6g}" + ("" if x.denominator == 1 else f" ({x})")


def _share(count: int, total: int) -> str:
    return f"{100 * count / total:.4g} %" if total else "0 %"


def risk(
    instance: Instance,
    release: Release | None = None,
    *,
    sampling_fraction=None,
    population_size=None,
    population=None,
    weights: str | bool | None = None,
    threshold=Fraction(1, 5),
    models=ESTIMATORS,
    individual_method: str = "exact",
    suda_max_size: int | None = 3,
    sensitive=None,
    classes: RiskClasses | None = None,
    classes_seconds: dict | None = None,
) -> RiskReport:
    """Every re-identification and attribute-disclosure risk figure of a table.

    Parameters
    ----------
    instance : Instance
        The original data; measured itself when `release` is None.
    release : Release, optional
        A release of `instance`: its classes are the records with equal released
        quasi-identifier values, as the verifier regroups them.
    sampling_fraction : rational in (0, 1], optional
        π: the table is a sample of a population of N = round(n/π) records.
    population_size : int, optional
        N instead of π (π = n/N). Without either, population uniques are not estimated.
    population : Instance or pandas.DataFrame, optional
        A population table with the quasi-identifiers' original values: journalist risk
        against it.
    weights : str or False, optional
        A numeric column of the instance holding sampling weights, for the individual
        risk (F_k = Σ w); default: the instance's weight attribute (role "weight"), if
        it has one; False: none, even when the instance has one.
    threshold : rational in [0, 1] or None, default=1/5
        Count the records whose prosecutor (and journalist, individual) risk is strictly
        above it.
    models : sequence of str, default=("pitman", "zayatz", "snb", "dankar")
        The population-uniqueness estimators.
    individual_method : {"exact", "sdcmicro"}, default="exact"
    suda_max_size : int or None, default=3
        The largest MSU size SUDA searches; None skips SUDA. With a population model,
        SUDA also gives the DIS-SUDA scores at its sampling fraction.
    sensitive : sequence of str, optional
        The attributes whose δ-disclosure and β-likeness are measured (default: the
        sensitive attributes, else the decision attribute).
    classes : RiskClasses, optional
        The table already regrouped into classes (the Dask engine's, from its
        verifier's class counts: :mod:`fairanon.distributed.risk`); `instance` and
        `release` are then not read again, but ``classes.instance`` must be `instance`.
    classes_seconds : dict, optional
        With `classes`: the seconds the regrouping took (``{"classes": s}``; on Dask also
        ``{"population": s}``, the count of a population table's combinations).

    Returns
    -------
    RiskReport

    Notes
    -----
    The suppressed records of a release (``*`` on every quasi-identifier) are one class,
    in every figure, as the verifier counts them for k (``docs/risk.md``).

    Examples
    --------
    >>> import fairanon as fa
    >>> inst = fa.load("diva_table1")
    >>> rep = fa.risk(inst, suda_max_size=None)
    >>> rep.sample.highest, rep.uniqueness.sample_uniques
    (Fraction(1, 1), 10)
    """
    caller = "risk"
    started = time.perf_counter()
    seconds = {}

    def lap(name):
        nonlocal started
        now = time.perf_counter()
        seconds[name] = now - started
        started = now

    if classes is None:
        classes = risk_classes(instance, release, caller=caller)
        lap("classes")
    else:
        # The schema, weights and sensitive attributes are read from `instance`: they must
        # be those of the table the classes regroup.
        if not isinstance(classes, RiskClasses) or classes.instance is not instance:
            raise InvalidParameterError(
                f"The 'classes' parameter of {caller} must be the RiskClasses of the instance passed "
                f"({getattr(instance, 'name', instance)!r}), from risk_classes(instance, release). "
                f"Got {_describe_classes(classes)} instead."
            )
        seconds.update(classes_seconds or {})
    checked = risk_options(instance.schema, sampling_fraction=sampling_fraction, population_size=population_size,
                           weights=weights, threshold=threshold, models=models,
                           individual_method=individual_method, suda_max_size=suda_max_size,
                           sensitive=sensitive, caller=caller)
    weights, t, models, targets = checked["weights"], checked["threshold"], checked["models"], checked["sensitive"]
    model = population_model(classes.n_records, sampling_fraction=sampling_fraction,
                             population_size=population_size, caller=caller)
    sample = sample_risk(classes, threshold=t)
    lap("sample")
    journalist = None
    if population is not None:
        journalist = journalist_risk(classes, population, threshold=t)
        lap("journalist")
    unique = uniqueness(classes, model, models=models)
    lap("uniqueness")
    individual = individual_risk(classes, weights=weights, population=model, method=individual_method,
                                 threshold=None if t is None else float(t))
    lap("individual")
    found = None
    if suda_max_size is not None:
        found = suda(classes, max_size=suda_max_size,
                     sampling_fraction=None if model is None else model.sampling_fraction)
        lap("suda")
    disclosure = {name: attribute_disclosure(classes, name) for name in targets}
    if targets:
        lap("disclosure")
    return RiskReport(
        instance=instance.name,
        released=classes.released,
        sample=sample,
        journalist=journalist,
        uniqueness=unique,
        individual=individual,
        suda=found,
        disclosure=disclosure,
        population=model,
        seconds=seconds,
    )


def risk_options(
    schema: Schema,
    *,
    sampling_fraction=None,
    population_size=None,
    weights: str | bool | None = None,
    threshold=Fraction(1, 5),
    models=ESTIMATORS,
    individual_method: str = "exact",
    suda_max_size: int | None = 3,
    sensitive=None,
    caller: str = "risk",
) -> dict:
    """Every option of :func:`risk` checked against the instance's `schema` before any
    table is read (the Dask engine checks them before its passes), as :func:`risk`
    reads them: ``weights`` (the weight column, or None), ``threshold`` (a Fraction
    or None), ``models`` (a tuple), ``sensitive`` (the attributes whose disclosure is
    measured). A population size is checked against the table's records later, when
    they are counted.

    Raises
    ------
    InvalidParameterError
        A value of the wrong type or out of range, naming the parameter and the value.
    SchemaError
        A `sensitive` name that is not an attribute of the instance.
    """
    if weights is None:
        weights = schema.weight
    elif weights is False:
        weights = None
    elif not isinstance(weights, str):
        raise InvalidParameterError(
            f"The 'weights' parameter of {caller} must be a column name, False or None. Got {weights!r} instead."
        )
    population_model(1, sampling_fraction=sampling_fraction, population_size=population_size, caller=caller)
    if suda_max_size is not None:
        check_int(suda_max_size, "suda_max_size", caller, low=1)
    check_option(individual_method, "individual_method", caller, INDIVIDUAL_METHODS)
    if sensitive is None:
        targets = tuple(schema.default_targets())
    elif isinstance(sensitive, str):
        targets = (sensitive,)
    elif hasattr(sensitive, "__iter__") and all(isinstance(name, str) for name in sensitive):
        targets = tuple(sensitive)
    else:
        raise InvalidParameterError(
            f"The 'sensitive' parameter of {caller} must be an attribute name or a sequence of them. "
            f"Got {sensitive!r} instead."
        )
    for name in targets:
        if name not in schema:
            raise SchemaError(
                f"The 'sensitive' parameter of {caller} names {name!r}, not an attribute of the instance."
            )
    return {
        "weights": weights,
        "threshold": None if threshold is None else check_fraction(threshold, "threshold", caller, low=0, high=1),
        "models": check_models(models, caller),
        "sensitive": targets,
    }


#: Above these many records, :func:`release_risk` leaves SUDA out.
SUDA_ROWS = 1_000_000


def release_risk(instance: Instance, release: Release | None = None, **options) -> dict | None:
    """:func:`risk`'s report as a dict, for the reports the command line writes: None
    when the release holds no table, ``{"error": ...}`` when the figures cannot be
    computed (an unreadable label, say); SUDA (to size 3) only up to
    :data:`SUDA_ROWS` records unless `options` say otherwise."""
    table = instance.table if release is None else release.table
    if len(table) == 0 or not all(c in table.columns for c in instance.schema.qi):
        return None
    return risk_dict(lambda **o: risk(instance, release, **o), len(table), options)


def risk_dict(measure, n_records: int, options: dict) -> dict:
    """``measure(**options)`` (a :class:`RiskReport`) as a dict, or ``{"error": ...}``;
    SUDA to size 3 up to :data:`SUDA_ROWS` records unless `options` say otherwise:
    :func:`release_risk`'s rule, shared with the Dask engine."""
    options = {"suda_max_size": 3 if n_records <= SUDA_ROWS else None, **options}
    try:
        return measure(**options).to_dict()
    except FairanonError as exc:
        return {"error": str(exc)}
