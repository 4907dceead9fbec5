"""Per-tuple property vectors (Dewri et al., EDBT 2009; comparison spec §1.2).

One value per record of its class size, re-identification risk, sensitive frequency,
distinct sensitive values, attribute disclosure, Iyengar loss, the paper's utility and
the t-closeness distance of its class (R. Dewri, I. Ray, I. Ray, D. Whitley, On the
comparison of microdata disclosure control algorithms, EDBT 2009).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pandas as pd

from ..._validation import check_option
from ...instances.instance import Instance
from ...release import Release
from .classes import NUMERIC_LOSSES, _prepare, _Prepared

__all__ = ["property_vectors"]


def property_vectors(
    instance: Instance,
    release: Release,
    *,
    sensitive: str | None = None,
    numeric_loss: str = "width",
    exact: bool = False,
) -> pd.DataFrame:
    """Per-tuple property vectors of Dewri et al. [1]_ (comparison spec §1.2).

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
        counting the distinct data values covered (the spec's PV-loss).
    exact : bool, default=False
        Fractions (object columns) instead of floats for risk, adisc, loss,
        util_paper and tclose.

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
    O(n) plus O(#classes · d) Fraction operations when `exact`. Suppressed rows form
    one class of the released table (policy "as_class", comparison spec P-14).

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
    p = _prepare(instance, release, "property_vectors")
    if sensitive is None:
        targets = instance.schema.default_targets()
        sensitive = targets[0] if targets else None
    else:
        check_option(sensitive, "sensitive", "property_vectors", set(instance.table.columns))
    return _property_vectors(p, sensitive, numeric_loss, exact)


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
    p: _Prepared, sensitive: str | None, numeric_loss: str, exact: bool
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
    return pd.DataFrame(
        {name: p.to_instance_order(values) for name, values in out.items()},
        index=p.instance.row_ids,
        copy=False,
    )
