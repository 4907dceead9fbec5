"""What an instance looks like before it is anonymized: sizes, domains, distinct
quasi-identifier combinations and, for a protected/decision pair, the 4-fold table,
the global negative rate p- and Ruggieri's τ(R)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from ..exceptions import InvalidParameterError
from ..instances.instance import Instance
from . import measures as M
from .released import classes_of

__all__ = ["describe", "format_description"]


def describe(instance: Instance) -> dict:
    """A JSON-ready description of `instance`.

    The discrimination part follows Ruggieri (Fig. 1, Defs. 6 and 17): with a = protected
    and negative, b = protected and positive, c = unprotected and negative,
    d = unprotected and positive, p- = (a + c)/n and
    τ(R) = max(|a/(a+b) - p-|, |c/(c+d) - p-|), an empty side counting 0.

    >>> d = describe(fa.load("ruggieri_loan"))
    >>> d["discrimination"]["a,b,c,d"], d["discrimination"]["p_minus"], d["discrimination"]["tau"]
    ([4, 4, 4, 5], '8/17', '1/34')
    """
    if not isinstance(instance, Instance):
        hint = f" (for a bundled data set: fa.describe(fa.load({instance!r})))" if isinstance(instance, str) else ""
        raise InvalidParameterError(
            f"The 'instance' parameter of describe must be an Instance, e.g. fa.load('adult'){hint}. "
            f"Got {type(instance).__name__} instead."
        )
    schema = instance.schema
    attributes = []
    for attr in schema:
        entry = {"name": attr.name, "role": attr.role, "type": attr.kind}
        if attr.released:
            if attr.kind == "numeric":
                values = instance.codes(attr.name)
                entry.update(distinct=int(len(np.unique(values))), min=float(values.min()), max=float(values.max()))
            else:
                present = instance.active_domain(attr.name)
                entry.update(distinct=int(present.sum()), domain=len(attr.domain))
                if attr.hierarchy is not None:
                    entry["hierarchy_height"] = attr.hierarchy.height
        if attr.protected:
            entry["protected"] = list(attr.protected)
        if attr.negative is not None:
            entry["negative"] = attr.negative
        attributes.append(entry)
    _, n_combinations = classes_of(instance.table, list(schema.qi))
    out = {
        "name": instance.name,
        "n_rows": instance.n_rows,
        "n_attributes": len(schema),
        "quasi_identifiers": list(schema.qi),
        "distinct_qi_combinations": n_combinations,
        "attributes": attributes,
    }
    if instance.dropped_rows:
        out["dropped_rows_with_missing_values"] = len(instance.dropped_rows)
    if schema.protected and schema.decision:
        prot, neg = instance.protected_mask(), instance.negative_mask()
        a, b = int((prot & neg).sum()), int((prot & ~neg).sum())
        c, d = int((~prot & neg).sum()), int((~prot & ~neg).sum())
        n = a + b + c + d
        rd = M.discrimination_exact("RD", a, b, c, d, a + c, n)
        out["discrimination"] = {
            "protected": f"{schema.protected} in {list(schema[schema.protected].protected)}",
            "negative": f"{schema.decision} = {schema[schema.decision].negative}",
            "a,b,c,d": [a, b, c, d],
            "p_minus": str(Fraction(a + c, n)),
            "p1": str(Fraction(a, a + b)) if a + b else None,
            "p2": str(Fraction(c, c + d)) if c + d else None,
            "RD": str(rd),
            "tau": str(M.tau_exact(a, b, c, d, a + c, n)),
        }
    return out


def format_description(description: dict) -> str:
    """Human-readable text of :func:`describe`'s result."""
    d = description
    lines = [
        f"Instance {d['name']!r}: {d['n_rows']} rows, {d['n_attributes']} attributes, "
        f"{len(d['quasi_identifiers'])} quasi-identifiers, {d['distinct_qi_combinations']} distinct QI combinations",
    ]
    for a in d["attributes"]:
        extra = ""
        if "min" in a:
            extra = f"{a['distinct']} distinct in [{a['min']:g}, {a['max']:g}]"
        elif "distinct" in a:
            extra = f"{a['distinct']} of {a['domain']} values present"
            if "hierarchy_height" in a:
                extra += f", hierarchy height {a['hierarchy_height']}"
        if "protected" in a:
            extra += f", protected {a['protected']}"
        if "negative" in a:
            extra += f", negative {a['negative']!r}"
        lines.append(f"  {a['name']:<22} {a['role']:<11} {a['type']:<11} {extra}")
    if "discrimination" in d:
        x = d["discrimination"]
        a, b, c, dd = x["a,b,c,d"]
        lines.append(f"Discrimination: protected {x['protected']}, negative {x['negative']}")
        lines.append("               negative  positive")
        lines.append(f"  protected    {a:>8}  {b:>8}  {a + b:>8}")
        lines.append(f"  unprotected  {c:>8}  {dd:>8}  {c + dd:>8}")
        lines.append(
            f"  p- = {float(Fraction(x['p_minus'])):.4f} ({x['p_minus']}), "
            f"RD = {float(Fraction(x['RD'])):.4f}, tau(R) = {float(Fraction(x['tau'])):.4f}"
        )
    return "\n".join(lines)
