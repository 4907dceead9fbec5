"""Instances: tables, schemas, hierarchies, bundled data and generators."""

from .generalization import LabelCovers, format_range, label_covers
from .hierarchy import SUPPRESSED, Hierarchy, IntervalHierarchy
from .instance import Instance
from .schema import Attribute, Schema

__all__ = [
    "Attribute",
    "Hierarchy",
    "Instance",
    "IntervalHierarchy",
    "LabelCovers",
    "SUPPRESSED",
    "Schema",
    "format_range",
    "label_covers",
]
