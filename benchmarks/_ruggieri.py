"""The setting of Ruggieri's experiments as the benchmarks run it (Trans. Data Privacy 7(2),
2014, §6): the data sets of ``fa.load("ruggieri", data=...)`` (PND attributes as the
quasi-identifiers, binary PD attribute) and, for a threshold t, α-protection w.r.t. RD at
bd_RD(t) (Thm 10), whose inverse bound t_α is t again, so dMondrian and dSabre run at t
and the verifier checks the guarantee they give. Used by ``benchmarks/ruggieri.py``,
``benchmarks/mondrian.py``, ``benchmarks/sabre.py``; ``benchmarks/suites/paper.yaml``
writes the same requirements out (``tests/bench/test_paper_suite.py`` checks that they
agree)."""

from __future__ import annotations

import os
import time
from fractions import Fraction

import fairanon as fa
from fairanon.models import measures as M

#: The t values swept per data set: from τ(R) rounded up to three decimals (Table 1's
#: "t min") to max(p-, 1 - p-) ("t max"), denser at low t where the trees change most.
T_GRID = {
    "german": ["0.052", "0.06", "0.08", "0.1", "0.125", "0.15", "0.2", "0.25", "0.3", "0.4", "0.5", "0.6", "0.7"],
    "adult": ["0.087", "0.1", "0.125", "0.15", "0.2", "0.25", "0.3", "0.4", "0.5", "0.6", "0.761"],
    "census": ["0.028", "0.04", "0.06", "0.1", "0.15", "0.2", "0.3", "0.5", "0.938"],
}


def census_files(folder: str) -> tuple[str, str] | None:
    train = os.path.join(folder, "census_income_train.csv.gz")
    test = os.path.join(folder, "census_income_test.csv.gz")
    return (train, test) if os.path.exists(train) and os.path.exists(test) else None


def load(data: str, census_dir: str | None = None, drop=()):
    """The data set in the paper's setting, or None for Census-Income when its files are
    not in `census_dir`."""
    if data != "census":
        return fa.load("ruggieri", data=data, drop=drop)
    files = census_files(census_dir or "")
    if files is None:
        return None
    return fa.load("ruggieri", data="census", path=files[0], path_test=files[1], drop=drop)


def p_minus(instance) -> Fraction:
    return Fraction(int(instance.negative_mask().sum()), instance.n_rows)


def alpha(instance, t) -> Fraction:
    """bd_RD(t) = min(2t, t + min(p-, 1 - p-), 1) on the instance (Thm 10)."""
    return M.bound("RD", Fraction(t), p_minus(instance))


def requirement(instance, t) -> fa.AlphaProtection:
    """The paper's requirement for threshold t: α-protection w.r.t. RD at bd_RD(t)."""
    return fa.AlphaProtection("RD", alpha(instance, t))


def run(method: str, instance, t, *, seed: int = 0, **options):
    """One run of dMondrian or dSabre at t: (release, wall seconds, CPU seconds)."""
    from fairanon.heuristics.dmondrian import dmondrian
    from fairanon.heuristics.dsabre import dsabre

    func = {"dmondrian": dmondrian, "dsabre": dsabre}[method]
    if method == "dsabre":
        options.setdefault("seed", seed)
    wall, cpu = time.perf_counter(), time.process_time()
    release = func(instance, [requirement(instance, t)], **options)
    return release, time.perf_counter() - wall, time.process_time() - cpu
