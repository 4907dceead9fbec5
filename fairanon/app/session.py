"""What the app holds between pages: the chosen data (as the ``instance`` section of a
job file), the requirements (as its ``requirements`` list) and the runs.

Everything the app runs is a job file written here, so any run can be repeated with
``fairanon anonymize job.yaml``; the instance, the requirement objects and their error
messages all come from :mod:`fairanon.jobs` and the requirement classes, as for a job
file given to the command line.
"""

from __future__ import annotations

import contextlib
import inspect
import os
import shutil
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

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


@dataclass
class Session:
    """The app's state for one start (one user, one browser)."""

    folder: str = field(default_factory=lambda: tempfile.mkdtemp(prefix="fairanon-app-"))
    source: dict | None = None           # the job's ``instance`` section
    source_label: str = ""
    job_requirements: list | None = None  # requirements read from a job file given at the start
    job_settings: dict = field(default_factory=dict)  # method, seed, time_limit, options of that job
    form: dict = field(default_factory=dict)  # the requirement fields as typed
    runs: dict = field(default_factory=dict)
    auto_choices: dict = field(default_factory=dict)  # auto's (method, reason) for the last data and requirements
    #: Counts the data chosen: a key of what was computed from one data (an id() of a
    #: freed instance can be reused by the next one).
    generation: int = 0
    _instance: object = None

    def close(self) -> None:
        from .worker import cancel

        for run in self.runs.values():
            if run.process is not None:
                cancel(run.process)
        shutil.rmtree(self.folder, ignore_errors=True)

    # -- the data ---------------------------------------------------------------
    def use(self, source: dict, label: str) -> object:
        """Make `source` (an ``instance`` section) the data; raises the API's error when
        it cannot be loaded, leaving the previous data in place."""
        from ..exceptions import FairanonError, InvalidParameterError
        from ..jobs import load_instance_spec

        try:
            instance = load_instance_spec(source, self.folder)
        except FairanonError:
            raise
        except (ValueError, OSError) as exc:  # a data set's loader reading a file it cannot parse
            raise InvalidParameterError(f"Cannot load the data: {exc}") from exc
        self.source, self.source_label, self._instance = source, label, instance
        self.generation += 1
        return instance

    def set_attribute(self, attribute) -> object:
        """Replace one attribute of the data by writing its entry into the ``instance``
        section's schema (so the job file carries it); the API's error when the data
        does not fit it, leaving the previous data in place."""
        schema = dict(self.source.get("schema") or {})
        schema[attribute.name] = attribute.to_spec()
        return self.use({**self.source, "schema": schema}, self.source_label)

    @property
    def instance(self):
        return self._instance

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
            _refuse_file_options(section)
            section = _relocated(section, lambda path: self._picked(path, base))
        instance = self.use(_relocated(section, lambda path: path if os.path.isabs(path) else os.path.join(base, path)),
                            label)
        self.job_requirements = list(document.get("requirements") or [])
        self.job_settings = {k: document.get(k) for k in ("method", "seed", "time_limit", "options")}
        return instance

    def _picked(self, path: str, folder: str) -> str:
        from ..exceptions import InvalidParameterError

        local = self.upload_path(path, folder)
        if not os.path.isfile(local):
            raise InvalidParameterError(f"The job file names the file {path!r}: pick it together with the job file.")
        return local

    # -- the job ---------------------------------------------------------------
    def job_document(self, requirements: list, *, method: str, seed, time_limit) -> dict:
        doc = {"name": self.source_label or "app", "instance": self.source, "requirements": requirements,
               "method": method}
        if self.job_settings.get("options") and method == self.job_settings.get("method"):
            doc["options"] = self.job_settings["options"]
        if seed is not None:
            doc["seed"] = seed
        if time_limit is not None:
            doc["time_limit"] = time_limit
        return doc

    def new_run(self, document: dict, base: str | None = None) -> Run:
        """A run's folder with its job file and a copy of each file the job names (data,
        hierarchies) under ``data/``, named in the job relative to it: the folder
        reproduces the run by itself, whatever becomes of the uploads. Relative paths of
        `document` are read from `base` (the folder of the job it was read from). Raises
        the API's error when a file cannot be copied."""
        run_id = len(self.runs) + 1
        folder = os.path.join(self.folder, "runs", str(run_id))
        os.makedirs(folder)
        if isinstance(document.get("instance"), Mapping):
            copied: dict[str, str] = {}
            document = {**document, "instance": _relocated(
                document["instance"], lambda path: self._copy(path, base, folder, copied))}
        job = os.path.join(folder, "job.yaml")
        with open(job, "w", encoding="utf-8") as fh:
            yaml.safe_dump(document, fh, sort_keys=False, allow_unicode=True)
        run = Run(run_id, folder, job)
        self.runs[run_id] = run
        return run

    def _copy(self, path: str, base: str | None, folder: str, copied: dict) -> str:
        """Copy the file `path` into ``folder/data`` (once per file); its path relative to `folder`."""
        from ..exceptions import InvalidParameterError

        source = os.path.abspath(path if base is None else os.path.join(base, path))
        if source not in copied:
            relative = os.path.join(DATA_FOLDER, os.path.basename(source))
            if relative in copied.values():  # two files of one name: the second in a folder of its own
                relative = os.path.join(DATA_FOLDER, str(len(copied)), os.path.basename(source))
            target = os.path.join(folder, relative)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            try:
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

    path = os.path.join(run_folder, JOB_ARCHIVE)
    if not os.path.isfile(path):
        handle, tmp = tempfile.mkstemp(dir=run_folder, suffix=".part")
        os.close(handle)
        with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as archive:
            archive.write(os.path.join(run_folder, "job.yaml"), "job.yaml")
            for root, _, names in os.walk(os.path.join(run_folder, DATA_FOLDER)):
                for name in sorted(names):
                    file = os.path.join(root, name)
                    archive.write(file, os.path.relpath(file, run_folder))
        os.replace(tmp, path)  # a reader never gets half an archive
    return path


def _refuse_file_options(section: Mapping) -> None:
    """Refuse the options of a data set's loader that name files (those it annotates
    ``os.PathLike``, e.g. Census-Income's ``path``): a picked job may read only the files
    picked with it, and these are read where they point."""
    from ..exceptions import InvalidParameterError
    from ..instances.datasets.registry import DATASETS

    options = section.get("options")
    loader = DATASETS.get(section.get("dataset")) if isinstance(section.get("dataset"), str) else None
    if not isinstance(options, Mapping) or loader is None:
        return  # the loader's own checks give the message
    parameters = inspect.signature(loader).parameters
    files = sorted(str(k) for k in options if k in parameters and "PathLike" in str(parameters[k].annotation))
    if files:
        raise InvalidParameterError(
            f"The job file's data set options {files} name files, which a job file picked in the app cannot do; "
            "give the table as 'csv' or 'parquet' and pick it with the job file, or start the app with the job "
            "file (fairanon app job.yaml).")


def _relocated(section: Mapping, where: Callable[[str], str]) -> dict:
    """A job's ``instance`` section with each file path (data, hierarchies) mapped by `where`."""
    section = dict(section)
    for key in ("csv", "parquet"):
        if key in section:
            section[key] = where(str(section[key]))
    schema = section.get("schema")
    if isinstance(schema, Mapping):
        section["schema"] = {
            name: ({**attr, "hierarchy": where(attr["hierarchy"])}
                   if isinstance(attr, Mapping) and isinstance(attr.get("hierarchy"), str) else attr)
            for name, attr in schema.items()}
    return section
