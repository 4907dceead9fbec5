"""Stochastic t-closeness through differential privacy (Domingo-Ferrer and Soria-Comas,
Knowledge-Based Systems 2015, §3-4).

k-anonymize the quasi-identifiers (Mondrian), then mask every record's confidential
value independently with an epsilon-DP mechanism: Laplace noise of scale (U - L)/eps for
a numeric attribute with public bounds [L, U], m-ary randomized response otherwise.
By Prop. 1 (corrected: docs/papers.md, DS-1) every class E is then
stochastically t_E-close, t_E = (|E| + (N - |E|) e^eps) / N, worst at the smallest
class; the method picks the class size that reaches the requested t. The paper gives no
procedure; this one and its reasons are in docs/papers.md, DS-6 and DS-7.
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd

from .._validation import check_random_state
from ..exceptions import IncompatibleRequirementError, InvalidParameterError
from ..instances.instance import Instance
from ..models import closeness as C
from ..models.requirements import (
    KAnonymity,
    StochasticTCloseness,
    requirement_targets,
    validate_requirements,
)
from ..release import Release, provenance
from .mondrian import mondrian

__all__ = ["stochastic"]


def stochastic(
    instance,
    requirements,
    *,
    clip: bool = False,
    cut_rule: str = "median",
    seed=None,
    time_limit=None,
) -> Release:
    """k-anonymity plus an epsilon-DP mask of the confidential attribute, for stochastic
    t-closeness [1]_ (Def. 3, Prop. 1).

    Parameters
    ----------
    instance : Instance
    requirements : sequence of Requirement
        One :class:`~fairanon.StochasticTCloseness` (t, epsilon, public bounds of
        numeric targets, joint or per attribute) and optionally
        :class:`~fairanon.KAnonymity`.
    clip : bool, default=False
        Clip noisy numeric values to the public bounds (post-processing: the guarantee
        is unchanged, the exact distance can only shrink).
    cut_rule : {"median", "balanced"}, default="median"
        Passed to :func:`~fairanon.heuristics.mondrian.mondrian`.
    seed : None, int or numpy.random.Generator
        Draws the noise; the same seed gives the same release.
    time_limit : float, optional
        Passed to Mondrian.

    Returns
    -------
    Release
        Quasi-identifiers generalized by Mondrian with k' = max(k, the smallest class
        size giving stochastic t), the targets masked. FEASIBLE, or INFEASIBLE when no
        class size reaches t or Mondrian cannot meet k'. Provenance: ``epsilon``,
        ``k_used``, ``noise`` (mechanism and scale per target), ``stochastic_t``
        (Prop. 1 at the smallest released class, a float) and ``exact_stochastic_t``
        (per target, the exact distance of the masked distributions on these data,
        docs/papers.md, DS-7).

    Raises
    ------
    IncompatibleRequirementError
        Without one StochasticTCloseness, with other requirements, or joint masking of
        non-numeric targets.
    InvalidParameterError
        A numeric target without public bounds, or with values outside them.

    Notes
    -----
    t_E = e^eps - (|E|/N)(e^eps - 1) decreases in |E|, so the smallest class size with
    t_E <= t is k_t = ceil(N (e^eps - t) / (e^eps - 1)), decided exactly
    (:func:`fairanon.models.closeness.min_class_size`); for t >= e^eps any class size
    works. The noise scale uses the public range, never the data's (P23); joint masking
    (DS approach i) uses Δ = Σ_j (U_j - L_j) with one epsilon for all targets, per
    attribute masking (approach ii) Δ_j = U_j - L_j and epsilon per attribute (P22).
    Cost: Mondrian's plus O(N) for the noise and O(N + U C) for the exact distance
    (U distinct values, C classes).

    References
    ----------
    .. [1] J. Domingo-Ferrer, J. Soria-Comas. From t-closeness to differential privacy
       and vice versa in data anonymization. Knowledge-Based Systems 74, 2015.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame({"age": rng.integers(20, 70, 1000), "salary": rng.integers(0, 100, 1000)})
    >>> inst = fa.Instance(df, fa.Schema([fa.Attribute("age", kind="numeric"),
    ...                                   fa.Attribute("salary", role="sensitive", kind="numeric")]))
    >>> req = fa.StochasticTCloseness(2, 1, bounds=(0, 100))
    >>> rel = stochastic(inst, [req], seed=0)
    >>> rel.provenance["k_used"], rel.provenance["stochastic_t"] <= 2  # N (e - 2)/(e - 1)
    (419, True)
    >>> fa.verify(inst, rel, [req]).passed
    True
    """
    started = time.perf_counter()
    if not isinstance(instance, Instance):
        raise InvalidParameterError(
            f"The 'instance' parameter of stochastic must be an Instance. Got {type(instance).__name__} instead."
        )
    requirements = validate_requirements(instance, requirements, caller="stochastic")
    if not isinstance(clip, bool):
        raise InvalidParameterError(f"The 'clip' parameter of stochastic must be a bool. Got {clip!r} instead.")
    rng = check_random_state(seed)
    masks = [r for r in requirements if isinstance(r, StochasticTCloseness)]
    others = [r for r in requirements if not isinstance(r, (StochasticTCloseness, KAnonymity))]
    if others or len(masks) != 1:
        raise IncompatibleRequirementError(
            "stochastic enforces one StochasticTCloseness with an optional KAnonymity; got "
            f"{[str(r) for r in requirements]}."
        )
    req = masks[0]
    k = max([r.k for r in requirements if isinstance(r, KAnonymity)], default=1)
    schema = instance.schema
    targets = requirement_targets(schema, req)
    spans = {}
    for name in targets:
        attr = schema[name]
        if attr.kind != "numeric":
            if req.joint and len(targets) > 1:
                raise IncompatibleRequirementError(
                    f"Joint masking adds Laplace noise to a vector of numbers; {name!r} is {attr.kind}. "
                    "Use joint=False (each attribute masked with its own epsilon)."
                )
            continue
        pair = req.bounds_of(name)
        if pair is None:
            raise InvalidParameterError(
                f"{req} needs public bounds (L, U) of numeric attribute {name!r} for the Laplace "
                "noise scale (U - L)/epsilon; bounds are never read from the data."
            )
        values = instance.codes(name)
        if values.min() < pair[0] or values.max() > pair[1]:
            raise InvalidParameterError(
                f"Values of {name!r} lie in [{format(values.min(), 'g')}, {format(values.max(), 'g')}], "
                f"outside the public bounds [{pair[0]}, {pair[1]}] of {req}: the noise would not be epsilon-DP."
            )
        spans[name] = float(pair[1] - pair[0])

    n = instance.n_rows
    k_t = C.min_class_size(req.t, req.epsilon, n)
    k_used = max(k, k_t)
    params = {"clip": clip, "cut_rule": cut_rule, "time_limit": time_limit}
    base = mondrian(instance, [KAnonymity(k_used)], cut_rule=cut_rule, seed=seed, time_limit=time_limit)
    table = base.table.copy()
    sizes = np.bincount(np.unique(base.groups, return_inverse=True)[1].reshape(-1))
    noise, exact = {}, {}
    for name in targets:
        attr = schema[name]
        values = instance.codes(name)
        if attr.kind == "numeric":
            delta = sum(spans.values()) if req.joint else spans[name]
            scale = delta / float(req.epsilon)
            masked = values + rng.laplace(0.0, scale, size=n)
            if clip:
                low, high = req.bounds_of(name)
                masked = np.clip(masked, float(low), float(high))
            table[name] = masked
            noise[name] = {"mechanism": "laplace", "scale": scale}
            exact[name] = float(C.laplace_mixture_distance(values, base.groups, scale).max())
        else:
            m = len(attr.domain)
            keep = C.randomized_response_keep(req.epsilon, m)
            flip = rng.random(n) >= keep
            # A uniform other value: shift by 1..m-1 positions in the domain.
            shift = rng.integers(1, max(m, 2), size=n)
            masked = np.where(flip, (values + shift) % m, values)
            table[name] = pd.Categorical.from_codes(masked, list(attr.domain))
            noise[name] = {"mechanism": "randomized_response", "keep": keep}
            exact[name] = float(C.randomized_response_distance(values, base.groups, m, req.epsilon).max())
    status, reason = base.status, base.reason
    return Release(
        table=table,
        groups=base.groups,
        status=status,
        reason=reason,
        provenance=provenance(
            "stochastic", params, requirements, seed, started,
            epsilon=req.epsilon, k_used=k_used, noise=noise,
            stochastic_t=float(C.stochastic_bound(int(sizes.min()), n, req.epsilon)),
            exact_stochastic_t=exact, mondrian=dict(base.provenance.get("params", {})),
            time_limit_reached=bool(base.provenance.get("time_limit_reached", False)),
        ),
    )
