"""Per-tuple property vectors (Dewri et al., EDBT 2009; docs/papers.md, DW-2 and DW-3).

One value per record of its class size, re-identification risk, sensitive frequency,
distinct sensitive values, attribute disclosure, Iyengar loss, the paper's utility and
the t-closeness distance of its class (R. Dewri, I. Ray, I. Ray, D. Whitley, On the
comparison of microdata disclosure control algorithms, EDBT 2009).

Suppressed records (every generalizable quasi-identifier released as ``*``) are read
under one of the three policies of docs/papers.md, DW-8 (:data:`SUPPRESSION_POLICIES`):
``as_class`` (the literal grouping: they form a class of their own), ``as_population``
(an all-``*`` row is consistent with everyone: its class is the whole table) or
``exclude`` (their values are left undefined and reported apart);
:func:`suppression_summary` says how many there are and warns when their class is
smaller than k.
"""

from __future__ import annotations

import warnings
from fractions import Fraction

import numpy as np
import pandas as pd

from ..._validation import check_option
from ...instances.instance import Instance
from ...release import Release
from .classes import NUMERIC_LOSSES, _prepare, _Prepared

__all__ = ["SUPPRESSION_POLICIES", "property_vectors", "suppression_summary"]

#: How suppressed records enter the property vectors (docs/papers.md, DW-8).
SUPPRESSION_POLICIES = ("as_class", "as_population", "exclude")


def property_vectors(
    instance: Instance,
    release: Release,
    *,
    sensitive: str | None = None,
    numeric_loss: str = "width",
    exact: bool = False,
    suppression: str = "as_class",
    k: int | None = None,
) -> pd.DataFrame:
    """Per-tuple property vectors of Dewri et al. [1]_ (docs/papers.md, DW-2 and DW-3).

    Parameters
    ----------
    instance, release
        As in :func:`~fairanon.models.metrics.equivalence_classes`.
    sensitive : str, optional
        The attribute of the sensitive-based columns; default: the first sensitive
        attribute, else the decision attribute. Its original values are used. Without
        one, those columns are left out.
    numeric_loss : {"width", "values"}, default="width"
        Numeric cells of ``loss``: Iyengar's clipped width, or the categorical form
        counting the distinct data values covered (Iyengar's form, docs/papers.md, DW-2).
    exact : bool, default=False
        Fractions (object columns) instead of floats for risk, adisc, loss,
        util_paper and tclose.
    suppression : {"as_class", "as_population", "exclude"}, default="as_class"
        How suppressed records (every generalizable quasi-identifier ``*``) are read
        (docs/papers.md, DW-8): the literal grouping (they form their own class), the
        matching reading (an all-``*`` row is consistent with everyone: size N, risk
        1/N, and the sensitive columns of the whole table), or left undefined (NaN,
        None when `exact`) so that comparisons leave them out.
    k : int, optional
        With "as_class", a UserWarning is issued when a class of suppressed records
        holds fewer than k rows (:func:`suppression_summary`).

    Returns
    -------
    pandas.DataFrame
        Indexed by record id in the instance's row order, with columns

        - ``size``: |E(i)|, the class size (PV-size, higher is better);
        - ``risk``: 1/|E(i)|, prosecutor-model re-identification risk (PV-reid);
        - ``sfreq``: rows of E(i) sharing i's sensitive value (PV-sfreq);
        - ``ldist``: distinct sensitive values in E(i) (PV-ldist);
        - ``adisc``: sfreq/size, attribute-disclosure probability (PV-adisc);
        - ``loss``: Σ_j of the per-cell Iyengar loss of
          :func:`~fairanon.models.metrics.loss_metric` (PV-loss);
        - ``util_paper``: Σ_j (1 − M_ij/M_j), the paper's reconstructed utility
          (PV-util; numeric M_ij counts the data values covered);
        - ``tclose``: ½ Σ_v |P_E(v) − Q(v)|, the equal-distance EMD between the class's
          and the table's sensitive distributions (PV-tclose).

    Notes
    -----
    O(n) plus O(#classes · d) Fraction operations when `exact`. Loss and utility are
    those of the released cells under every policy.

    References
    ----------
    .. [1] R. Dewri, I. Ray, I. Ray, D. Whitley. On the comparison of microdata
       disclosure control algorithms. EDBT 2009.

    Examples
    --------
    >>> import pandas as pd
    >>> from fairanon.instances import Attribute, Instance, Schema
    >>> from fairanon.release import Release, generalize_partition
    >>> df = pd.DataFrame({"age": [20, 30, 40], "d": ["a", "b", "a"]})
    >>> inst = Instance(df, Schema([Attribute("age", kind="numeric"),
    ...                             Attribute("d", role="sensitive")]))
    >>> rel = Release(generalize_partition(inst, [0, 0, 1]), groups=[0, 0, 1])
    >>> pv = property_vectors(inst, rel, exact=True)
    >>> pv["size"].tolist(), pv["sfreq"].tolist(), pv["ldist"].tolist()
    ([2, 2, 1], [1, 1, 1], [2, 2, 1])
    >>> [str(v) for v in pv["tclose"]]
    ['1/6', '1/6', '1/3']
    """
    check_option(numeric_loss, "numeric_loss", "property_vectors", NUMERIC_LOSSES)
    check_option(suppression, "suppression", "property_vectors", SUPPRESSION_POLICIES)
    p = _prepare(instance, release, "property_vectors")
    if sensitive is None:
        targets = instance.schema.default_targets()
        sensitive = targets[0] if targets else None
    else:
        check_option(sensitive, "sensitive", "property_vectors", set(instance.table.columns))
    if suppression == "as_class" and k is not None:
        summary = _suppression_summary(p, k)
        if summary["warning"]:
            warnings.warn(summary["warning"], UserWarning, stacklevel=2)
    return _property_vectors(p, sensitive, numeric_loss, exact, suppression)


def suppression_summary(
    instance: Instance, release: Release, *, k: int | None = None, policy: str = "as_class"
) -> dict:
    """The suppressed records of a release and how the property vectors read them.

    A record is suppressed when every generalizable quasi-identifier is released as
    ``*`` or another label that tells nothing (docs/metrics.md; read from the released
    table, never from ``release.suppressed``). Under the
    literal grouping they form one class per value of the attributes released
    unchanged (the protected attribute), which may hold fewer than k rows
    (docs/papers.md, DW-8).

    Parameters
    ----------
    instance, release
        As in :func:`property_vectors`.
    k : int, optional
        The k the release is meant to meet; a class of suppressed records smaller than
        k gets a warning text under the policy "as_class".
    policy : {"as_class", "as_population", "exclude"}, default="as_class"

    Returns
    -------
    dict
        ``policy``, ``suppressed`` (number of suppressed records),
        ``suppressed_classes`` (their class sizes, largest first), ``k`` and ``warning``
        (a sentence, or None).

    Examples
    --------
    >>> import pandas as pd
    >>> from fairanon.instances import Attribute, Instance, Schema
    >>> from fairanon.release import Release
    >>> inst = Instance(pd.DataFrame({"age": [20, 30, 40]}), Schema([Attribute("age", kind="numeric")]))
    >>> rel = Release(pd.DataFrame({"age": ["[20-30]", "[20-30]", "*"]}), groups=[0, 0, 1])
    >>> suppression_summary(inst, rel, k=2)["warning"]
    'The 1 suppressed record(s) form class(es) of sizes [1], smaller than k = 2, under the policy as_class (docs/papers.md, DW-8).'
    """
    check_option(policy, "policy", "suppression_summary", SUPPRESSION_POLICIES)
    p = _prepare(instance, release, "suppression_summary")
    return _suppression_summary(p, k, policy)


def _suppression_summary(p: _Prepared, k: int | None, policy: str = "as_class") -> dict:
    rows = p.suppressed_rows
    sizes = sorted(
        (int(s) for s in np.bincount(p.class_ids[rows], minlength=p.n_classes) if s), reverse=True
    )
    warning = None
    if policy == "as_class" and k is not None and sizes and sizes[-1] < k:
        warning = (
            f"The {int(rows.sum())} suppressed record(s) form class(es) of sizes {sizes}, "
            f"smaller than k = {k}, under the policy as_class (docs/papers.md, DW-8)."
        )
    return {
        "policy": policy,
        "suppressed": int(rows.sum()),
        "suppressed_classes": sizes,
        "k": k,
        "warning": warning,
    }


def _class_sum(p: _Prepared, measure: str, numeric_loss: str, exact: bool):
    """Per class: Σ_j of the per-cell value (labels are constant within a class)."""
    rep = p.class_first_row
    if exact:
        total = [Fraction(0)] * p.n_classes
        for col in p.qi.values():
            values = col.cell_values(measure, numeric_loss, True)
            labels = col.codes[rep]
            total = [t + values[l] for t, l in zip(total, labels)]
        return np.array(total, dtype=object)
    total = np.zeros(p.n_classes)
    for col in p.qi.values():
        total += col.cell_values(measure, numeric_loss, False)[col.codes[rep]]
    return total


def _property_vectors(
    p: _Prepared, sensitive: str | None, numeric_loss: str, exact: bool, suppression: str
) -> pd.DataFrame:
    n = p.n
    ids = p.class_ids
    sizes = p.class_sizes.astype(np.int64)
    size = sizes[ids]
    out: dict[str, np.ndarray] = {"size": size}
    if exact:
        risk_c = np.array([Fraction(1, int(s)) for s in sizes], dtype=object)
        out["risk"] = risk_c[ids]
    else:
        out["risk"] = 1.0 / size
    if sensitive is not None:
        raw = p.instance.codes(sensitive)
        s_codes, s_uniq = pd.factorize(raw if p.pos is None else raw[p.pos])
        m_s = max(len(s_uniq), 1)
        s_codes = s_codes.astype(np.int64, copy=False)
        pair, pair_uniq = pd.factorize(ids * m_s + s_codes)
        pair_count = np.bincount(pair).astype(np.int64)
        pair_class = (pair_uniq // m_s).astype(np.int64)
        pair_value = (pair_uniq % m_s).astype(np.int64)
        out["sfreq"] = pair_count[pair]
        out["ldist"] = np.bincount(pair_class, minlength=p.n_classes)[ids]
        q = np.bincount(s_codes, minlength=m_s).astype(np.int64)
        # |E|·n·D = ½ (|E|·n + Σ_{v ∈ E} (|c_v·n − n_v·|E|| − n_v·|E|))
        e = sizes[pair_class]
        term = np.abs(pair_count * n - q[pair_value] * e) - q[pair_value] * e
        if exact:
            adisc_p = np.array(
                [Fraction(int(c), int(s)) for c, s in zip(pair_count, e)], dtype=object
            )
            out["adisc"] = adisc_p[pair]
            num = np.zeros(p.n_classes, dtype=np.int64)
            np.add.at(num, pair_class, term)
            num += sizes * n
            tclose_c = np.array(
                [Fraction(int(a), 2 * int(s) * n) for a, s in zip(num, sizes)], dtype=object
            )
        else:
            out["adisc"] = out["sfreq"] / size
            num = np.bincount(pair_class, weights=term.astype(float), minlength=p.n_classes)
            tclose_c = (num + sizes * float(n)) / (2.0 * sizes * n)
    out["loss"] = _class_sum(p, "lm", numeric_loss, exact)[ids]
    out["util_paper"] = _class_sum(p, "util", numeric_loss, exact)[ids]
    if sensitive is not None:
        out["tclose"] = tclose_c[ids]
    rows = p.suppressed_rows
    if suppression != "as_class" and rows.any():
        if suppression == "exclude":
            # Undefined rather than 0: every comparison leaves these records out.
            out = {
                name: np.where(
                    rows, None if exact else np.nan, values.astype(object if exact else float)
                )
                for name, values in out.items()
            }
        else:
            _as_population(out, rows, n, s_codes if sensitive is not None else None, exact)
    return pd.DataFrame(
        {name: p.to_instance_order(values) for name, values in out.items()},
        index=p.instance.row_ids,
        copy=False,
    )


def _as_population(out: dict, rows: np.ndarray, n: int, s_codes, exact: bool) -> None:
    """Suppressed rows read as consistent with every record: their class is the table."""
    out["size"] = np.where(rows, n, out["size"])
    out["risk"] = np.where(rows, Fraction(1, n) if exact else 1.0 / n, out["risk"])
    if s_codes is None:
        return
    q = np.bincount(s_codes)
    own = q[s_codes]
    out["sfreq"] = np.where(rows, own, out["sfreq"])
    out["ldist"] = np.where(rows, int((q > 0).sum()), out["ldist"])
    if exact:
        adisc = np.array([Fraction(int(c), n) for c in own], dtype=object)
        out["adisc"] = np.where(rows, adisc, out["adisc"])
        out["tclose"] = np.where(rows, Fraction(0), out["tclose"])
    else:
        out["adisc"] = np.where(rows, own / n, out["adisc"])
        out["tclose"] = np.where(rows, 0.0, out["tclose"])
