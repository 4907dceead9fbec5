"""The cpsat method: the exact local-recoding model, warm-started from Mondrian.

:func:`fairanon.solver.local_recoding.local_recoding` proves the optimal local
recoding (or local suppression) under every requirement type; a heuristic release
given as a warm start lets CP-SAT begin from a good incumbent. This method gives it
Mondrian's release (:mod:`fairanon.heuristics.mondrian`) by default, which is why it is
put together here, above both.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence

from ..exceptions import FairanonError
from ..heuristics.mondrian import mondrian
from ..instances.instance import Instance
from ..models.requirements import KAnonymity, LDiversity, Requirement, TCloseness
from ..release import Release, Status
from ..solver.local_recoding import local_recoding

__all__ = ["cpsat", "mondrian_hint"]


def mondrian_hint(instance: Instance, requirements: Sequence[Requirement], seed) -> Release | None:
    """Mondrian's release when it can enforce every requirement (k, l, t), else None."""
    if not all(isinstance(r, (KAnonymity, LDiversity, TCloseness)) for r in requirements):
        return None
    try:
        release = mondrian(instance, requirements, seed=seed)
    except FairanonError:  # a warm start is optional: the exact model does not need one
        return None
    return release if release.status == Status.FEASIBLE else None


def cpsat(instance: Instance, requirements: Sequence[Requirement], *, seed=None, **options) -> Release:
    """Optimal local recoding (or local suppression) under every requirement type, with a
    certificate.

    The parameters, the release and the errors are those of
    :func:`fairanon.solver.local_recoding.local_recoding`; ``hint="auto"`` (the default)
    starts the search from :func:`mondrian_hint`, Mondrian's release when every
    requirement is k, l or t.

    Examples
    --------
    >>> from fairanon.models.diversity import diva_sigma
    >>> inst = fa.load("diva_table1")
    >>> reqs = [fa.KAnonymity(2), *diva_sigma()]
    >>> rel = cpsat(inst, reqs, recoding="suppression", seed=0, num_workers=1)
    >>> rel.status, rel.objective
    (<Status.OPTIMAL: 'OPTIMAL'>, 22)
    >>> fa.verify(inst, rel, reqs).passed
    True
    """
    return local_recoding(instance, requirements, seed=seed, auto_hint=mondrian_hint, **options)


# The options are those of the solver's function (``auto_hint`` is supplied here), so
# that the front door can name the valid ones when a job file misspells one.
cpsat.__signature__ = inspect.signature(local_recoding).replace(
    parameters=[p for p in inspect.signature(local_recoding).parameters.values() if p.name != "auto_hint"]
)
