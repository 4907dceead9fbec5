"""What the app holds between pages: the chosen data (as the ``instance`` section of a
job file), the requirements (as its ``requirements`` list) and the runs.

Everything the app runs is a job file written here, so any run can be repeated with
``fairanon anonymize job.yaml``; the instance, the requirement objects and their error
messages all come from :mod:`fairanon.jobs` and the requirement classes, as for a job
file given to the command line.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

import yaml

#: The roles a column of an uploaded table can take (see the README's schema keys).
ROLES = ("qi", "sensitive", "decision", "protected", "insensitive", "identifier", "ignore")


@dataclass
class Run:
    id: int
    folder: str
    job: str
    process: object = None
    cancelled: bool = False
    format: str = "csv"  # the release file's format (the command line's --format)
    classify: bool = True  # its data has a decision, which the utility analysis's classifier predicts
    data_key: str | None = None  # its data's files by checksum, made once by the Compare page


@dataclass(frozen=True)
class Data:
    """The chosen data, replaced whole, so that a page reading it while another request
    changes it sees one choice or the other, never half of each."""

    source: dict | None = None  # the job's ``instance`` section
    label: str = ""
    instance: object = None
    #: Counts the data chosen: a key of what was computed from one data (an id() of a
    #: freed instance can be reused by the next one).
    generation: int = 0


class Asked(NamedTuple):
    """The data and what is asked of it, read together (:meth:`Session.asked`)."""

    data: Data
    job_requirements: list | None  # a job file's requirements; None: the Requirements page's fields
    form: dict
    job_settings: dict


@dataclass
class Session:
    """The app's state for one start (one user, one browser).

    Requests are served in threads at once: whatever reads the data and replaces it
    (:meth:`use`, :meth:`edit_schema`, :meth:`open_job`), sets the requirements
    (:meth:`set_requirements`), reads them with the data (:meth:`asked`) or takes a
    run's number (:meth:`new_run`) holds :attr:`lock`, so two changes of the schema made
    at once both stay, a run never starts from half of a change of the requirements and
    two runs started at once get two numbers."""

    folder: str = field(default_factory=lambda: tempfile.mkdtemp(prefix="fairanon-app-"))
    data: Data = field(default_factory=Data)
    job_requirements: list | None = None  # requirements read from a job file given at the start
    job_settings: dict = field(default_factory=dict)  # method, seed, time_limit, options of that job
    form: dict = field(default_factory=dict)  # the requirement fields as typed
    runs: dict = field(default_factory=dict)
    auto_choices: dict = field(default_factory=dict)  # auto's (method, reason) for the last data and requirements
    lock: threading.RLock = field(default_factory=threading.RLock, repr=False, compare=False)
    #: A column's values as text (:meth:`column_texts`), for one data: (generation, name) -> Series.
    _texts: dict = field(default_factory=dict, repr=False, compare=False)
    #: :func:`fairanon.describe` of one data: (generation, its description).
    _description: tuple | None = field(default=None, repr=False, compare=False)

    def close(self) -> None:
        """Cancel the runs still running (:func:`~fairanon.app.worker.cancel`) and remove the folder."""
        from .worker import cancel

        cancel(*[run.process for run in self.runs.values() if run.process is not None])  # one shared grace
        shutil.rmtree(self.folder, ignore_errors=True)

    # -- the data ---------------------------------------------------------------
    def load(self, source: Mapping, table=None) -> object:
        """The instance of `source` (an ``instance`` section; `table`: its file as read
        already, see :func:`fairanon.jobs.load_instance_spec`); the API's error when it
        cannot be loaded, a file's (OSError) or a loader's (ValueError) included."""
        from ..exceptions import FairanonError, InvalidParameterError
        from ..jobs import load_instance_spec

        try:
            return load_instance_spec(source, self.folder, table=table)
        except FairanonError:
            raise
        except (ValueError, OSError) as exc:  # a data set's loader reading a file it cannot parse
            raise InvalidParameterError(f"Cannot load the data: {exc}") from exc

    def use(self, source: dict, label: str, table=None) -> object:
        """Make `source` (an ``instance`` section; `table` as in :meth:`load`) the data;
        raises the API's error when it cannot be loaded, leaving the previous data in place."""
        with self.lock:
            instance = self.load(source, table)
            self.data = Data(source, label, instance, self.data.generation + 1)
            return instance

    def edit_schema(self, edit: Callable[[dict], dict], of: Data | None = None) -> object:
        """Make the data's schema ``edit(schema)`` (of a copy of the current one, read
        under :attr:`lock`, so a change made meanwhile is kept); the API's error when
        the data does not fit it, or when its table is no longer that of `of` (the data
        the edit was made for), leaving the data in place."""
        from ..exceptions import InvalidParameterError

        with self.lock:
            source = self.data.source
            if of is not None and _table(source) != _table(of.source):
                raise InvalidParameterError(
                    f"The data changed to {self.data.label!r} while this was being done for {of.label!r}; "
                    "do it again on the new data.")
            return self.use({**source, "schema": edit(dict(source.get("schema") or {}))}, self.data.label)

    def set_attribute(self, attribute, of: Data | None = None) -> object:
        """Replace one attribute of the data by writing its entry into the ``instance``
        section's schema (so the job file carries it); the API's error when the data
        does not fit it or is no longer the table of `of` (:meth:`edit_schema`), leaving
        the previous data in place."""
        return self.edit_schema(lambda schema: {**schema, attribute.name: attribute.to_spec()}, of)

    def column_texts(self, name: str, data: Data | None = None):
        """The values of attribute `name` of `data` (default: the current data) as the
        text a categorical column holds, which a tree's leaves must be: a numeric column
        is read again as text (``45.0``, ``030`` and ``1e3`` as written, not as the
        numbers 45, 30 and 1000), once per data and attribute; the API's error when the
        data can no longer be read."""
        data = self.data if data is None else data
        key = (data.generation, name)
        texts = self._texts.get(key)
        if texts is None:
            instance = data.instance
            attr = instance.schema[name]
            if attr.kind == "numeric":
                schema = dict(data.source.get("schema") or {})
                schema[name] = attr.with_(kind="categorical", hierarchy=None, order=None, intervals=None).to_spec()
                instance = self.load({**data.source, "schema": schema})
            texts = instance.table[name].dropna().astype(str)
            # kept for this data only: another data's columns are never asked for again
            self._texts = {**{k: v for k, v in self._texts.items() if k[0] == data.generation}, key: texts}
        return texts

    def description(self, data: Data) -> object:
        """:func:`fairanon.describe` of `data`'s instance, computed once per data: the
        Data page shows it at each visit (0.02 s of CPU on Adult)."""
        from ..models.describe import describe

        cached = self._description
        if cached is None or cached[0] != data.generation:
            cached = self._description = (data.generation, describe(data.instance))
        return cached[1]

    @property
    def source(self) -> dict | None:
        return self.data.source

    @property
    def source_label(self) -> str:
        return self.data.label

    @property
    def instance(self):
        return self.data.instance

    @property
    def generation(self) -> int:
        return self.data.generation

    @property
    def table_upload(self) -> bool:
        """Whether the data is an uploaded table (whose roles the Data page sets)."""
        return bool(self.source) and ("csv" in self.source or "parquet" in self.source)

    def upload_folder(self) -> str:
        """A new folder for the files of one upload: a file once written is never
        replaced, so an upload of another file of the same name leaves it as it was."""
        folder = os.path.join(self.folder, "uploads")
        os.makedirs(folder, exist_ok=True)
        return tempfile.mkdtemp(dir=folder)

    def upload_path(self, name: str, folder: str) -> str:
        """Where the uploaded file `name` goes in `folder` (a folder of :meth:`upload_folder`)."""
        from ..instances.files import safe_file_name

        return os.path.join(folder, safe_file_name(os.path.basename(name), "upload.csv"))

    def open_job(self, document: Mapping, base: str, label: str, *, picked: bool = False) -> object:
        """Open a job file's data, requirements and settings. Its file paths are read
        relative to `base`; with `picked`, every file must be one the user picked with
        the job (in `base`, by its base name), so nothing else is read."""
        from ..exceptions import InvalidParameterError

        section = document.get("instance") or {}
        if not isinstance(section, Mapping):
            raise InvalidParameterError("The 'instance' section of a job must be a mapping.")
        if picked:
            from ..instances.datasets.registry import DATA_ENV, reads_data_folder

            options = section.get("options")
            dataset = section.get("dataset")
            if isinstance(dataset, str) and reads_data_folder(dataset, options if isinstance(options, Mapping) else {}):
                raise InvalidParameterError(
                    f"The job file's data set {dataset!r} has no 'path' option, so it would be read from the "
                    f"server's ${DATA_ENV} folder; a picked job reads only the files picked with it: name the "
                    "data's file in 'path' (and 'path_test') and pick it together with the job file.")
            section = _relocated(section, lambda path: self._picked(path, base))
        with self.lock:  # the data and the job's requirements together
            instance = self.use(_relocated(
                section, lambda path: path if os.path.isabs(path) else os.path.join(base, path)), label)
            self.set_requirements(job=document)
            return instance

    # -- the requirements ------------------------------------------------------
    def set_requirements(self, form: dict | None = None, *, job: Mapping | None = None) -> Asked:
        """Make the requirements the Requirements page's fields (`form`; None: those
        typed before) or, given `job`, a job file's: its ``requirements`` list, its
        settings (method, seed, time_limit, options) and the fields that show them. Set
        together under :attr:`lock`, which :meth:`asked` reads them under; returns the
        set they now belong to (:meth:`asked`, read under the same hold of the lock)."""
        from .requirements import form_of

        with self.lock:
            if job is None:
                self.job_requirements = None
                if form is not None:
                    self.form = form
            else:
                requirements = list(job.get("requirements") or [])
                self.job_requirements = requirements
                self.job_settings = {k: job.get(k) for k in ("method", "seed", "time_limit", "options")}
                self.form = form_of(requirements)
            return self.asked()

    def asked(self) -> Asked:
        """The data, the requirements and the job's settings as one set (under :attr:`lock`:
        never half of a change of them)."""
        with self.lock:
            return Asked(self.data, self.job_requirements, self.form, self.job_settings)

    def _picked(self, path: str, folder: str) -> str:
        from ..exceptions import InvalidParameterError

        local = self.upload_path(path, folder)
        if not os.path.isfile(local):
            raise InvalidParameterError(f"The job file names the file {path!r}: pick it together with the job file.")
        return local

    # -- the job ---------------------------------------------------------------
    def job_document(self, requirements: list, *, method: str, seed, time_limit, asked: Asked | None = None) -> dict:
        """The job file of a run of `requirements` on the data of `asked` (default: the
        current set), with its job file's options when the method is that job's."""
        asked = self.asked() if asked is None else asked
        doc = {"name": asked.data.label or "app", "instance": asked.data.source, "requirements": requirements,
               "method": method}
        if asked.job_settings.get("options") and method == asked.job_settings.get("method"):
            doc["options"] = asked.job_settings["options"]
        if seed is not None:
            doc["seed"] = seed
        if time_limit is not None:
            doc["time_limit"] = time_limit
        return doc

    def new_run(self, document: dict, base: str | None = None) -> Run:
        """A run's folder with its job file and a copy of each file the job names (data,
        hierarchies, a data set's file options) under ``data/``, named in the job relative to it: the folder
        reproduces the run by itself, whatever becomes of the uploads. Relative paths of
        `document` are read from `base` (the folder of the job it was read from). Raises
        the API's error when a file cannot be copied, leaving no folder behind."""
        from ..exceptions import InvalidParameterError

        with self.lock:  # the number taken and the run registered at once: runs started together differ
            run_id = max(self.runs, default=0) + 1
            folder = os.path.join(self.folder, "runs", str(run_id))
            try:
                os.makedirs(folder)  # never an existing folder: another run's files
            except OSError as exc:
                raise InvalidParameterError(f"The run's folder cannot be made: {exc}") from exc
            try:
                if isinstance(document.get("instance"), Mapping):
                    copied: dict[str, str] = {}
                    document = {**document, "instance": _relocated(
                        document["instance"], lambda path: self._copy(path, base, folder, copied))}
                job = os.path.join(folder, "job.yaml")
                with open(job, "w", encoding="utf-8") as fh:
                    yaml.safe_dump(document, fh, sort_keys=False, allow_unicode=True)
            except BaseException as exc:
                shutil.rmtree(folder, ignore_errors=True)  # the next run takes the number again
                if isinstance(exc, OSError):
                    raise InvalidParameterError(f"The run's job file cannot be written: {exc}") from exc
                raise
            run = Run(run_id, folder, job)
            self.runs[run_id] = run
            return run

    def _copy(self, path: str, base: str | None, folder: str, copied: dict) -> str:
        """Copy the file `path` into ``folder/data`` (once per file); its path relative to `folder`."""
        from ..exceptions import InvalidParameterError

        source = os.path.abspath(path if base is None else os.path.join(base, path))
        if source not in copied:
            name, n = os.path.basename(source), 0
            relative = os.path.join(DATA_FOLDER, name)
            # two files of one name: the second in a folder of its own, whose name no file of the run holds
            while os.path.lexists(os.path.join(folder, relative)) or os.path.isfile(
                    os.path.join(folder, os.path.dirname(relative))):
                n += 1
                relative = os.path.join(DATA_FOLDER, str(n), name)
            target = os.path.join(folder, relative)
            try:
                os.makedirs(os.path.dirname(target), exist_ok=True)
                if os.path.commonpath([source, self.folder]) == self.folder:
                    with contextlib.suppress(OSError):  # the app's own files are never rewritten: shared
                        os.link(source, target)
                if not os.path.exists(target):
                    shutil.copyfile(source, target)
            except OSError as exc:
                raise InvalidParameterError(f"The job's file {path!r} cannot be copied into the run: {exc}") from exc
            copied[source] = relative
        return copied[source]


#: The folder of a run that holds the files its job names.
DATA_FOLDER = "data"
#: The archive of a run's job file and the files it names, offered for download.
JOB_ARCHIVE = "job.zip"


def job_archive(run_folder: str) -> str:
    """The run's job file and its ``data/`` folder in one zip file (made once): unpacked
    anywhere, ``fairanon anonymize job.yaml`` there gives the run's release."""
    import zipfile

    from ..exceptions import InvalidParameterError

    path = os.path.join(run_folder, JOB_ARCHIVE)
    if not os.path.isfile(path):
        tmp = None
        try:
            handle, tmp = tempfile.mkstemp(dir=run_folder, suffix=".part")
            os.close(handle)
            with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as archive:
                archive.write(os.path.join(run_folder, "job.yaml"), "job.yaml")
                for root, _, names in os.walk(os.path.join(run_folder, DATA_FOLDER)):
                    for name in sorted(names):
                        file = os.path.join(root, name)
                        archive.write(file, os.path.relpath(file, run_folder))
            os.replace(tmp, path)  # a reader never gets half an archive
        except OSError as exc:
            if tmp is not None:
                with contextlib.suppress(OSError):
                    os.remove(tmp)
            raise InvalidParameterError(f"The run's job archive cannot be written: {exc}") from exc
    return path


def _table(source: Mapping | None) -> dict:
    """What an ``instance`` section says of the table apart from its schema (the data
    set or file and their options): equal for two choices of the same table."""
    return {k: v for k, v in (source or {}).items() if k != "schema"}


def _relocated(section: Mapping, where: Callable[[str], str]) -> dict:
    """A job's ``instance`` section with each file path (data, hierarchies, and a data
    set's options that name files, such as Census-Income's ``path``) mapped by `where`."""
    from ..instances.datasets.registry import file_options

    section = dict(section)
    for key in ("csv", "parquet"):
        if key in section:
            section[key] = where(str(section[key]))
    options = section.get("options")
    if isinstance(options, Mapping) and isinstance(section.get("dataset"), str):
        named = file_options(section["dataset"], options)
        # Only text: another value is left for load_instance_spec to refuse by name.
        section["options"] = {**options, **{key: where(options[key]) for key in named
                                            if isinstance(options[key], str)}}
    schema = section.get("schema")
    if isinstance(schema, Mapping):
        section["schema"] = {
            name: ({**attr, "hierarchy": where(attr["hierarchy"])}
                   if isinstance(attr, Mapping) and isinstance(attr.get("hierarchy"), str) else attr)
            for name, attr in schema.items()}
    return section
