"""The Data page: a bundled data set, an uploaded CSV or Parquet table (its roles and
types set here), or a job file picked with the files it names; a preview and
:func:`fairanon.describe`'s figures. The data is always a job file's ``instance``
section, loaded by :mod:`fairanon.jobs` (:meth:`Session.use`).
"""

from __future__ import annotations

import asyncio
import os
from fractions import Fraction

from fastapi import APIRouter, Request, UploadFile
from fastapi.responses import HTMLResponse, RedirectResponse

from ..exceptions import FairanonError
from .session import ROLES

router = APIRouter()

#: The largest upload read (bytes); larger files are refused with a message.
MAX_UPLOAD = 200 * 2**20
PREVIEW_ROWS = 20


#: An uploaded text column is first guessed an identifier (dropped from the release) when
#: at least this share of the rows hold distinct values in it, as an ID or a name does
#: (as a quasi-identifier its flat tree would single out every record).
IDENTIFIER_DISTINCT = Fraction(19, 20)
#: ... in a table of at least this many rows (in a few rows most text columns are
#: all distinct by chance).
IDENTIFIER_MIN_ROWS = 20


def _inferred_schema(table) -> dict:
    """A first schema for an uploaded table: numeric columns numeric, the others
    categorical; a text column of (nearly) all distinct values an identifier (see
    :data:`IDENTIFIER_DISTINCT`), every other column a quasi-identifier (the user changes
    roles on the page). Numeric columns stay quasi-identifiers: a measurement (an
    income, a weight) is often all distinct too, and is released as ranges. When every
    column would be an identifier they all stay quasi-identifiers, so that the table
    opens and the user chooses (an instance needs a quasi-identifier)."""
    import pandas as pd

    schema = {}
    for c in table.columns:
        numeric = pd.api.types.is_numeric_dtype(table[c])
        ident = (not numeric and len(table) >= IDENTIFIER_MIN_ROWS
                 and table[c].nunique() >= IDENTIFIER_DISTINCT * len(table))
        schema[str(c)] = {"role": "identifier" if ident else "qi",
                          "type": "numeric" if numeric else "categorical"}
    if all(spec["role"] == "identifier" for spec in schema.values()):
        for spec in schema.values():
            spec["role"] = "qi"
    return schema


@router.get("/")
async def index():
    return RedirectResponse("/data", status_code=303)


@router.get("/data", response_class=HTMLResponse)
async def show_data_page(request: Request):
    return await data_page(request)


async def data_page(request: Request, error: str | None = None, status_code: int = 200):
    """The Data page, with `error` shown (not a route: the message and status are the
    app's, never a query's)."""
    from ..instances.datasets.registry import DATASETS

    session = request.app.state.session
    data = session.data  # one data for the figures and the preview
    inst = data.instance
    description = await asyncio.to_thread(session.description, data) if inst is not None else None
    preview = inst.table.head(PREVIEW_ROWS) if inst is not None else None
    return request.app.state.render(request, "data.html", status_code, datasets=list(DATASETS),
                                    description=description, preview=preview, error=error, roles=ROLES,
                                    editable=session.table_upload and session.job_requirements is None)


@router.post("/data/dataset", response_class=HTMLResponse)
async def choose_dataset(request: Request):
    session = request.app.state.session
    form = await request.form()
    name = str(form.get("dataset", ""))
    try:
        await asyncio.to_thread(_use_own, session, {"dataset": name}, name)
    except FairanonError as exc:
        return await data_page(request, error=str(exc), status_code=400)
    return RedirectResponse("/data", status_code=303)


def _use_own(session, source: dict, label: str, table=None) -> None:
    """Make `source` (`table`: its file as read already) the data with the Requirements
    page's fields as its requirements, in place of a job file's: both at once, so a run
    started meanwhile has both or neither."""
    with session.lock:
        session.use(source, label, table)
        session.set_requirements()


def _use_table(session, path: str, content: bytes) -> None:
    """Save an uploaded table at `path` and make it the data, with a first schema
    (run in a thread: writing and reading a large file takes seconds). The file is
    parsed once: the table the schema is guessed from is the instance's
    (:func:`fairanon.jobs.load_instance_spec`)."""
    from ..jobs import read_table

    with open(path, "wb") as fh:
        fh.write(content)
    kind = "parquet" if path.endswith((".parquet", ".pq")) else "csv"
    table = read_table(path, kind)
    _refuse_missing(table, os.path.basename(path))
    _use_own(session, {kind: path, "schema": _inferred_schema(table)}, os.path.basename(path), table)


def _refuse_missing(table, name: str) -> None:
    """Refuse a table with empty cells, saying what to do in the app (a column starts as
    a quasi-identifier or an identifier, and the app has no field for the job file's
    ``missing``)."""
    from ..exceptions import SchemaError

    counts = table.isna().sum()
    if counts.any():
        details = ", ".join(f"{c!r} ({int(n)} rows)" for c, n in counts[counts > 0].items())
        raise SchemaError(f"Missing values in {details} of {name!r}. Fill them (or write them as a value of their "
                          "own, such as '?') and upload the file again, or pick it with a job file whose "
                          "'instance' section says 'missing: drop' (Job file, with the files it names).")


@router.post("/data/upload", response_class=HTMLResponse)
async def upload(request: Request, file: UploadFile):
    session = request.app.state.session
    content = await file.read(MAX_UPLOAD + 1)
    if len(content) > MAX_UPLOAD:
        return await data_page(request, error=f"The file is larger than {MAX_UPLOAD // 2**20} MB, the app's upload "
                                              "limit; anonymize it with `fairanon anonymize` and a job file.",
                               status_code=413)
    if not content.strip():
        return await data_page(request, error="The uploaded file is empty.", status_code=400)
    path = session.upload_path(file.filename or "upload.csv", session.upload_folder())
    try:
        await asyncio.to_thread(_use_table, session, path, content)
    except FairanonError as exc:
        return await data_page(request, error=str(exc), status_code=400)
    return RedirectResponse("/data", status_code=303)


@router.post("/data/roles", response_class=HTMLResponse)
async def roles(request: Request):
    session = request.app.state.session
    form = await request.form()
    if not session.table_upload:
        return await data_page(request, error="Roles can be set here for an uploaded table.", status_code=400)

    def with_roles(current: dict) -> dict:
        schema = {}
        for name, attr in current.items():
            entry = {k: v for k, v in attr.items() if k not in ("role", "type", "protected", "negative")}
            entry.update(role=str(form.get(f"role:{name}", attr["role"])),
                         type=str(form.get(f"type:{name}", attr["type"])))
            protected = str(form.get(f"protected:{name}", "")).strip()
            negative = str(form.get(f"negative:{name}", "")).strip()
            if protected:
                entry["protected"] = [v.strip() for v in protected.split(",") if v.strip()]
            if negative:
                entry["negative"] = negative
            schema[name] = entry
        return schema

    try:  # the schema read and replaced at once: a tree applied meanwhile stays
        await asyncio.to_thread(session.edit_schema, with_roles)
    except FairanonError as exc:
        return await data_page(request, error=str(exc), status_code=400)
    return RedirectResponse("/data", status_code=303)


def _open_picked(session, contents: dict, job_name: str) -> None:
    """Save the picked files in a new folder and open the job file `job_name` among
    them (run in a thread: it reads the job's data)."""
    from ..jobs import read_document

    folder = session.upload_folder()
    for name, content in contents.items():
        with open(session.upload_path(name, folder), "wb") as fh:
            fh.write(content)
    job = session.upload_path(job_name, folder)
    session.open_job(read_document(job), folder, os.path.basename(job), picked=True)


@router.post("/data/job", response_class=HTMLResponse)
async def open_job(request: Request, files: list[UploadFile]):
    """A job file picked with the files it names (its data and hierarchy files)."""
    session = request.app.state.session
    contents = {}
    for upload in files:
        contents[upload.filename or ""] = await upload.read(MAX_UPLOAD + 1)
    if sum(len(c) for c in contents.values()) > MAX_UPLOAD:
        return await data_page(request, error=f"The files are larger than {MAX_UPLOAD // 2**20} MB together, the "
                                              "app's upload limit.", status_code=413)
    jobs = [n for n in contents if n.endswith((".yaml", ".yml", ".json"))]
    if len(jobs) != 1:
        return await data_page(request, error=f"Pick one job file (.yaml, .yml or .json) with the files it names; "
                                              f"got {len(jobs)} job files among {sorted(contents)}.", status_code=400)
    try:
        await asyncio.to_thread(_open_picked, session, contents, jobs[0])
    except FairanonError as exc:
        return await data_page(request, error=str(exc), status_code=400)
    return RedirectResponse("/data", status_code=303)
