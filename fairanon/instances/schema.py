"""Attribute roles and types, and the schema that binds them to a table's columns."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from ..exceptions import SchemaError
from .hierarchy import Hierarchy, IntervalHierarchy
from .texts import value_text

__all__ = ["Attribute", "Schema", "ROLES", "KINDS"]

#: Roles an attribute can play.
#:
#: identifier   dropped on release
#: qi           quasi-identifier, generalized by the algorithms
#: protected    the PD attribute of discrimination analysis; a quasi-identifier that is
#:              released unchanged (generalizing it would make every discrimination
#:              measure undefined, Ruggieri §5)
#: sensitive    released unchanged; the target of l-diversity and t-closeness
#: decision     the binary decision of discrimination analysis (one value is negative);
#:              released unchanged; the l/t target when no attribute is sensitive
#: insensitive  released unchanged and used by no requirement
#: ignore       left out of the release
#: weight       a sampling weight (numeric, > 0): the number of population records the
#:              record stands for, as sdcMicro's weightVar; left out of the release and
#:              read by the risk models (individual risk: F_k = sum of the weights)
ROLES = ("identifier", "qi", "protected", "sensitive", "decision", "insensitive", "ignore", "weight")
#: Value types: numbers, categories with a total order, categories with a hierarchy.
KINDS = ("numeric", "ordered", "categorical")


@dataclass(frozen=True)
class Attribute:
    """One column's role and type.

    Parameters
    ----------
    name : str
        The column name.
    role : {"identifier", "qi", "protected", "sensitive", "decision", "insensitive", "ignore", "weight"}
    kind : {"numeric", "ordered", "categorical"}
        A weight is numeric.
    hierarchy : Hierarchy, optional
        For categorical attributes (default: a flat ``*`` over the values present); also
        allowed for ordered ones.
    order : sequence of str, optional
        The total order of an ordered attribute (default: sorted values present).
    intervals : IntervalHierarchy, optional
        Fixed-width interval levels of a numeric attribute (for full-domain methods).
    protected : sequence of str
        The protected values of the PD attribute (role "protected").
    negative : str, optional
        The negative value of the decision attribute (role "decision").
    """

    name: str
    role: str = "qi"
    kind: str = "categorical"
    hierarchy: Hierarchy | None = None
    order: tuple[str, ...] | None = None
    intervals: IntervalHierarchy | None = None
    protected: tuple[str, ...] = ()
    negative: str | None = None

    def __post_init__(self):
        if self.role not in ROLES:
            raise SchemaError(
                f"Attribute {self.name!r}: role must be one of {', '.join(ROLES)}; got {self.role!r}."
            )
        if self.kind not in KINDS:
            raise SchemaError(
                f"Attribute {self.name!r}: type must be one of {', '.join(KINDS)}; got {self.kind!r}."
            )
        for key in ("order", "protected"):
            value = getattr(self, key)
            if isinstance(value, str) or not (value is None or isinstance(value, (list, tuple))):
                raise SchemaError(
                    f"Attribute {self.name!r}: {key} must be a list of values; got {value!r}."
                )
        if self.order is not None:
            order = tuple(value_text(v) for v in self.order)
            twice = sorted(v for v, n in Counter(order).items() if n > 1)
            if twice:
                raise SchemaError(
                    f"Attribute {self.name!r}: the order lists {twice} more than once."
                )
            object.__setattr__(self, "order", order)
        object.__setattr__(self, "protected", tuple(value_text(v) for v in self.protected))
        if self.negative is not None:
            object.__setattr__(self, "negative", value_text(self.negative))
        if self.role == "protected" and not self.protected:
            raise SchemaError(f"Attribute {self.name!r} is the protected attribute but names no protected value.")
        if self.role == "decision" and self.negative is None:
            raise SchemaError(f"Attribute {self.name!r} is the decision attribute but names no negative value.")
        if self.role in ("protected", "decision") and self.kind == "numeric":
            what = ("names the protected group's values" if self.role == "protected"
                    else "names its negative value")
            raise SchemaError(
                f"Attribute {self.name!r} is the {self.role} attribute, which {what}: "
                f"declare it categorical (type: categorical), not numeric; its values, "
                f"numbers included, are then read as text (e.g. "
                f"{'protected: [1]' if self.role == 'protected' else 'negative: 0'})."
            )
        if self.role == "weight" and self.kind != "numeric":
            raise SchemaError(f"Attribute {self.name!r} holds sampling weights, which are numbers: declare it "
                              f"numeric (type: numeric), not {self.kind}.")
        if self.kind == "numeric" and (self.hierarchy is not None or self.order is not None):
            raise SchemaError(f"Numeric attribute {self.name!r} takes intervals, not a hierarchy or an order.")
        if self.kind != "numeric" and self.intervals is not None:
            raise SchemaError(f"Only numeric attributes take intervals; {self.name!r} is {self.kind}.")

    @property
    def is_qi(self) -> bool:
        """Whether the attribute is part of the quasi-identifier (qi or protected)."""
        return self.role in ("qi", "protected")

    @property
    def released(self) -> bool:
        return self.role not in ("identifier", "ignore", "weight")

    @property
    def read(self) -> bool:
        """Whether an instance reads the column's values: identifiers and ignored columns
        are kept beside the table as they are (a missing value in them is no error)."""
        return self.role not in ("identifier", "ignore")

    @property
    def domain(self) -> tuple[str, ...] | None:
        """The ordered domain of a categorical or ordered attribute (None if numeric)."""
        if self.kind == "ordered":
            return self.order
        if self.kind == "categorical" and self.hierarchy is not None:
            return self.hierarchy.leaves
        return None

    def with_(self, **changes) -> "Attribute":
        return replace(self, **changes)

    def to_spec(self) -> dict:
        """The job-file entry :meth:`from_spec` reads back as this attribute (a
        hierarchy as its rows, one per leaf, ARX's layout)."""
        spec: dict = {"role": self.role, "type": self.kind}
        if self.order is not None:
            spec["order"] = list(self.order)
        if self.hierarchy is not None:
            spec["hierarchy"] = self.hierarchy.to_levels()
        if self.intervals is not None:
            spec["intervals"] = {"widths": list(self.intervals.widths), "origin": self.intervals.origin}
        if self.protected:
            spec["protected"] = list(self.protected)
        if self.negative is not None:
            spec["negative"] = self.negative
        return spec

    @classmethod
    def from_spec(cls, name: str, spec: Mapping, base_dir: str | None = None) -> "Attribute":
        """Build an attribute from a job-file mapping (see the README for the keys)."""
        import os

        if spec is None:
            spec = {}
        if not isinstance(spec, Mapping):
            key = "role" if spec in ROLES else "type" if spec in KINDS else None
            hint = f"write `{name}: {{{key}: {spec}}}`" if key else "for example `{role: qi, type: numeric}`"
            raise SchemaError(f"Attribute {name!r}: its entry must be a mapping of keys; got {spec!r}: {hint}.")
        spec = dict(spec)
        known = {"role", "type", "kind", "hierarchy", "hierarchy_sep", "order", "intervals", "protected", "negative"}
        unknown = set(spec) - known
        if unknown:
            raise SchemaError(
                f"Attribute {name!r}: unknown keys {sorted(unknown)}; allowed: {sorted(known)}."
            )
        kind = spec.get("type", spec.get("kind"))
        hier = spec.get("hierarchy")
        sep = spec.get("hierarchy_sep", ";")
        if not isinstance(sep, str) or len(sep) != 1:
            raise SchemaError(f"Attribute {name!r}: hierarchy_sep must be one character; got {sep!r}.")
        if isinstance(hier, str):
            path = hier if base_dir is None or os.path.isabs(hier) else os.path.join(base_dir, hier)
            hier = Hierarchy.from_arx_csv(path, sep=sep)
        elif isinstance(hier, Mapping):
            hier = Hierarchy.from_mapping(hier)
        elif isinstance(hier, list):
            hier = Hierarchy.from_levels(hier)
        elif hier is not None and not isinstance(hier, Hierarchy):
            raise SchemaError(f"Attribute {name!r}: a hierarchy must be a mapping, rows or a CSV path.")
        intervals = _intervals(name, spec.get("intervals"))
        for key in ("order", "protected"):
            value = spec.get(key)
            if value is not None and not isinstance(value, (str, list, tuple)):
                raise SchemaError(f"Attribute {name!r}: {key} must be a list of values; got {value!r}.")
        if isinstance(spec.get("order"), str):
            raise SchemaError(f"Attribute {name!r}: order must be a list of values; got {spec['order']!r}.")
        if kind is None:
            kind = ("numeric" if spec.get("role") == "weight" else
                    "ordered" if spec.get("order") is not None else "categorical")
        protected = spec.get("protected", ())
        if isinstance(protected, str):
            protected = (protected,)
        return cls(
            name=name,
            role=spec.get("role", "qi"),
            kind=kind,
            hierarchy=hier,
            order=spec.get("order"),
            intervals=intervals,
            protected=tuple(protected),
            negative=spec.get("negative"),
        )


def _intervals(name: str, spec) -> IntervalHierarchy | None:
    """The interval ladder of a job-file entry: a list of widths, or a mapping with
    ``widths`` and an optional ``origin``."""
    if spec is None or isinstance(spec, IntervalHierarchy):
        return spec
    usage = "give a list of widths such as [5, 10, 20], or {widths: [5, 10, 20], origin: 0}"
    origin = 0
    if isinstance(spec, Mapping):
        unknown = set(spec) - {"widths", "origin"}
        if unknown or "widths" not in spec:
            problem = f"unknown keys {sorted(unknown)}" if unknown else "no 'widths'"
            raise SchemaError(f"Attribute {name!r}: intervals has {problem}; {usage}.")
        widths, origin = spec["widths"], spec.get("origin", 0)
    else:
        widths = spec
    numbers = widths if isinstance(widths, (list, tuple)) else [widths]
    if not isinstance(widths, (list, tuple)) or not all(_is_number(w) for w in numbers) or not _is_number(origin):
        raise SchemaError(f"Attribute {name!r}: intervals must be numbers; got {spec!r}; {usage}.")
    try:
        return IntervalHierarchy(tuple(widths), float(origin))
    except SchemaError as exc:
        raise SchemaError(f"Attribute {name!r}: {exc}") from None


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


@dataclass(frozen=True)
class Schema:
    """The attributes of an instance, in column order.

    >>> s = Schema([Attribute("age", kind="numeric"), Attribute("disease", role="sensitive")])
    >>> s.qi, s.sensitive
    (('age',), ('disease',))
    """

    attributes: tuple[Attribute, ...] = field(default_factory=tuple)

    def __init__(self, attributes: Iterable[Attribute]):
        try:
            attrs = tuple(attributes)
        except TypeError:
            attrs = None
        if attrs is None or not all(isinstance(a, Attribute) for a in attrs):
            raise SchemaError(
                "A Schema takes a list of Attribute, e.g. Schema([Attribute('age', "
                f"kind='numeric')]). Got {attributes!r} instead."
            )
        names = [a.name for a in attrs]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise SchemaError(f"Attributes named more than once: {dupes}.")
        weights = [a.name for a in attrs if a.role == "weight"]
        if len(weights) > 1:
            raise SchemaError(f"At most one weight attribute is supported; found {weights}.")
        for role in ("protected", "decision"):
            found = [a.name for a in attrs if a.role == role]
            if len(found) > 1:
                raise SchemaError(
                    f"At most one {role} attribute is supported; found {found}. "
                    "Binarize or combine them first."
                )
        object.__setattr__(self, "attributes", attrs)

    def __getitem__(self, name: str) -> Attribute:
        for a in self.attributes:
            if a.name == name:
                return a
        raise SchemaError(f"Unknown attribute {name!r}; the schema has {list(self.names)}.")

    def __contains__(self, name: object) -> bool:
        return any(a.name == name for a in self.attributes)

    def __iter__(self):
        return iter(self.attributes)

    def __len__(self) -> int:
        return len(self.attributes)

    def _with_role(self, *roles: str) -> tuple[str, ...]:
        return tuple(a.name for a in self.attributes if a.role in roles)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(a.name for a in self.attributes)

    @property
    def qi(self) -> tuple[str, ...]:
        """Every quasi-identifier, the protected attribute included."""
        return self._with_role("qi", "protected")

    @property
    def generalizable(self) -> tuple[str, ...]:
        """The quasi-identifiers an algorithm may generalize (role "qi")."""
        return self._with_role("qi")

    @property
    def sensitive(self) -> tuple[str, ...]:
        return self._with_role("sensitive")

    @property
    def protected(self) -> str | None:
        found = self._with_role("protected")
        return found[0] if found else None

    @property
    def decision(self) -> str | None:
        found = self._with_role("decision")
        return found[0] if found else None

    @property
    def weight(self) -> str | None:
        """The sampling-weight attribute (role "weight"), or None."""
        found = self._with_role("weight")
        return found[0] if found else None

    @property
    def released(self) -> tuple[str, ...]:
        return tuple(a.name for a in self.attributes if a.released)

    @property
    def unchanged(self) -> tuple[str, ...]:
        """Released attributes that must be published exactly as they are."""
        return self._with_role("protected", "sensitive", "decision", "insensitive")

    def default_targets(self) -> tuple[str, ...]:
        """The attributes l-diversity and t-closeness protect when none is named:
        the sensitive ones, else the decision attribute (Ruggieri's mapping)."""
        if self.sensitive:
            return self.sensitive
        return (self.decision,) if self.decision else ()

    def replace(self, attribute: Attribute) -> "Schema":
        return Schema([attribute if a.name == attribute.name else a for a in self.attributes])

    @classmethod
    def from_spec(cls, spec: Mapping[str, Mapping] | Sequence[Mapping], base_dir: str | None = None) -> "Schema":
        """Build a schema from ``{name: {role:, type:, ...}}`` or a list of such mappings
        with a ``name`` key."""
        if isinstance(spec, Mapping):
            items = list(spec.items())
        elif isinstance(spec, (list, tuple)):
            items = []
            for entry in spec:
                if not isinstance(entry, Mapping) or "name" not in entry:
                    raise SchemaError(f"Each attribute entry needs a 'name'; got {entry!r}.")
                entry = dict(entry)
                items.append((entry.pop("name"), entry))
        else:
            raise SchemaError(f"A schema must be a mapping of attributes; got {type(spec).__name__}.")
        return cls([Attribute.from_spec(str(n), s, base_dir) for n, s in items])
