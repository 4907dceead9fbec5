"""Utility analysis benchmark: fa.utility on Adult, raw and after k = 5 (Mondrian).

Run ``python benchmarks/utility.py`` (``--repeat R`` runs per figure, best kept;
``--classifier`` logistic, tree or forest). Prints one row per release and writes
``benchmarks/results/utility.json``.

- Adult: 30,162 rows, 8 quasi-identifiers (age numeric; race protected), income the
  decision. "raw" is the table released unchanged (the distributions are identical, and
  both models learn the same data); "k=5" is Mondrian's 5-anonymous release.
- Times: the distributions of the 8 quasi-identifiers (reading and aligning the release
  included; target under 1 s), and the classification utility (two models trained on
  70 % of the records, evaluated on the 30 % held out: a whole call minus the
  distributions). scikit-learn is imported before timing. CPU and wall seconds; the best
  of R runs.
- Figures: per release, the largest total variation distance over the attributes, the
  accuracy and AUC of the model trained on the original and on the release, and the risk
  difference and elift of each model's predictions for the protected group (race).
"""

from __future__ import annotations

import argparse
import os

from _table import show, timed, write_results

import fairanon as fa


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--classifier", default="logistic", choices=("logistic", "tree", "forest"))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--out", default=os.path.join(os.path.dirname(__file__), "results", "utility.json")
    )
    args = parser.parse_args()
    print(f"cores: {os.cpu_count()}, load average: {os.getloadavg()[0]:.1f}", flush=True)
    import sklearn.ensemble  # noqa: F401  - imported before any timing
    import sklearn.linear_model  # noqa: F401

    inst = fa.load("adult")
    requirements = [fa.KAnonymity(5)]
    mondrian = fa.anonymize(inst, requirements, method="mondrian", seed=0)
    assert fa.verify(inst, mondrian, requirements).passed
    raw = fa.Release(table=inst.table.copy(), groups=list(range(inst.n_rows)), provenance={"method": "raw"})
    rows = []
    for name, release in (("raw", raw), ("k=5", mondrian)):
        dist, (dist_cpu, dist_wall) = timed(args.repeat, lambda: fa.utility(inst, release, classifier=None))
        report, (cls_cpu, cls_wall) = timed(
            args.repeat, lambda: fa.utility(inst, release, classifier=args.classifier, seed=args.seed)
        )
        c = report.classification
        worst = max(dist.attributes, key=lambda a: a.tv_distance)
        rows.append({
            "release": name,
            "rows": inst.n_rows,
            "dist_cpu_s": dist_cpu,
            "dist_wall_s": dist_wall,
            "max_tv": worst.tv_distance,
            "max_tv_attr": worst.name,
            "classify_cpu_s": cls_cpu - dist_cpu,
            "classify_wall_s": cls_wall - dist_wall,
            "acc_orig": c.original.accuracy,
            "acc_rel": c.release.accuracy,
            "auc_orig": c.original.auc,
            "auc_rel": c.release.auc,
            "rd_orig": c.original.discrimination["RD"],
            "rd_rel": c.release.discrimination["RD"],
            "elift_orig": c.original.discrimination["ER"],
            "elift_rel": c.release.discrimination["ER"],
            "rd_truth": c.truth.discrimination["RD"],
            "majority": c.majority_accuracy,
        })
        print(report, flush=True)
    show(rows, list(rows[0]))
    write_results(args.out, {"classifier": args.classifier, "repeat": args.repeat, "rows": rows})


if __name__ == "__main__":
    main()
