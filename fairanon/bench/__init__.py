"""Benchmarking and comparing anonymizations: ``fairanon bench``.

Describe a benchmark once (:mod:`~fairanon.bench.spec`), run every combination in a
fresh process with time and memory limits (:mod:`~fairanon.bench.runner`), each storing
its per-tuple property vectors (privacy, loss, alpha-protection and diversity
constraints, suppressed records read under one policy: :mod:`~fairanon.bench.vectors`),
compare the releases of each instance (or each instance and requirement set) by those
vectors and the quality indices of Dewri et al. (:mod:`~fairanon.bench.quality`,
:mod:`~fairanon.bench.ranking`, :mod:`~fairanon.bench.compare`), and write an HTML
report (:mod:`~fairanon.bench.report`) with its figures (:mod:`~fairanon.bench.plots`)
and its verdicts in words at the top (:mod:`~fairanon.bench.verdicts`).

>>> suite = Suite.from_dict({"instances": [{"dataset": "dewri_t1"}],
...                          "requirements": [{"k_anonymity": {"k": [2, 3]}}],
...                          "algorithms": ["mondrian"]})
>>> len(suite.runs())
2
"""

from .compare import CompareConfig, Comparison, RunRelease, compare_releases, compare_results, compare_runs
from .report import print_summary, write_report
from .runner import BenchResult, read_results, run_suite
from .spec import RunSpec, Suite, load_suite

__all__ = [
    "BenchResult",
    "CompareConfig",
    "Comparison",
    "RunRelease",
    "RunSpec",
    "Suite",
    "compare_releases",
    "compare_results",
    "compare_runs",
    "load_suite",
    "print_summary",
    "read_results",
    "run_suite",
    "write_report",
]
