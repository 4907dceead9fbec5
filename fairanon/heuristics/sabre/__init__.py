"""Sabre: Sensitive Attribute Bucketization and REdistribution for t-closeness (Cao,
Karras, Kalnis, Tan, VLDB J. 2011), as reconstructed in docs/papers.md, B-3.

Three steps. **Bucketization** (:mod:`.buckets`) partitions the values of the sensitive
attribute into buckets of similar values, greedily and top-down, until the EMD upper
bound of an equivalence class drawing from every bucket in proportion to the bucket
sizes is at most t. **Redistribution** (:mod:`.plan`) plans the classes as vectors of
per-bucket counts, halving the counts recursively while a sound bound on the EMD of any
class with those counts stays at most t. **Materialization** (:mod:`.materialization`)
fills each planned class with a seed record and the seed's nearest neighbours in
quasi-identifier space from every bucket (:mod:`.neighbours`: exact k-nearest neighbours
on kd-trees, or an approximate walk along a Hilbert curve). :mod:`.method` holds
:func:`sabre`, which runs the three.

The nearest-neighbour machinery and the materialization are shared with dSabre
(:mod:`fairanon.heuristics.dsabre`) and the DS bucketization
(:mod:`fairanon.heuristics.bucketization`).
"""

from .buckets import Bucketing, bucketize, bucketize_stages
from .materialization import SEED_BUCKET_RULES, SEED_TUPLE_RULES, class_ids
from .method import BUCKET_RULES, sabre
from .neighbours import RETRIEVALS, NeighbourPool, QISpace, hilbert_order
from .plan import halve, plan_classes

__all__ = [
    "BUCKET_RULES",
    "RETRIEVALS",
    "SEED_BUCKET_RULES",
    "SEED_TUPLE_RULES",
    "Bucketing",
    "NeighbourPool",
    "QISpace",
    "bucketize",
    "bucketize_stages",
    "class_ids",
    "halve",
    "hilbert_order",
    "plan_classes",
    "sabre",
]
