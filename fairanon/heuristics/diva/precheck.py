"""What DIVA checks before it searches (Milani, Huang, Chiang, EDBT 2021): the
requirements it can enforce (k-anonymity and diversity constraints), its Boolean
options, and cheap necessary conditions that, when they fail, name the requirements
no release by suppression can satisfy.
"""

from __future__ import annotations

import itertools

import numpy as np

from ...exceptions import IncompatibleRequirementError, InvalidParameterError
from ...instances.instance import Instance
from ...models.diversity import EncodedConstraint
from ...models.requirements import DiversityConstraint, KAnonymity
from ..kmember import protected_classes

__all__ = ["check_bool", "k_of", "precheck"]


def check_bool(value, name: str) -> bool:
    """`value`, if it is a bool (the option `name` of diva); else InvalidParameterError."""
    if not isinstance(value, bool):
        raise InvalidParameterError(f"The {name!r} parameter of diva must be a bool. Got {value!r} instead.")
    return value


def k_of(requirements) -> int:
    """The k of the KAnonymity among `requirements` (1 without one); an
    IncompatibleRequirementError for requirements other than KAnonymity and
    DiversityConstraint."""
    others = [r for r in requirements if not isinstance(r, (KAnonymity, DiversityConstraint))]
    if others:
        raise IncompatibleRequirementError(
            f"diva enforces KAnonymity and DiversityConstraint only; it cannot enforce "
            f"{', '.join(str(r) for r in others)}. Use method='mondrian' for l-diversity and t-closeness."
        )
    return max([r.k for r in requirements if isinstance(r, KAnonymity)], default=1)


def precheck(instance: Instance, all_encoded: list[EncodedConstraint], k: int) -> str | None:
    """A reason, naming the requirements, if the instance cannot satisfy them (cheap
    necessary conditions), else None."""
    for value, rows in protected_classes(instance):
        if len(rows) < k:
            return (
                f"{k}-anonymity is violated by the {len(rows)} records with {instance.schema.protected}={value!r}: "
                "the protected attribute is released unchanged, so these records only form classes among themselves."
            )
    prot = (instance.codes(instance.schema.protected).astype(np.int64)
            if instance.schema.protected else np.zeros(instance.n_rows, dtype=np.int64))
    for e in all_encoded:
        if e.fixed:
            count = e.n_targets
            if not e.lower <= count <= e.upper:
                names = ", ".join(a for a, _ in e.requirement.target)
                return (
                    f"{e.requirement!r} can never hold: {names} is released unchanged, so every release shows "
                    f"exactly {count} target records, outside [{e.lower}, {e.upper}]."
                )
            continue
        if e.n_targets < e.lower:
            return (
                f"{e.requirement!r} needs at least {e.lower} visible target records, but the table has only "
                f"{e.n_targets} records with those values."
            )
        reach = sum(
            int((e.target & (prot == p)).sum()) for p in np.unique(prot) if int((e.match & (prot == p)).sum()) >= k
        )
        if reach < e.lower:
            return (
                f"{e.requirement!r} needs at least {e.lower} visible target records, but at most {reach} can stay "
                f"visible: a visible record needs a class of at least k={k} records all showing "
                f"{', '.join(f'{a}={v}' for a, v in e.requirement.target if a in e.attributes)}."
            )
    for a, b in itertools.permutations([e for e in all_encoded if not e.fixed], 2):
        # If b's target records are a's and b's suppressible attributes include a's,
        # every record counted for b is counted for a: count(a) >= count(b).
        if (
            b.n_targets
            and not (b.target & ~a.target).any()
            and set(a.attributes) <= set(b.attributes)
            and b.lower > a.upper
        ):
            return (
                f"{a.requirement!r} and {b.requirement!r} conflict: every record counted for the second is "
                f"counted for the first, so the first's count is at least {b.lower} > its upper bound {a.upper}."
            )
    return None
