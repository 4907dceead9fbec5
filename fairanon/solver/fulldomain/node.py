"""One lattice node chosen by its levels, checked and released as it is (no search)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from ...exceptions import InvalidParameterError
from ...models.requirements import Requirement
from ...release import Status
from .evaluate import FEASIBLE, Evaluator
from .lattice import Space
from .search import Outcome

__all__ = ["chosen_node", "node_outcome"]


def chosen_node(space: Space, levels, caller: str = "fulldomain") -> tuple:
    """The lattice node `levels` names (attribute name -> level), checked: every
    generalizable quasi-identifier once, each level an int in [0, its height]."""
    names = [attr.name for attr in space.attributes]
    heights = dict(zip(names, space.heights))
    expected = ", ".join(f"{n!r}: 0..{h}" for n, h in heights.items())
    if not isinstance(levels, Mapping):
        raise InvalidParameterError(
            f"The 'levels' parameter of {caller} must map each quasi-identifier to a "
            f"generalization level ({expected}). Got {levels!r} instead."
        )
    unknown = [name for name in levels if name not in heights]
    missing = [name for name in names if name not in levels]
    if unknown or missing:
        raise InvalidParameterError(
            f"The 'levels' parameter of {caller} must give a level to exactly these "
            f"quasi-identifiers: {expected}."
            + (f" Unknown: {', '.join(map(repr, unknown))}." if unknown else "")
            + (f" Missing: {', '.join(map(repr, missing))}." if missing else "")
        )
    node = []
    for name in names:
        j = levels[name]
        integral = isinstance(j, (int, np.integer)) and not isinstance(j, bool)
        if not integral or not 0 <= j <= heights[name]:
            raise InvalidParameterError(
                f"The level of {name!r} in the 'levels' parameter of {caller} must be an int "
                f"in [0, {heights[name]}]. Got {j!r} instead."
            )
        node.append(int(j))
    return tuple(node)


def node_outcome(
    evaluator: Evaluator,
    node: tuple,
    requirements: Sequence[Requirement],
    caller: str = "fulldomain",
) -> Outcome:
    """The outcome of releasing exactly `node`: FEASIBLE with its cost and no bound (no
    search proves anything about other nodes), or an error naming what the node fails."""
    result = evaluator.evaluate(node)
    if result.kind != FEASIBLE:
        failed = "; ".join(str(requirements[i]) for i in result.failed) or "the requirements"
        shown = ", ".join(
            f"{attr.name}={j}" for attr, j in zip(evaluator.space.attributes, node)
        )
        extra = (
            f" with at most {evaluator.limit} suppressed records" if evaluator.limit else ""
        )
        raise InvalidParameterError(
            f"The lattice node ({shown}) chosen by 'levels' in {caller} does not meet "
            f"{failed}{extra}; choose one of the candidates that do."
        )
    return Outcome(Status.FEASIBLE, node, result.cost, None, 1)
