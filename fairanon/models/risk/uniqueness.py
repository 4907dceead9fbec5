"""Uniqueness: sample uniques, and population uniques estimated from the sample.

A *sample unique* is a record alone in its class (f_j = 1); a *population unique* a
record alone in its class in the population the table was drawn from (F_j = 1). The
number of population uniques U is estimated from the frequencies of frequencies of the
table — c_i classes of size i, J = Σ_i c_i classes over n = Σ_i i·c_i records — and a
population model: a population of N records sampled at fraction π = n/N
(:class:`~fairanon.models.risk.population.PopulationModel`). Three estimators, as ARX
implements them, and Dankar et al.'s rule for choosing among them:

- **Zayatz** (L. V. Zayatz. Estimation of the percent of unique population elements on
  a microdata file using the sample. Statistical Research Division Report Census/SRD/RR-91/08,
  US Bureau of the Census, 1991): the population's class sizes are taken to be
  distributed as the sample's, P(F = i) = c_i / J, and a class of size i yields exactly
  one sampled record with the hypergeometric probability
  h_i = i·C(N−i, n−1) / C(N, n). Then

      P(F = 1 | f = 1) = (c_1 h_1) / Σ_i c_i h_i,      Û = c_1 · P(F = 1 | f = 1) / h_1,

  h_1 = n/N being the model's sampling fraction (π, or n/round(n/π) when N comes from
  π: dividing by π itself gave Û > N when every record is a sample unique and n/π
  rounds down).

- **Pitman** (J. Pitman. Some developments of the Blackwell-MacQueen urn scheme. In
  Statistics, Probability and Game Theory, IMS Lecture Notes 30:245-267, 1996; applied to
  disclosure by N. Hoshino. Applying Pitman's sampling formula to microdata disclosure
  risk assessment. Journal of Official Statistics 17(4):499-520, 2001): the classes are
  the blocks of a two-parameter (α, θ) exchangeable partition, 0 ≤ α < 1, θ > −α. The
  sample's log-likelihood (Pitman's sampling formula) is

      ℓ(α, θ) = Σ_{i=1}^{J−1} ln(θ + iα) − Σ_{i=1}^{n−1} ln(θ + i)
                + Σ_i c_i Σ_{k=1}^{i−1} ln(k − α),

  maximized numerically; a sample of the partition is again such a partition, so the
  expected number of singletons among N records is

      Û = N · (θ + α)_{N−1} / (θ + 1)_{N−1}     ((x)_m the rising factorial),

  which Hoshino approximates for large N by Γ(θ + 1) / Γ(θ + α) · N^α. The maximum does
  not exist when every record is a sample unique (ℓ grows without bound in θ).

- **SNB** (G. Chen, S. Keller-McNulty. Estimation of identification disclosure risk in
  microdata. Journal of Official Statistics 14(1):79-95, 1998): the population's K
  non-empty classes have sizes F = 1 + G, G negative binomial with parameters (α, β),
  P(G = g) = C(g+α−1, g) β^α (1−β)^g, and each record is sampled with probability π.
  With d = (1−π)(1−β), the expected numbers of sample classes of sizes 1 and 2 are

      E c_1 = K π β^α (1−d)^{−α} (1 + α d / (1−d)),
      E c_2 = K α π² (1−β) β^α (2 − (1−α) d) / (2 (1−d)^{α+2}),

  solved for (α, β) with K estimated by Shlosser's estimator (P. J. Haas, J. F.
  Naughton, S. Seshadri, L. Stokes. Sampling-based estimation of the number of distinct
  values of an attribute. VLDB 1995)
  K̂ = J + c_1 Σ_i (1−π)^i c_i / Σ_i i π (1−π)^{i−1} c_i; then Û = K̂ β^α (the expected
  classes of size 1). ARX's second equation multiplies by (1−d)^{α+2} where the
  derivation above divides; fairanon follows the derivation.

- **Dankar et al.'s rule** (F. K. Dankar, K. El Emam, A. Neisa, T. Roffey. Estimating
  the re-identification risk of clinical data sets. BMC Medical Informatics and Decision
  Making 12:66, 2012), as ARX applies it: no sample unique, no estimated population
  unique; π ≤ 0.1: Pitman when its fit succeeds, else Zayatz; π > 0.1: the smaller of
  SNB and Zayatz when SNB's fit succeeds, else Zayatz.

An estimator whose fit fails reports ``fitted=False`` and why, and no number: 0 is
never reported as an estimate it did not make.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np
from scipy import special

from ...exceptions import InvalidParameterError
from .classes import RiskClasses
from .population import PopulationModel

__all__ = [
    "ESTIMATORS",
    "Estimate",
    "Uniqueness",
    "dankar",
    "pitman",
    "snb",
    "uniqueness",
    "zayatz",
]

#: The population-uniqueness estimators, by name.
ESTIMATORS = ("pitman", "zayatz", "snb", "dankar")


@dataclass(frozen=True)
class Estimate:
    """An estimate of the number of population uniques.

    Attributes
    ----------
    model : str
        "pitman", "zayatz", "snb" or "dankar".
    fitted : bool
        False when the model could not be fitted; `uniques` is then None.
    uniques : float or None
        Û, the estimated population uniques.
    share : float or None
        Û / N.
    detail : str
        Why the fit failed, or (dankar) which model the rule chose.
    parameters : dict
        The fitted parameters.
    """

    model: str
    fitted: bool
    uniques: float | None = None
    share: float | None = None
    detail: str = ""
    parameters: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"model": self.model, "fitted": self.fitted, "uniques": self.uniques, "share": self.share,
                "detail": self.detail, "parameters": self.parameters}


def _failed(model: str, why: str, **parameters) -> Estimate:
    return Estimate(model, False, None, None, why, {k: float(v) for k, v in parameters.items()})


def _fitted(model: str, uniques: float, population: PopulationModel, detail: str = "", **parameters) -> Estimate:
    if not np.isfinite(uniques) or uniques < 0 or uniques > population.population_size:
        return _failed(model, f"the fitted model gives {uniques!r} uniques, outside [0, N]", **parameters)
    return Estimate(model, True, float(uniques), float(uniques) / population.population_size, detail,
                    {k: float(v) for k, v in parameters.items()})


def _check(sizes: np.ndarray, counts: np.ndarray, population: PopulationModel) -> tuple[np.ndarray, np.ndarray]:
    sizes = np.asarray(sizes, dtype=np.int64)
    counts = np.asarray(counts, dtype=np.int64)
    if len(sizes) != len(counts) or (sizes < 1).any() or (counts < 0).any():
        raise InvalidParameterError("Frequencies of frequencies need sizes >= 1 and counts >= 0 of one length.")
    n = int((sizes * counts).sum())
    if not isinstance(population, PopulationModel):
        raise InvalidParameterError(
            f"The 'population' parameter must be a PopulationModel. Got {type(population).__name__} instead."
        )
    if n != population.sample_size:
        raise InvalidParameterError(
            f"The frequencies hold {n} records but the population model a sample of {population.sample_size}."
        )
    return sizes, counts


def _c(sizes, counts, i: int) -> int:
    return int(counts[sizes == i].sum())


# ---------------------------------------------------------------------- Zayatz
def zayatz(sizes, counts, population: PopulationModel) -> Estimate:
    """Zayatz's estimate of the population uniques (module docstring, first model).

    Parameters
    ----------
    sizes, counts : array-like of int
        The distinct class sizes i and the number c_i of classes of each size.
    population : PopulationModel
    """
    sizes, counts = _check(sizes, counts, population)
    c1 = _c(sizes, counts, 1)
    if c1 == 0:
        return _fitted("zayatz", 0.0, population, "no sample unique", conditional=0.0)
    N, n = population.population_size, population.sample_size
    # scipy.stats and scipy.optimize take a second each to import: only the models
    # that fit need them, not every method that imports the risk figures.
    from scipy import stats

    # ln h_i = ln P(exactly one of the i records of a class is sampled), hypergeometric.
    log_h = stats.hypergeom.logpmf(1, N, np.minimum(sizes, N), n)
    with np.errstate(divide="ignore"):
        log_w = np.log(counts.astype(float)) + log_h
    log_total = special.logsumexp(log_w)
    if not np.isfinite(log_total):
        return _failed("zayatz", "no class of the sample can yield a single sampled record under the model")
    conditional = float(np.exp(np.log(c1) + log_h[sizes == 1][0] - log_total))
    uniques = c1 * conditional * N / n  # / h_1, the model's own n/N (module docstring)
    return _fitted("zayatz", uniques, population, conditional=conditional)


# ---------------------------------------------------------------------- Pitman
def _pitman_loglik(alpha: float, theta: float, sizes, counts, J: int, n: int) -> float:
    # Σ_{i=1}^{J−1} ln(θ + iα) as (J−1) ln θ + Σ log1p(iα/θ), term by term: the
    # difference of log-gammas it equals, ln Γ(θ/α + J) − ln Γ(θ/α + 1), cancels to
    # 1e-8 as α → 0, enough to rank a point of α = 2e-6 above the maximum at α = 0.
    steps = np.arange(1, J, dtype=float)
    if theta > 0:
        first = (J - 1) * np.log(theta) + float(np.sum(np.log1p(steps * (alpha / theta))))
    else:  # -α < θ <= 0: every θ + iα is still > 0
        first = float(np.sum(np.log(theta + alpha * steps)))
    second = special.gammaln(theta + n) - special.gammaln(theta + 1)
    third = float(np.sum(counts * (special.gammaln(sizes - alpha) - special.gammaln(1 - alpha))))
    return float(first - second + third)


def pitman(sizes, counts, population: PopulationModel) -> Estimate:
    """Pitman's (Hoshino's) estimate of the population uniques (module docstring, second
    model): (α, θ) by maximum likelihood, then N (θ+α)_{N−1} / (θ+1)_{N−1}.

    The likelihood is maximized over α = 1/(1+e^{−a}) ∈ (0, 1) and θ = e^{b} − α by the
    Nelder-Mead simplex from Hoshino's moment-based start (as ARX) and two neutral
    starts; the fit fails when no run converges, the maximum runs off to α → 1 or
    θ → ∞, or every record is a sample unique. A maximum at α → 0 is Ewens's
    one-parameter model, a valid fit.
    """
    sizes, counts = _check(sizes, counts, population)
    from scipy import optimize  # see zayatz
    J = int(counts.sum())
    n = population.sample_size
    N = population.population_size
    c1, c2 = _c(sizes, counts, 1), _c(sizes, counts, 2)
    if c1 == n:
        return _failed("pitman", "every record is a sample unique: the likelihood has no maximum")
    if J == 1:
        return _failed("pitman", "a single class: the likelihood has no maximum in θ > −α")

    def negative(x):
        alpha = special.expit(x[0])
        theta = np.exp(x[1]) - alpha
        value = _pitman_loglik(alpha, theta, sizes, counts, J, n)
        return -value if np.isfinite(value) else 1e300

    # Start: Hoshino's moment estimates (ARX's), else a neutral point.
    c2s = c2 if c2 else 1
    cc = c1 * (c1 - 1) / c2s
    denominator = (2 * c1 * J + c1 * cc) - n * cc
    t0 = ((n * J * cc) - c1 * (n - 1) * (2 * J + cc)) / denominator if denominator else np.nan
    a0 = (t0 * (c1 - n) + (n - 1) * c1) / (n * J) if np.isfinite(t0) else np.nan
    if not (np.isfinite(t0) and np.isfinite(a0) and 0 < a0 < 1 and t0 + a0 > 0):
        a0, t0 = 0.5, max(float(J), 1.0)
    starts = [(special.logit(a0), np.log(t0 + a0)), (0.0, np.log(float(J) + 0.5)), (-3.0, np.log(float(J) + 0.5))]
    best = None
    for start in starts:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore", RuntimeWarning)
            res = optimize.minimize(negative, np.array(start, dtype=float), method="Nelder-Mead",
                                    options={"xatol": 1e-9, "fatol": 1e-9, "maxiter": 5000})
        if res.success and np.isfinite(res.fun) and (best is None or res.fun < best.fun):
            best = res
    if best is None:
        return _failed("pitman", "the likelihood maximization did not converge")
    alpha = float(special.expit(best.x[0]))
    theta = float(np.exp(best.x[1]) - alpha)
    if best.x[1] >= 60.0 or best.x[0] >= 40.0:
        return _failed("pitman", "the likelihood grows without bound (θ or α at the border)", alpha=alpha, theta=theta)
    # The simplex stops short of a maximum at α = 0 (the likelihood is flat towards it):
    # Ewens's own maximum, θ solving Σ_{i<n} θ/(θ+i) = J exactly, stands unless the
    # simplex found more by more than the sums' rounding (about 1e-15 of the
    # log-likelihood; 1e-9 of it, 2.4e-3 at 288,000 records, threw away a maximum at
    # α = 3.9e-4 that beat α = 0 by 1.5e-3).
    ewens = _ewens_theta(J, n, optimize)
    rounding = 1e-13 * max(1.0, abs(best.fun))
    if _pitman_loglik(0.0, ewens, sizes, counts, J, n) >= -best.fun - rounding:
        alpha, theta = 0.0, ewens
    # N (θ+α)_{N−1}/(θ+1)_{N−1} = N Γ(θ+α+N−1) Γ(θ+1) / (Γ(θ+α) Γ(θ+N))
    log_u = (np.log(N) + special.gammaln(theta + alpha + N - 1) + special.gammaln(theta + 1)
             - special.gammaln(theta + alpha) - special.gammaln(theta + N))
    asymptotic = float(np.exp(special.gammaln(theta + 1) - special.gammaln(theta + alpha) + alpha * np.log(N)))
    return _fitted("pitman", float(np.exp(log_u)), population, alpha=alpha, theta=theta, hoshino=asymptotic)


def _ewens_theta(J: int, n: int, optimize) -> float:
    """The maximum-likelihood θ of Ewens's model (α = 0) for J classes over n records,
    1 < J < n: the root of Σ_{i=0}^{n−1} θ/(θ+i) = J, which rises from 1 to n."""
    i = np.arange(n, dtype=float)

    def excess(log_theta: float) -> float:
        theta = np.exp(log_theta)
        return float(np.sum(theta / (theta + i))) - J

    lo, hi = -50.0, 60.0  # ln θ: the sum is within 1e-20 of 1 and of n at the ends
    return float(np.exp(optimize.brentq(excess, lo, hi, xtol=1e-14, rtol=1e-15)))


# ------------------------------------------------------------------------- SNB
def shlosser(sizes, counts, pi: float) -> float:
    """Shlosser's estimate of the number of non-empty population classes,
    K̂ = J + c_1 Σ_i (1−π)^i c_i / Σ_i i π (1−π)^{i−1} c_i (Haas et al., VLDB 1995)."""
    sizes = np.asarray(sizes, dtype=float)
    counts = np.asarray(counts, dtype=float)
    J = counts.sum()
    c1 = counts[sizes == 1].sum()
    q = 1.0 - pi
    with np.errstate(under="ignore"):
        num = np.sum(np.power(q, sizes) * counts)
        den = np.sum(sizes * pi * np.power(q, sizes - 1) * counts)
    return float(J + c1 * num / den) if den > 0 else float(J)


def _snb_expected(alpha: float, beta: float, K: float, pi: float) -> tuple[float, float]:
    d = (1 - pi) * (1 - beta)
    e1 = K * pi * (beta / (1 - d)) ** alpha * (1 + alpha * d / (1 - d))
    e2 = K * alpha * pi * pi * (1 - beta) * beta ** alpha * (2 - (1 - alpha) * d) / (2 * (1 - d) ** (alpha + 2))
    return e1, e2


def snb(sizes, counts, population: PopulationModel, *, classes: str = "model") -> Estimate:
    """The SNB estimate of the population uniques (module docstring, third model).

    Parameters
    ----------
    sizes, counts : array-like of int
    population : PopulationModel
    classes : {"model", "shlosser"}, default="model"
        How K, the number of non-empty population classes, is estimated. "shlosser":
        Shlosser's estimator, as ARX; "model": from the model itself, the expected
        number of sample classes E J = K (1 − (1−π) β^α (1−d)^{−α}) set to J, so the
        three moment equations (J, c_1, c_2) are solved for (K, α, β) together.

    The equations are solved for (α > 0, 0 < β < 1) by least squares in relative
    residuals, from a grid of starts; the fit fails unless they are met to 1e-6.
    """
    from scipy import optimize  # see zayatz

    sizes, counts = _check(sizes, counts, population)
    if classes not in ("model", "shlosser"):
        raise InvalidParameterError(
            f"The 'classes' parameter of snb must be one of 'model', 'shlosser'. Got {classes!r} instead."
        )
    c1, c2 = _c(sizes, counts, 1), _c(sizes, counts, 2)
    J = int(counts.sum())
    pi = float(population.sampling_fraction)
    if c1 == 0:
        return _failed("snb", "no sample unique: the first equation has no solution with K > 0")
    if c2 == 0:
        return _failed("snb", "no class of size 2: the second equation has no solution with α > 0")
    if pi >= 1:
        return _fitted("snb", float(c1), population, "the table is the population")
    shl = shlosser(sizes, counts, pi)

    def k_of(alpha, beta):
        if classes == "shlosser":
            return shl
        d = (1 - pi) * (1 - beta)
        return J / (1 - (1 - pi) * (beta / (1 - d)) ** alpha)

    def residuals(x):
        alpha, beta = np.exp(x[0]), special.expit(x[1])
        e1, e2 = _snb_expected(alpha, beta, k_of(alpha, beta), pi)
        return np.array([e1 / c1 - 1.0, e2 / c2 - 1.0])

    best = None
    for a0 in (1.0, 0.1, 10.0):
        for b0 in (0.5, 0.1, 0.9, 0.01):
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore", RuntimeWarning)
                try:
                    res = optimize.least_squares(residuals, np.array([np.log(a0), special.logit(b0)]),
                                                 xtol=1e-14, ftol=1e-14, gtol=1e-14, max_nfev=2000)
                except (ValueError, FloatingPointError):
                    continue
            if np.all(np.isfinite(res.fun)) and (best is None or res.cost < best.cost):
                best = res
        if best is not None and np.max(np.abs(best.fun)) < 1e-9:
            break
    if best is None or np.max(np.abs(best.fun)) > 1e-6:
        worst = None if best is None else float(np.max(np.abs(best.fun)))
        return _failed("snb", f"the moment equations have no solution with α > 0, 0 < β < 1 "
                              f"(best relative residual {worst})")
    alpha, beta = float(np.exp(best.x[0])), float(special.expit(best.x[1]))
    K = k_of(alpha, beta)
    return _fitted("snb", K * beta ** alpha, population, alpha=alpha, beta=beta, K=K)


# ---------------------------------------------------------------------- Dankar
def dankar(sizes, counts, population: PopulationModel, *, estimates: dict | None = None) -> Estimate:
    """Dankar et al.'s decision rule (module docstring), from the estimates already
    computed (`estimates`, by model name) or computed here."""
    sizes, counts = _check(sizes, counts, population)
    estimates = dict(estimates or {})

    def get(name):
        if name not in estimates:
            estimates[name] = {"pitman": pitman, "zayatz": zayatz, "snb": snb}[name](sizes, counts, population)
        return estimates[name]

    if _c(sizes, counts, 1) == 0:
        return _fitted("dankar", 0.0, population, "no sample unique, so no population unique is estimated")
    pi = population.sampling_fraction
    if pi <= Fraction(1, 10):
        chosen = get("pitman")
        if not chosen.fitted:
            z = get("zayatz")
            chosen = z if z.fitted else None
            why = "π ≤ 0.1 and Pitman's fit failed: Zayatz"
        else:
            why = "π ≤ 0.1: Pitman"
    else:
        s, z = get("snb"), get("zayatz")
        if s.fitted and z.fitted:
            chosen = z if z.uniques < s.uniques else s
            why = f"π > 0.1: the smaller of SNB and Zayatz ({chosen.model})"
        else:
            chosen = z if z.fitted else None
            why = "π > 0.1 and SNB's fit failed: Zayatz"
    if chosen is None:
        return _failed("dankar", "none of the models the rule chooses from could be fitted")
    return Estimate("dankar", True, chosen.uniques, chosen.share, why, {"chosen": chosen.model})


@dataclass(frozen=True)
class Uniqueness:
    """Sample uniques and the population-uniques estimates.

    Attributes
    ----------
    sample_uniques : int
        Records alone in their class (the suppressed block counts when it holds one record).
    sample_share : Fraction
        sample_uniques / n.
    population : PopulationModel or None
    estimates : dict
        By model name: an :class:`Estimate` (empty without a population model).
    """

    sample_uniques: int
    sample_share: Fraction
    population: PopulationModel | None = None
    estimates: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {
            "sample_uniques": self.sample_uniques,
            "sample_unique_share": {"value": float(self.sample_share), "exact": str(self.sample_share)},
            "population_model": None if self.population is None else self.population.to_dict(),
            "population_uniques": {name: est.to_dict() for name, est in self.estimates.items()},
        }


def check_models(models, caller: str) -> tuple[str, ...]:
    """`models` as a tuple of names of :data:`ESTIMATORS`.

    >>> check_models(["zayatz"], "risk")
    ('zayatz',)
    """
    if isinstance(models, str) or not hasattr(models, "__iter__"):
        raise InvalidParameterError(
            f"The 'models' parameter of {caller} must be a sequence of names of {ESTIMATORS}. "
            f"Got {models!r} instead."
        )
    models = tuple(models)
    unknown = [m for m in models if m not in ESTIMATORS]
    if unknown:
        raise InvalidParameterError(
            f"The 'models' parameter of {caller} must name models of {ESTIMATORS}. Got {unknown!r} instead."
        )
    return models


def uniqueness(classes: RiskClasses, population: PopulationModel | None = None,
               models=ESTIMATORS) -> Uniqueness:
    """Sample uniques of a regrouped table and, with a population model, the population
    uniques estimated by each of `models` (names from :data:`ESTIMATORS`)."""
    models = check_models(models, "uniqueness")
    sizes, counts = classes.frequencies
    c1 = _c(sizes, counts, 1)
    estimates = {}
    if population is not None:
        for name in models:
            if name != "dankar":
                estimates[name] = {"pitman": pitman, "zayatz": zayatz, "snb": snb}[name](sizes, counts, population)
        if "dankar" in models:
            estimates["dankar"] = dankar(sizes, counts, population, estimates=dict(estimates))
    return Uniqueness(c1, Fraction(c1, classes.n_records), population, estimates)
