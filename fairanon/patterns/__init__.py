"""Discrimination- and privacy-aware frequent patterns (Hajian, Domingo-Ferrer, Monreale,
Pedreschi, Giannotti, DMKD 2015), with the fixes of docs/papers.md (Hajian et al., HJ-1 to HJ-12).

Mine a pattern set, declare the roles of its items, and publish it α-protective
(optionally d-explainable and k-anonymous, or ε-differentially private), with an
independent verifier and the paper's utility measures.

>>> from fairanon import patterns as fp
>>> db = fp.TransactionDB.from_counts({("f", "v", "C"): 20, ("f", "v"): 14, ("v", "C"): 19, ("v",): 28})
>>> ps = fp.PatternSet.from_db(db, 1, fp.Roles({"f"}, "C"), backend="apriori")
>>> rel = fp.publish(ps, fp.PatternRequirements("slift", 1.25, k=3))
>>> rel.passed, rel.report["k_anonymity"].passed
(True, True)
"""

from .classifier import CMARClassifier
from .datasets import PaperData, paper_adult, paper_german
from .detect import Detection, Finding, detect_discriminatory, detect_unexplainable, impact_order
from .dp import NoisyBins, PrivBasisResult, dp_alpha_protective, privbasis
from .measures import (
    MEASURES,
    READINGS,
    Contingency,
    contingency,
    delta,
    is_discriminatory,
    measure_value,
    target,
)
from .mining import (
    BACKENDS,
    Bins,
    TransactionDB,
    canonical,
    closed_itemsets,
    encode_table,
    item_label,
    min_count,
    mine,
)
from .patternset import PatternSet, Roles, Workspace, split_pattern
from .privacy import Channel, find_channels, k_anonymize
from .publish import PATTERN_METHODS, publish, publish_dp, verify_release
from .release import PatternRelease, PatternRequirements
from .sanitize import (
    SanitizationResult,
    alpha_protective,
    alpha_protective_k_anonymous,
    antidisc_sanitize,
    explainable_alpha_protective,
    explainable_alpha_protective_k_anonymous,
    sanitize,
    unexplainable_sanitize,
)
from .utility import (
    absolute_distortion,
    discrimination_impact,
    distortion,
    dpd,
    ghost_cost,
    misses_cost,
    ndd,
    support_altered,
    utility_report,
)
from .verify import Check, PatternReport, verify_patterns

__all__ = [
    "BACKENDS",
    "MEASURES",
    "PATTERN_METHODS",
    "READINGS",
    "Bins",
    "CMARClassifier",
    "Channel",
    "Check",
    "Contingency",
    "Detection",
    "Finding",
    "NoisyBins",
    "PaperData",
    "PatternRelease",
    "PatternReport",
    "PatternRequirements",
    "PatternSet",
    "PrivBasisResult",
    "Roles",
    "SanitizationResult",
    "TransactionDB",
    "Workspace",
    "absolute_distortion",
    "alpha_protective",
    "alpha_protective_k_anonymous",
    "antidisc_sanitize",
    "canonical",
    "closed_itemsets",
    "contingency",
    "delta",
    "detect_discriminatory",
    "detect_unexplainable",
    "discrimination_impact",
    "distortion",
    "dp_alpha_protective",
    "dpd",
    "encode_table",
    "explainable_alpha_protective",
    "explainable_alpha_protective_k_anonymous",
    "find_channels",
    "ghost_cost",
    "impact_order",
    "is_discriminatory",
    "item_label",
    "k_anonymize",
    "measure_value",
    "min_count",
    "mine",
    "misses_cost",
    "ndd",
    "paper_adult",
    "paper_german",
    "privbasis",
    "publish",
    "publish_dp",
    "sanitize",
    "split_pattern",
    "support_altered",
    "target",
    "unexplainable_sanitize",
    "utility_report",
    "verify_patterns",
    "verify_release",
]
