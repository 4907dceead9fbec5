"""The Hierarchies page: build a quasi-identifier's generalization tree with the
library's builders (:mod:`fairanon.instances.builders`: intervals with top and bottom
coding, groupings of ordered values, masking of codes), import or export it as an ARX
CSV, and see the tree. A tree that is applied becomes the attribute's entry in the job
file's schema (:meth:`fairanon.instances.schema.Attribute.to_spec`), so the command line
re-runs the app's choice.
"""

from __future__ import annotations

import io
from collections.abc import Mapping

from fastapi import APIRouter, Request, UploadFile
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from ..exceptions import FairanonError, InvalidParameterError
from ..instances.builders import grouping_hierarchy, interval_hierarchy, masking_hierarchy, to_arx_csv, with_hierarchy
from ..instances.generalization import format_number
from ..instances.hierarchy import Hierarchy

router = APIRouter()

#: The builders a form can name: (name, label).
BUILDERS = (("intervals", "intervals (widths, top and bottom coding)"),
            ("grouping", "ordered groupings"),
            ("masking", "masking of characters (e.g. postcodes)"))
#: The largest hierarchy file read (bytes).
MAX_HIERARCHY = 20 * 2**20
#: Children shown per node in the preview (the rest are counted).
SHOWN_CHILDREN = 8


def _items(text: str) -> list:
    """A comma-separated field as a list: whole numbers as ints, the rest as typed (so
    that the builder's message names a bad item)."""
    out: list = []
    for item in str(text).replace(";", ",").split(","):
        item = item.strip()
        if item:
            out.append(int(item) if item.lstrip("-").isdigit() else item)
    return out


def _optional(text) -> str | None:
    text = str(text or "").strip()
    return text or None


def build(instance, name: str, form: Mapping) -> Hierarchy:
    """The tree the builder form describes for attribute `name` of `instance`.

    Raises the builder's :class:`~fairanon.exceptions.InvalidParameterError` for a bad field."""
    if instance is None:
        raise InvalidParameterError("Choose the data first (Data page).")
    if name not in instance.schema.names:
        raise InvalidParameterError(f"{name!r} is not an attribute of {instance.name!r}.")
    attr = instance.schema[name]
    column = instance.table[name].dropna()
    builder = str(form.get("builder", ""))
    if builder == "intervals":
        return interval_hierarchy(column, _items(form.get("widths", "")), origin=_optional(form.get("origin")) or 0,
                                  bottom=_optional(form.get("bottom")), top=_optional(form.get("top")))
    if builder == "grouping":
        order = attr.domain if attr.domain is not None else [format_number(v) for v in sorted(column.unique())]
        return grouping_hierarchy(order, _items(form.get("sizes", "")))
    if builder == "masking":
        levels = _optional(form.get("levels"))
        return masking_hierarchy(column, levels=int(levels) if levels and levels.isdigit() else levels,
                                 from_right=form.get("direction", "right") != "left")
    raise InvalidParameterError(f"The builder must be one of {[b for b, _ in BUILDERS]}. Got {builder!r} instead.")


def read_arx_csv(content: bytes, sep: str) -> Hierarchy:
    """A tree from the bytes of an uploaded ARX hierarchy CSV."""
    if len(content) > MAX_HIERARCHY:
        raise InvalidParameterError(f"The hierarchy file is larger than {MAX_HIERARCHY // 2**20} MB.")
    if not isinstance(sep, str) or len(sep) != 1:
        raise InvalidParameterError(f"The separator must be one character. Got {sep!r} instead.")
    try:
        text = content.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InvalidParameterError(f"The hierarchy file is not UTF-8 text ({exc.reason}).") from None
    import csv

    try:
        return Hierarchy.from_arx_csv(io.StringIO(text, newline=""), sep=sep)
    except csv.Error as exc:
        raise InvalidParameterError(f"The hierarchy file is not a valid CSV file: {exc}.") from None


def levels(hierarchy: Hierarchy) -> list[tuple[int, int]]:
    """(depth, number of nodes) per depth of the tree, root first."""
    counts: dict[int, int] = {}
    for depth in hierarchy.depth.values():
        counts[depth] = counts.get(depth, 0) + 1
    return sorted(counts.items())


def _attribute(request: Request, name: str):
    instance = request.app.state.session.instance
    if instance is None or name not in instance.schema.names:
        return None
    return instance.schema[name]


@router.get("/hierarchies", response_class=HTMLResponse)
async def hierarchies_page(request: Request, attr: str | None = None, error: str | None = None,
                           status_code: int = 200, form: Mapping | None = None):
    session = request.app.state.session
    instance = session.instance
    names = [a.name for a in instance.schema if a.is_qi] if instance is not None else []
    if attr is None and names:
        attr = names[0]
    chosen = _attribute(request, attr) if attr else None
    if attr and chosen is None and error is None:
        error, status_code = f"{attr!r} is not an attribute of the data.", 404
    return request.app.state.render(request, "hierarchies.html", status_code, names=names, chosen=chosen,
                                    builders=BUILDERS, error=error, form=form or {}, levels=levels,
                                    shown=SHOWN_CHILDREN)


@router.post("/hierarchies/preview", response_class=HTMLResponse)
async def preview(request: Request):
    form = await request.form()
    try:
        tree = build(request.app.state.session.instance, str(form.get("attr", "")), form)
    except FairanonError as exc:  # the message is the answer (htmx swaps 2xx answers only)
        return request.app.state.render(request, "tree.html", tree=None, error=str(exc))
    return request.app.state.render(request, "tree.html", tree=tree, error=None, levels=levels,
                                    shown=SHOWN_CHILDREN)


@router.post("/hierarchies/apply", response_class=HTMLResponse)
async def apply(request: Request):
    form = await request.form()
    name = str(form.get("attr", ""))
    session = request.app.state.session
    try:
        tree = build(session.instance, name, form)
        session.set_attribute(with_hierarchy(session.instance.schema[name], tree))
    except FairanonError as exc:
        return await hierarchies_page(request, attr=name, error=str(exc), status_code=400, form=form)
    return RedirectResponse(f"/hierarchies?attr={name}", status_code=303)


@router.post("/hierarchies/import", response_class=HTMLResponse)
async def import_csv(request: Request, file: UploadFile):
    form = await request.form()
    name = str(form.get("attr", ""))
    session = request.app.state.session
    try:
        attr = _attribute(request, name)
        if attr is None:
            raise InvalidParameterError(f"{name!r} is not an attribute of the data.")
        tree = read_arx_csv(await file.read(MAX_HIERARCHY + 1), str(form.get("sep", ";")))
        session.set_attribute(with_hierarchy(attr, tree))
    except FairanonError as exc:
        return await hierarchies_page(request, attr=name or None, error=str(exc), status_code=400)
    return RedirectResponse(f"/hierarchies?attr={name}", status_code=303)


@router.get("/hierarchies/{name}.csv")
async def export_csv(request: Request, name: str):
    attr = _attribute(request, name)
    if attr is None or attr.hierarchy is None:
        what = f"hierarchy of {name!r}" + ("" if attr is None else f" (a {attr.kind} attribute without a tree)")
        return request.app.state.render(request, "missing.html", 404, what=what)
    from ..instances.files import safe_file_name

    return Response(to_arx_csv(attr.hierarchy), media_type="text/csv",
                    headers={"Content-Disposition": f'attachment; filename="{safe_file_name(name, "hierarchy")}.csv"'})
