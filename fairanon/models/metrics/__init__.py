"""Utility and risk metrics of a release, read from the released table alone.

Every metric takes the original :class:`~fairanon.instances.instance.Instance` and a
:class:`~fairanon.release.Release`, aligned by record id, and reads the equivalence
classes from the released labels (never the method's own ``release.groups``):

- :mod:`~fairanon.models.metrics.classes`: the release aligned with its instance and
  parsed once against the active domain, and :func:`equivalence_classes`;
- :mod:`~fairanon.models.metrics.loss`: information loss (suppressed and generalized
  cells, discernibility, C_avg, LM, NCP/GCP) and the one-pass :func:`summary`;
- :mod:`~fairanon.models.metrics.queries`: the median relative error of random count
  queries (:func:`count_queries`, :func:`median_relative_error`);
- :mod:`~fairanon.models.metrics.properties`: the per-tuple property vectors of Dewri
  et al. (:func:`property_vectors`) under the suppression policies of docs/papers.md,
  DW-8 (:func:`suppression_summary`);
- :mod:`~fairanon.models.metrics.fairness`: fairness as property vectors, the worst
  alpha-protection measure per record (:func:`alpha_vector`) and the share of each
  diversity constraint's targets kept visible (:func:`diversity_vector`), per record
  or per group (:func:`fairness_vectors`).

Exactness: counts (cells, class sizes, discernibility) are ints and ratios of counts
are :class:`fractions.Fraction` (``average_class_size``). Losses, NCP/GCP, the MRE and
the property vectors are floats by default (they are reports); pass ``exact=True`` to
:func:`loss_metric`, :func:`ncp` or :func:`property_vectors` for exact
:class:`~fractions.Fraction` values (slower: meant for tests and small tables).

Examples
--------
>>> import pandas as pd
>>> from fairanon.instances import Attribute, Instance, Schema
>>> from fairanon.release import Release, generalize_partition
>>> df = pd.DataFrame({"age": [21, 23, 35, 38], "sex": ["f", "m", "f", "m"],
...                    "disease": ["flu", "flu", "hiv", "flu"]})
>>> inst = Instance(df, Schema([Attribute("age", kind="numeric"), Attribute("sex"),
...                             Attribute("disease", role="sensitive")]))
>>> rel = Release(generalize_partition(inst, [0, 0, 1, 1]), groups=[0, 0, 1, 1])
>>> rel.table["age"].tolist(), rel.table["sex"].tolist()
(['[21-23]', '[21-23]', '[35-38]', '[35-38]'], ['*', '*', '*', '*'])
>>> equivalence_classes(inst, rel).tolist()
[0, 0, 1, 1]
>>> discernibility(inst, rel), generalized_cells(inst, rel), suppressed_cells(inst, rel)
(8, 8, 4)
>>> loss_metric(inst, rel, exact=True)["LM_sum"]  # (2·2/17 + 2·3/17 + 4·1) / 4
Fraction(39, 34)
"""

from .classes import NUMERIC_LOSSES, equivalence_classes
from .fairness import UNITS, alpha_vector, diversity_vector, fairness_vectors, infinite_cap
from .loss import (
    average_class_size,
    discernibility,
    generalized_cells,
    loss_metric,
    ncp,
    summary,
    suppressed_cells,
)
from .properties import SUPPRESSION_POLICIES, property_vectors, suppression_summary
from .queries import CountQueries, count_queries, median_relative_error

__all__ = [
    "NUMERIC_LOSSES",
    "SUPPRESSION_POLICIES",
    "UNITS",
    "CountQueries",
    "alpha_vector",
    "average_class_size",
    "count_queries",
    "discernibility",
    "diversity_vector",
    "equivalence_classes",
    "fairness_vectors",
    "generalized_cells",
    "infinite_cap",
    "loss_metric",
    "median_relative_error",
    "ncp",
    "property_vectors",
    "summary",
    "suppressed_cells",
    "suppression_summary",
]
