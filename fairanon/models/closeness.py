"""The multiplicative distance of Domingo-Ferrer and Soria-Comas and stochastic
t-closeness: exact distances between a class's distribution and the table's, the
corrected bound of their Prop. 1, and the exact distance a Laplace or randomized-
response mask induces (docs/papers.md, Domingo-Ferrer and Soria-Comas, DS-1 and DS-7).

Thresholds are decided exactly: multiplicative distances of counts by integer
cross-multiplication, and the transcendental bound (|E| + (N - |E|) e^eps) / N by
comparing eps with a logarithm in :mod:`decimal` arithmetic of growing precision.
"""

from __future__ import annotations

import math
from decimal import Decimal, localcontext
from fractions import Fraction

import numpy as np

__all__ = [
    "epsilon_for",
    "epsilon_from_closeness",
    "laplace_mixture_distance",
    "min_class_size",
    "multiplicative_distance",
    "multiplicative_distance_exact",
    "multiplicative_within",
    "randomized_response_distance",
    "randomized_response_keep",
    "stochastic_bound",
    "stochastic_bound_within",
]


# ------------------------------------------------------------------ Def. 4 / Prop. 2
def multiplicative_distance(counts: np.ndarray, global_counts: np.ndarray) -> np.ndarray:
    """Distance of Def. 4 between each row's distribution and the global one (floats).

    For discrete distributions the sup over sets is attained at single values
    (Prop. 2, by the mediant inequality): max_v max(p_v / q_v, q_v / p_v), over the
    values with q_v > 0. A value present globally but absent from the row gives inf;
    an empty row gives 1.

    >>> multiplicative_distance(np.array([[2, 1, 1], [1, 2, 1], [0, 2, 2]]), np.array([4, 4, 4]))
    array([1.5, 1.5, inf])
    """
    counts = np.atleast_2d(np.asarray(counts, dtype=float))
    glob = np.asarray(global_counts, dtype=float)
    keep = glob > 0
    counts, glob = counts[:, keep], glob[keep]
    sizes = counts.sum(axis=1, keepdims=True)
    total = glob.sum()
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = (counts * total) / (sizes * glob)  # p_v / q_v
        worst = np.maximum(ratio, 1.0 / ratio).max(axis=1, initial=1.0)
    return np.where(sizes[:, 0] > 0, worst, 1.0)


def multiplicative_distance_exact(counts, global_counts) -> Fraction | float:
    """The exact distance of one row (a Fraction, or ``math.inf``).

    >>> multiplicative_distance_exact([132, 34, 34], [200, 200, 200])  # docs/papers.md, DS-4: 1.98
    Fraction(99, 50)
    """
    counts = [int(c) for c in counts]
    glob = [int(g) for g in global_counts]
    size, total = sum(counts), sum(glob)
    if size == 0:
        return Fraction(1)
    worst = Fraction(1)
    for c, g in zip(counts, glob):
        if g == 0:
            continue
        if c == 0:
            return math.inf
        ratio = Fraction(c * total, size * g)
        worst = max(worst, ratio, 1 / ratio)
    return worst


def multiplicative_within(counts: np.ndarray, global_counts: np.ndarray, t) -> np.ndarray:
    """Per row: distance <= t, in integers (both p_v <= t q_v and q_v <= t p_v for every
    value present globally; empty rows pass).

    >>> multiplicative_within(np.array([[2, 1, 1], [0, 2, 2]]), np.array([4, 4, 4]), Fraction(3, 2)).tolist()
    [True, False]
    """
    t = Fraction(t)
    counts = np.atleast_2d(np.asarray(counts, dtype=object))
    glob = np.asarray(global_counts, dtype=object)
    keep = np.array([int(g) > 0 for g in glob], dtype=bool)
    counts, glob = counts[:, keep], glob[keep]
    sizes = counts.sum(axis=1)
    total = sum(int(g) for g in glob)
    num, den = t.numerator, t.denominator
    p_scaled = counts * total * den  # den * p_v, over size * total
    q_scaled = np.outer(sizes, glob)  # q_v, over size * total
    ok = (p_scaled <= num * q_scaled) & (q_scaled * den <= num * counts * total)
    return np.array([bool(row.all()) or int(s) == 0 for row, s in zip(ok, sizes)], dtype=bool)


# ------------------------------------------------------------------ Prop. 1 (corrected)
def stochastic_bound(class_size, n_records: int, epsilon) -> np.ndarray:
    """Stochastic t of classes masked by an epsilon-DP mechanism: (|E| + (N - |E|) e^eps) / N
    (Prop. 1 as corrected in docs/papers.md, DS-1; the printed N - |E| - 1 understates it).

    >>> round(float(stochastic_bound(1, 10, 1)), 10)  # DS-1's counterexample: (1 + 9 e) / 10
    2.5464536456
    """
    size = np.asarray(class_size, dtype=float)
    return (size + (n_records - size) * math.exp(float(epsilon))) / n_records


def _exp_le(epsilon: Fraction, ratio: Fraction) -> bool:
    """e^epsilon <= ratio, exactly (e^eps is irrational for rational eps != 0, so growing
    decimal precision always decides)."""
    if ratio <= 0:
        return False
    if epsilon == 0:
        return ratio >= 1
    precision = 40
    while True:
        with localcontext() as ctx:
            ctx.prec = precision
            diff = Decimal(ratio.numerator).ln() - Decimal(ratio.denominator).ln()
            diff -= Decimal(epsilon.numerator) / Decimal(epsilon.denominator)
            margin = Decimal(10) ** (-(precision - 10))
            if abs(diff) > margin * max(1, abs(Decimal(epsilon.numerator) / Decimal(epsilon.denominator))):
                return diff > 0
        precision *= 2


def stochastic_bound_within(class_size: int, n_records: int, epsilon, t) -> bool:
    """(|E| + (N - |E|) e^eps) / N <= t, decided exactly.

    >>> stochastic_bound_within(5, 10, Fraction(1, 2), 2), stochastic_bound_within(1, 10, 1, Fraction(5, 2))
    (True, False)
    """
    size, n = int(class_size), int(n_records)
    epsilon, t = Fraction(epsilon), Fraction(t)
    if size >= n:
        return t >= 1
    return _exp_le(epsilon, (t * n - size) / (n - size))


def min_class_size(t, epsilon, n_records: int) -> int | None:
    """The smallest class size |E| with stochastic bound <= t, or None if even the whole
    table (|E| = N) is not enough (t < 1).

    From t_E = e^eps - (|E|/N)(e^eps - 1): |E| >= N (e^eps - t) / (e^eps - 1).

    >>> min_class_size(2, 1, 1000), min_class_size(3, 1, 1000)
    (419, 1)
    """
    t, epsilon, n = Fraction(t), Fraction(epsilon), int(n_records)
    if t < 1:
        return None
    if epsilon == 0 or stochastic_bound_within(1, n, epsilon, t):
        return 1
    e = math.exp(float(epsilon))
    guess = max(1, min(n, math.ceil(n * (e - float(t)) / (e - 1))))
    while guess > 1 and stochastic_bound_within(guess - 1, n, epsilon, t):
        guess -= 1
    while not stochastic_bound_within(guess, n, epsilon, t):
        guess += 1
    return guess


def epsilon_for(t, n_records: int, min_size: int) -> float:
    """The epsilon at which the smallest class (of `min_size` records) reaches stochastic
    t: ln((t N - k) / (N - k)) (the inverse of :func:`stochastic_bound`).

    >>> round(epsilon_for(2, 1000, 419), 4)  # 419 = min_class_size(2, 1, 1000)
    1.0011
    """
    t, n, k = float(Fraction(t)), int(n_records), int(min_size)
    if k >= n:
        return math.inf
    return math.log((t * n - k) / (n - k))


def epsilon_from_closeness(t) -> float:
    """epsilon = 2 ln t: e^(eps/2)-closeness gives eps-DP of the confidential attributes
    under t-closeness's assumptions on prior and posterior views (Prop. 3).

    The guarantee needs the whole table's distribution fixed as the public prior: taken
    from each neighbouring table instead, two 9/8-close tables that differ in one record
    give views 4/3 apart, more than (9/8)² (``tests/models/test_closeness_prop3.py``).

    >>> round(epsilon_from_closeness(2), 6)
    1.386294
    """
    return 2 * math.log(float(Fraction(t)))


# ------------------------------------------------------------------ exact stochastic t
def laplace_mixture_distance(values: np.ndarray, classes: np.ndarray, scale: float) -> np.ndarray:
    """Exact Def.-4 distance, per class, between the Laplace mixtures of Def. 3.

    With f(x) = (1/N) Σ_i Lap(x; c_i, β) and f_E(x) = (1/|E|) Σ_{i in E} Lap(x; c_i, β),
    the distance of class E is sup_x max(f_E/f, f/f_E). Between consecutive centres
    both mixtures are a e^{x/β} + b e^{-x/β}, so their ratio is monotone there and the
    sup is reached at a centre or at x -> ±inf (docs/papers.md, DS-7). Everything is in
    log space (log-sum-exp), one pass over the sorted distinct values.

    Parameters
    ----------
    values : array of float
        The original confidential values c_i.
    classes : array of int
        The class of every record (0..C-1).
    scale : float
        β = Δ / epsilon.

    Returns
    -------
    ndarray of float, one per class

    Examples
    --------
    The counterexample to the printed Prop. 1 (docs/papers.md, DS-1): one record at 0 in its own
    class, nine at 1, β = 1; the sup is at x -> +inf and equals (1 + 9 e) / 10.

    >>> d = laplace_mixture_distance(np.array([0.0] + [1.0] * 9), np.array([0] + [1] * 9), 1.0)
    >>> round(float(d[0]), 10), round((1 + 9 * math.e) / 10, 10)
    (2.5464536456, 2.5464536456)
    """
    values = np.asarray(values, dtype=float)
    classes = np.asarray(classes, dtype=np.int64)
    n = len(values)
    n_classes = int(classes.max()) + 1 if n else 0
    uniq, pos = np.unique(values, return_inverse=True)
    pos = pos.reshape(-1)
    counts = np.zeros((n_classes + 1, len(uniq)))  # last row: the whole table
    np.add.at(counts, (classes, pos), 1.0)
    counts[-1] = np.bincount(pos, minlength=len(uniq))
    sizes = counts.sum(axis=1)
    with np.errstate(divide="ignore"):
        logw = np.log(counts)
    x = uniq / scale
    # log Σ_i w_i e^{-|x_j - u_i|/β} at every centre x_j: left and right sweeps.
    left = np.empty_like(logw)
    right = np.empty_like(logw)
    left[:, 0] = logw[:, 0]
    for j in range(1, len(uniq)):
        left[:, j] = np.logaddexp(left[:, j - 1] - (x[j] - x[j - 1]), logw[:, j])
    right[:, -1] = -np.inf
    for j in range(len(uniq) - 2, -1, -1):
        right[:, j] = np.logaddexp(right[:, j + 1], logw[:, j + 1]) - (x[j + 1] - x[j])
    log_mix = np.logaddexp(left, right) - np.log(sizes)[:, None]
    diff = log_mix[:-1] - log_mix[-1]  # log f_E - log f at each centre
    # Limits: x -> +inf weighs e^{u/β}, x -> -inf weighs e^{-u/β}.
    with np.errstate(divide="ignore"):
        plus = _logsumexp(logw + x) - np.log(sizes)
        minus = _logsumexp(logw - x) - np.log(sizes)
    ends = np.stack([plus[:-1] - plus[-1], minus[:-1] - minus[-1]], axis=1)
    worst = np.maximum(np.abs(diff).max(axis=1), np.abs(ends).max(axis=1))
    return np.exp(worst)


def _logsumexp(a: np.ndarray) -> np.ndarray:
    top = np.max(a, axis=1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore"):
        return (np.log(np.exp(a - top).sum(axis=1, keepdims=True)) + top)[:, 0]


def randomized_response_keep(epsilon, n_values: int) -> float:
    """The probability that m-ary randomized response keeps a value: e^eps / (e^eps + m - 1)
    (each other value gets 1 / (e^eps + m - 1), so any two values' output probabilities
    differ by a factor e^eps at most).

    >>> round(randomized_response_keep(math.log(3), 2), 6)
    0.75
    """
    e = math.exp(float(epsilon))
    return e / (e + n_values - 1)


def randomized_response_distance(codes: np.ndarray, classes: np.ndarray, n_values: int, epsilon) -> np.ndarray:
    """Exact Def.-4 distance, per class, between the output distributions of m-ary
    randomized response (Def. 3), by Prop. 2 on the m output values.

    >>> randomized_response_distance(np.array([0, 0, 1, 1]), np.array([0, 0, 1, 1]), 2, math.log(3))
    array([2., 2.])
    """
    codes = np.asarray(codes, dtype=np.int64)
    classes = np.asarray(classes, dtype=np.int64)
    n_classes = int(classes.max()) + 1 if len(classes) else 0
    keep = randomized_response_keep(epsilon, n_values)
    other = (1 - keep) / (n_values - 1) if n_values > 1 else 0.0
    counts = np.zeros((n_classes, n_values))
    np.add.at(counts, (classes, codes), 1.0)
    sizes = counts.sum(axis=1, keepdims=True)
    out_e = (counts * keep + (sizes - counts) * other) / sizes
    glob = counts.sum(axis=0)
    out_all = (glob * keep + (len(codes) - glob) * other) / len(codes)
    ratio = out_e / out_all
    return np.maximum(ratio, 1 / ratio).max(axis=1)
