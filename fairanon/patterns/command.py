"""The ``fairanon patterns`` subcommand: mine, publish and verify a pattern set.

Exit codes as for the rest of the command line: 0 published and verified, 1 a guarantee
fails (no convergence, unsanitizable patterns, infeasible exact model), 2 bad usage or
bad input.
"""

from __future__ import annotations

import argparse
import os

from .._memory import memory_limit_type
from ..exceptions import InvalidParameterError

__all__ = ["add_subcommand", "run"]

_PAPER = {"adult", "german"}
#: The pattern file under a name that says whether the set holds (one exists after a run).
PATTERN_FILES = {"passed": "patterns.csv", "FAILED": "patterns.FAILED.csv",
                 "INFEASIBLE": "patterns.INFEASIBLE.csv", "UNKNOWN": "patterns.UNKNOWN.csv"}
REPORT_FILE = "report.json"


def add_subcommand(sub) -> None:
    """Register ``patterns`` on an argparse sub-parser collection."""
    p = sub.add_parser("patterns", help="publish α-protective (k-anonymous / ε-DP) frequent patterns")
    p.add_argument("source", help="adult or german (the paper's encodings), a CSV file, or a job file (YAML/JSON)")
    p.add_argument("--support", default="0.1", help="minimum support: a fraction of the records or a count (default 0.1)")
    p.add_argument("--alpha", default="1.2", help="discrimination threshold α (default 1.2)")
    p.add_argument("--measure", default="slift", help="slift, clift, elift, slift_d, elift_d, slift_c, elift_c, olift")
    p.add_argument("--reading", default="strict", choices=["strict", "nonstrict"], help="f < α (strict, the paper) or f <= α")
    p.add_argument("--protected", nargs="+", help="PD items (attribute=value); default for adult/german: the paper's")
    p.add_argument("--decision", help="the class item denying the benefit (attribute=value)")
    p.add_argument("--positive", help="the other class item")
    p.add_argument("--k", type=int, help="make the set k-anonymous (no inference channel with support in (0, k))")
    p.add_argument("--d", help="only d-unexplainable discrimination is removed (DI_e: items of non-PD, non-class attributes)")
    p.add_argument("--epsilon", help="ε-differential privacy through PrivBasis instead of k-anonymity")
    p.add_argument("--top", type=int, help="K, the number of patterns PrivBasis releases (default: |F(D, σ)|, read from the data)")
    p.add_argument("--targets", choices=["paper", "union"], default="paper",
                   help="virtual records of the slift family: the paper's {A, B} (default), or with the other protected "
                        "attributes' items, which settles the re-check loop with several protected groups")
    p.add_argument("--exact", action="store_true", help="least support added, by CP-SAT (small sets)")
    p.add_argument("--closed", action="store_true", help="mine and publish closed itemsets")
    p.add_argument("--seed", type=_seed, default=0, help="seed for every randomized step (an int >= 0; default 0)")
    p.add_argument("--time-limit", type=float, help="seconds for the exact method")
    p.add_argument("--memory-limit", type=memory_limit_type,
                   help="memory the frequent itemsets may take: bytes (e.g. 8GB) or a share of the available "
                        "memory (e.g. 0.8); more is refused before mining (default: half the available "
                        "memory; 'none': no limit)")
    p.add_argument("--out", default="out", help="output directory (default: ./out)")
    p.add_argument("--neutralize-formulas", action=argparse.BooleanOptionalAction, default=True,
                   help="write itemsets a spreadsheet would run as formulas with a leading ' (default: on)")


def _seed(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be an integer >= 0, got {text!r}")
    return value


def _source(args):
    from .datasets import paper_adult, paper_german
    from .mining import encode_table
    from .patternset import Roles

    if args.source in _PAPER:
        data = paper_adult() if args.source == "adult" else paper_german()
        db, roles = data.train, data.roles
        if args.protected or args.decision:
            roles = Roles.paper(db.items, args.protected or roles.protected, args.decision or roles.decision,
                                args.positive if args.positive else (roles.positive if not args.decision else None))
        return db, roles, args.source
    if not os.path.exists(args.source):
        raise InvalidParameterError(
            f"patterns: {args.source!r} is neither a data set with a paper encoding ({', '.join(sorted(_PAPER))}) "
            "nor an existing file."
        )
    if args.source.lower().endswith((".yaml", ".yml", ".json")):
        from ..jobs import read_job

        inst = read_job(args.source).instance
        columns = [c for c in inst.table.columns if inst.schema[c].released]
        table = inst.table[columns]
        name = inst.name
    else:
        from ..instances.files import read_csv_table

        table = read_csv_table(args.source, what="Data file", dtype=str, keep_default_na=False)
        name = os.path.basename(args.source)
    if not args.protected or not args.decision:
        raise InvalidParameterError("patterns: --protected and --decision are required for a CSV or job file.")
    db = encode_table(table, missing=("?", ""))
    unknown = [i for i in [*args.protected, args.decision] + ([args.positive] if args.positive else []) if i not in db.index]
    if unknown:
        raise InvalidParameterError(f"patterns: item(s) {unknown} do not occur in {args.source!r}; items look like 'column=value'.")
    return db, Roles.paper(db.items, args.protected, args.decision, args.positive), name


def run(args) -> int:
    """Carry out ``fairanon patterns``; returns the exit code."""
    from .patternset import PatternSet
    from .publish import publish, publish_dp
    from .release import PatternRequirements

    from ..instances.files import check_output_dir, commit, neutralize_formulas, write_csv

    check_output_dir(args.out, [*PATTERN_FILES.values(), REPORT_FILE])
    db, roles, name = _source(args)
    reqs = PatternRequirements(args.measure, args.alpha, args.reading, k=args.k, d=args.d)
    support = int(args.support) if args.support.isdigit() else args.support
    patterns = PatternSet.from_db(db, support, roles, closed=args.closed, name=name,
                                  memory_limit=getattr(args, "memory_limit", None))
    if args.epsilon is not None:
        if args.k is not None or args.d is not None or args.exact:
            raise InvalidParameterError("patterns: --epsilon combines with α-protection only (no --k, --d, --exact).")
        top = args.top if args.top is not None else len(patterns)
        if args.top is None:
            print(f"note: K = {top} frequent itemsets was read from the data; pass --top for an end-to-end ε-DP release")
        release = publish_dp(db, top, args.epsilon, roles, reqs, seed=args.seed, targets=args.targets,
                             privbasis_options={"min_support": support, "release": "topk"})
    elif args.exact:
        if args.targets != "paper":
            raise InvalidParameterError("patterns: --targets chooses the greedy method's virtual records; --exact chooses its own.")
        release = publish(patterns, reqs, method="exact", seed=args.seed, time_limit=args.time_limit)
    else:
        release = publish(patterns, reqs, method="greedy", seed=args.seed, time_limit=args.time_limit,
                          targets=args.targets)
    status = str(release.status)
    file = PATTERN_FILES["passed" if release.passed else status if status in ("INFEASIBLE", "UNKNOWN") else "FAILED"]
    csv_path = os.path.join(args.out, file)
    report_path = os.path.join(args.out, REPORT_FILE)
    frame = release.to_frame()
    frame = neutralize_formulas(frame) if args.neutralize_formulas else frame
    document = {"source": name, "n_records": db.n_records, "n_patterns": len(patterns), "patterns_file": file,
                **release.summary()}

    # The report is the manifest, renamed last: it names the patterns file by its checksum.
    commit({csv_path: lambda path: write_csv(frame, path)}, manifest=(report_path, document),
           remove=[os.path.join(args.out, f) for f in PATTERN_FILES.values()])
    print(f"{name}: {len(patterns)} {'closed' if args.closed else 'frequent'} itemsets at support {args.support}; {reqs}")
    print(f"status {release.status}; {release.patterns.ledger_total} virtual records, support added {release.objective}")
    if release.reason:
        print(f"  reason: {release.reason}")
    print(release.report)
    print(f"Wrote {csv_path} and {report_path}")
    return 0 if release.passed else 1
