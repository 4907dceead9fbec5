"""The Requirements page: one group of fields per requirement class, each group read
into its job-file form (``{kind: {parameter: value}}``) and checked by the requirement
class and :func:`fairanon.models.requirements.validate_requirements`, as
``fairanon.anonymize`` checks it; the message is shown beside the group.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse

from ..exceptions import FairanonError
from ..models.requirements import DISTANCES, L_VARIANTS, MEASURES, ORDERED_DOMAINS, POPULATION_MODELS

router = APIRouter()


@dataclass(frozen=True)
class Param:
    """One field of a group: the form field, the requirement's parameter, its label,
    and its choices (None: typed text; "flag": a checkbox; "target": the sensitive and
    decision attributes of the data)."""

    field: str
    name: str
    label: str
    choices: tuple | str | None = None


@dataclass(frozen=True)
class Group:
    """The fields of one requirement; the group is used when its first field is filled."""

    name: str
    kind: str
    title: str
    help: str
    params: tuple[Param, ...]


GROUPS = (
    Group("k", "k_anonymity", "k-anonymity", "every class holds at least k records", (Param("k", "k", "k"),)),
    Group("l", "l_diversity", "l-diversity", "every class holds l well-represented sensitive values "
          "(recursive (c, l): the most frequent value below c times the sum of the l-th and rarer ones)",
          (Param("l", "l", "l"), Param("l_variant", "variant", "variant", L_VARIANTS),
           Param("l_c", "c", "c"), Param("l_attribute", "attribute", "of", "target"))),
    Group("t", "t_closeness", "t-closeness", "EMD of each class's sensitive distribution to the table's, "
          "at most t (e.g. 0.2 or 1/5)",
          (Param("t", "t", "t"), Param("t_distance", "distance", "distance", DISTANCES),
           Param("t_domain", "ordered_domain", "ordered domain", ORDERED_DOMAINS),
           Param("t_attribute", "attribute", "of", "target"))),
    Group("mt", "multiplicative_t_closeness", "multiplicative t-closeness",
          "each class's share of every sensitive value within a factor t (at least 1) of the table's",
          (Param("mt", "t", "t"), Param("mt_attribute", "attribute", "of", "target"))),
    Group("st", "stochastic_t_closeness", "stochastic t-closeness", "the sensitive values masked by an "
          "ε-private mechanism so that every class is stochastically t-close (t at least 1); public bounds "
          "L, U for a numeric attribute",
          (Param("st", "t", "t"), Param("st_epsilon", "epsilon", "ε"), Param("st_bounds", "bounds", "bounds L, U"),
           Param("st_attribute", "attribute", "of", "target"),
           Param("st_joint", "joint", "joint (one ε for all the attributes)", "flag"))),
    Group("alpha", "alpha_protection", "α-protection", "every context of possible discrimination has its "
          "measure at most α (at least α for RC and EC)",
          (Param("alpha", "alpha", "α"), Param("alpha_measure", "measure", "measure", tuple(MEASURES)),
           Param("alpha_support", "min_support", "contexts of at least (records)"),
           Param("alpha_strict", "strict", "strict (f < α)", "flag"))),
    Group("diversity", "diversity", "diversity constraints", "one per line: attribute(value) [lower, upper]", ()),
    Group("risk", "average_risk", "average risk", "the average re-identification risk (classes / records) "
          "at most r", (Param("risk", "r", "r"),)),
    Group("uniques", "sample_uniqueness", "sample uniques", "at most a share u of the records alone in "
          "their class", (Param("uniques", "u", "u"),)),
    Group("population", "population_uniqueness", "population uniques", "at most a share u of the population "
          "unique, by a model, for a sampling fraction or a population size",
          (Param("population", "u", "u"), Param("population_model", "model", "model", POPULATION_MODELS),
           Param("population_fraction", "sampling_fraction", "sampling fraction"),
           Param("population_size", "population_size", "or population size"))),
)
BY_NAME = {g.name: g for g in GROUPS}


def whole_number(text: str) -> int | None:
    """`text` as an int when it is written in ASCII digits only, else None.

    ``str.isdigit`` alone also accepts digits that ``int`` refuses (``'²'``), and
    ``int`` alone accepts signs, spaces and underscores a field should not hold."""
    return int(text) if text.isascii() and text.isdigit() else None


def _value(text: str):
    """A typed value: whole numbers as ints (the classes take exact numbers as text too),
    the rest as typed, so that the class's own message names a bad value."""
    number = whole_number(text)
    return text if number is None else number


def group_specs(group: Group, form: Mapping) -> list[dict]:
    """The job-file form of the requirements a group's fields give (none when its first
    field is empty)."""
    first = str(form.get(group.name, "") or "").strip()
    if not first:
        return []
    if group.kind == "diversity":
        return [{"diversity": line.strip()} for line in first.splitlines() if line.strip()]
    args = {}
    for param in group.params:
        text = str(form.get(param.field, "") or "").strip()
        if param.choices == "flag":
            if text:
                args[param.name] = True
        elif text and param.name == "bounds":
            args[param.name] = [item.strip() for item in text.split(",")]
        elif text:
            args[param.name] = text if param.name in ("t", "alpha", "c", "r", "u", "epsilon") else _value(text)
    return [{group.kind: args}]


def check_requirements(instance, form: Mapping, groups=GROUPS) -> tuple[list, list, dict, str | None]:
    """(specs, requirements, per-group errors, error of the set as a whole)."""
    from ..models.requirements import requirement_from_spec, validate_requirements

    specs, requirements, errors = [], [], {}
    for group in groups:
        group_spec = group_specs(group, form)
        if not group_spec:
            continue
        try:
            reqs = [requirement_from_spec(s) for s in group_spec]
            if instance is not None:
                validate_requirements(instance, reqs, caller="anonymize")
        except FairanonError as exc:
            errors[group.name] = str(exc)
            continue
        specs += group_spec
        requirements += reqs
    whole = None
    if not errors and not requirements and groups is GROUPS:
        whole = "Give at least one requirement."
    return specs, requirements, errors, whole


def form_of(specs: list) -> dict:
    """The page's fields for a job file's requirements (those it has fields for)."""
    from ..models.requirements import requirement_from_spec

    by_kind = {g.kind: g for g in GROUPS}
    form: dict = {}
    for spec in specs:
        try:
            requirement = requirement_from_spec(spec)
        except FairanonError:
            continue  # shown as the job file's error on the Run page
        group = by_kind.get(requirement.kind)
        if group is None:
            continue
        if group.kind == "diversity":
            (text,) = spec.values()
            if isinstance(text, str):
                form["diversity"] = (form.get("diversity", "") + "\n" + text).strip()
            continue
        for param in group.params:
            value = getattr(requirement, param.name, None)
            if param.name == "bounds" and isinstance(value, tuple) and len(value) == 2 and not isinstance(
                    value[0], tuple):
                form[param.field] = f"{value[0]}, {value[1]}"
            elif value is not None and value is not False and param.name != "bounds":
                form[param.field] = "on" if value is True else str(value)
    return form


def _targets(instance) -> list[str]:
    if instance is None:
        return []
    return [a.name for a in instance.schema if a.role in ("sensitive", "decision")]


def _render(request: Request, asked, form: Mapping, errors: dict, whole: str | None, status_code: int = 200):
    """The page for the data and job requirements of `asked` (one read of the session,
    :meth:`~fairanon.app.session.Session.asked`) with the fields `form`."""
    return request.app.state.render(request, "requirements.html", status_code, groups=GROUPS, form=form,
                                    errors=errors, whole=whole, targets=_targets(asked.data.instance),
                                    data=asked.data, job_requirements=asked.job_requirements)


@router.get("/requirements", response_class=HTMLResponse)
async def requirements_page(request: Request):
    # one read of the data and the fields (off the event loop: the lock is held while data loads)
    asked = await asyncio.to_thread(request.app.state.session.asked)
    errors = check_requirements(asked.data.instance, asked.form)[2] if asked.form else {}
    return _render(request, asked, asked.form, errors, None)


@router.post("/requirements", response_class=HTMLResponse)
async def set_requirements(request: Request):
    session = request.app.state.session
    form = {k: str(v) for k, v in (await request.form()).items()}
    asked = await asyncio.to_thread(session.set_requirements, form)  # in a thread: the lock is held while data loads
    _, _, errors, whole = check_requirements(asked.data.instance, form)
    if errors or whole:
        return _render(request, asked, form, errors, whole, 400)
    return RedirectResponse("/run", status_code=303)


@router.post("/requirements/check/{name}", response_class=HTMLResponse)
async def check_group(request: Request, name: str):
    if name not in BY_NAME:
        return request.app.state.render(request, "field_error.html", 404,
                                        message=f"There is no requirement field {name!r}.")
    form = {k: str(v) for k, v in (await request.form()).items()}
    _, _, errors, _ = check_requirements(request.app.state.session.instance, form, groups=(BY_NAME[name],))
    return request.app.state.render(request, "field_error.html", message=errors.get(name))
