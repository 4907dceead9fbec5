"""The Hierarchies page: build a quasi-identifier's generalization tree with the
library's builders (:mod:`fairanon.instances.builders`: intervals with top and bottom
coding, groupings of ordered values, masking of codes), import or export it as an ARX
CSV, and see the tree. A tree that is applied becomes the attribute's entry in the job
file's schema (:meth:`fairanon.instances.schema.Attribute.to_spec`), so the command line
re-runs the app's choice.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from urllib.parse import urlencode

from fastapi import APIRouter, Request, UploadFile
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from ..exceptions import FairanonError, InvalidParameterError
from ..instances.builders import (
    grouping_hierarchy,
    interval_hierarchy,
    masking_hierarchy,
    numeric_order,
    to_arx_csv,
    with_hierarchy,
)
from ..instances.files import safe_file_name
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


def _int_or_text(item: str) -> int | str:
    """A whole number as an int, anything else as typed (so that the builder's message
    names a bad item: ``--5``, ``²``)."""
    try:
        return int(item)
    except ValueError:
        return item


def _items(text: str) -> list:
    """A comma-separated field as a list of :func:`_int_or_text` items."""
    return [_int_or_text(item.strip()) for item in str(text).replace(";", ",").split(",") if item.strip()]


def _optional(text) -> str | None:
    text = str(text or "").strip()
    return text or None


def build(session, name: str, form: Mapping, data=None) -> Hierarchy:
    """The tree the builder form describes for attribute `name` of `data` (a
    :class:`~fairanon.app.session.Data`; default: the session's data now), one choice
    of data throughout, whatever another request chooses meanwhile.

    Raises the builder's :class:`~fairanon.exceptions.InvalidParameterError` for a bad field,
    or for data that can no longer be read."""
    data = session.data if data is None else data
    instance = data.instance
    if instance is None:
        raise InvalidParameterError("Choose the data first (Data page).")
    if name not in instance.schema.names:
        raise InvalidParameterError(f"{name!r} is not an attribute of {instance.name!r}.")
    attr = instance.schema[name]
    if not attr.released:
        raise InvalidParameterError(
            f"{name!r} is not released ({attr.role}): it takes no hierarchy.")
    builder = str(form.get("builder", ""))
    if builder not in {b for b, _ in BUILDERS}:
        raise InvalidParameterError(f"The builder must be one of {[b for b, _ in BUILDERS]}. Got {builder!r} instead.")
    column = session.column_texts(name, data)  # a numeric column's text, read once per data
    if builder == "intervals":
        return interval_hierarchy(column, _items(form.get("widths", "")), origin=_optional(form.get("origin")) or 0,
                                  bottom=_optional(form.get("bottom")), top=_optional(form.get("top")))
    if builder == "grouping":
        order = attr.domain if attr.domain is not None else numeric_order(column)
        return grouping_hierarchy(order, _items(form.get("sizes", "")))
    levels = _optional(form.get("levels"))
    return masking_hierarchy(column, levels=None if levels is None else _int_or_text(levels),
                             from_right=form.get("direction", "right") != "left")


def read_arx_csv(content: bytes, sep: str, name: str) -> Hierarchy:
    """A tree from the bytes of an uploaded ARX hierarchy CSV named `name`."""
    if len(content) > MAX_HIERARCHY:
        raise InvalidParameterError(f"The hierarchy file is larger than {MAX_HIERARCHY // 2**20} MB.")
    return Hierarchy.from_arx_csv(content, sep=sep, name=name)


def levels(hierarchy: Hierarchy) -> list[tuple[int, int]]:
    """(depth, number of nodes) per depth of the tree, root first."""
    counts: dict[int, int] = {}
    for depth in hierarchy.depth.values():
        counts[depth] = counts.get(depth, 0) + 1
    return sorted(counts.items())


def _attribute(instance, name: str):
    if instance is None or name not in instance.schema.names:
        return None
    return instance.schema[name]


def _page_url(name: str) -> str:
    return "/hierarchies?" + urlencode({"attr": name})


@router.get("/hierarchies", response_class=HTMLResponse)
async def hierarchies_page(request: Request, attr: str | None = None):
    return render_page(request, attr)


def render_page(request: Request, attr: str | None, error: str | None = None, status_code: int = 200,
                form: Mapping | None = None):
    """The page for attribute `attr` (the first quasi-identifier if None), with the
    message `error` of a refused form beside the form's fields."""
    session = request.app.state.session
    instance = session.instance
    names = [a.name for a in instance.schema if a.is_qi] if instance is not None else []
    if attr is None and names:
        attr = names[0]
    chosen = _attribute(instance, attr) if attr else None
    if attr and chosen is None and error is None:
        error, status_code = f"{attr!r} is not an attribute of the data.", 404
    return request.app.state.render(request, "hierarchies.html", status_code, names=names, chosen=chosen,
                                    builders=BUILDERS, error=error, form=form or {}, levels=levels,
                                    shown=SHOWN_CHILDREN)


@router.post("/hierarchies/preview", response_class=HTMLResponse)
async def preview(request: Request):
    form = await request.form()
    try:
        tree = await asyncio.to_thread(build, request.app.state.session, str(form.get("attr", "")), form)
    except FairanonError as exc:  # the message is the answer (htmx swaps 2xx answers only)
        return request.app.state.render(request, "tree.html", tree=None, error=str(exc))
    return request.app.state.render(request, "tree.html", tree=tree, error=None, levels=levels,
                                    shown=SHOWN_CHILDREN)


@router.post("/hierarchies/apply", response_class=HTMLResponse)
async def apply(request: Request):
    form = await request.form()
    name = str(form.get("attr", ""))
    session = request.app.state.session
    data = session.data  # the tree is of this data: refused if the table changes meanwhile
    try:
        tree = await asyncio.to_thread(build, session, name, form, data)  # reads the data again: off the loop
        await asyncio.to_thread(session.set_attribute, with_hierarchy(data.instance.schema[name], tree), data)
    except FairanonError as exc:
        return render_page(request, name, error=str(exc), status_code=400, form=form)
    return RedirectResponse(_page_url(name), status_code=303)


@router.post("/hierarchies/import", response_class=HTMLResponse)
async def import_csv(request: Request, file: UploadFile):
    form = await request.form()
    name = str(form.get("attr", ""))
    session = request.app.state.session
    data = session.data
    try:
        attr = _attribute(data.instance, name)
        if attr is None:
            raise InvalidParameterError(f"{name!r} is not an attribute of the data.")
        content = await file.read(MAX_HIERARCHY + 1)
        tree = await asyncio.to_thread(read_arx_csv, content, str(form.get("sep", ";")), file.filename or "upload")
        await asyncio.to_thread(session.set_attribute, with_hierarchy(attr, tree), data)
    except FairanonError as exc:
        return render_page(request, name or None, error=str(exc), status_code=400)
    return RedirectResponse(_page_url(name), status_code=303)


@router.get("/hierarchies/{name}.csv")
async def export_csv(request: Request, name: str):
    attr = _attribute(request.app.state.session.instance, name)
    if attr is None or attr.hierarchy is None:
        what = f"hierarchy of {name!r}" + ("" if attr is None else f" (a {attr.kind} attribute without a tree)")
        return request.app.state.render(request, "missing.html", 404, what=what)
    return Response(to_arx_csv(attr.hierarchy), media_type="text/csv",
                    headers={"Content-Disposition": f'attachment; filename="{safe_file_name(name, "hierarchy")}.csv"'})
