"""``auto`` routes the requirements that mask their target to the methods that enforce
them, and says why; every release is checked by the verifier."""

import numpy as np
import pandas as pd
import pytest

import fairanon as fa
from fairanon.api import choose_method
from fairanon.exceptions import IncompatibleRequirementError


@pytest.fixture(scope="module")
def salaries():
    """Domingo-Ferrer and Soria-Comas's Fig. 2 shape, twice: 24 salaries, a numeric QI."""
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"zip": rng.integers(0, 50, 24), "salary": np.arange(1, 25)})
    schema = fa.Schema(
        [
            fa.Attribute("zip", kind="numeric"),
            fa.Attribute("salary", role="sensitive", kind="numeric"),
        ]
    )
    return fa.Instance(df, schema, "salaries")


@pytest.mark.parametrize(
    "requirement, method",
    [
        (fa.MultiplicativeTCloseness(2), "bucketization"),
        (fa.StochasticTCloseness(3, 1, bounds=(0, 100)), "stochastic"),
    ],
)
@pytest.mark.parametrize("with_k", [False, True])
def test_auto_routes_masking_requirements(salaries, requirement, method, with_k):
    reqs = [requirement] + ([fa.KAnonymity(3)] if with_k else [])
    name, why = choose_method(salaries, reqs)
    assert name == method and str(requirement) in why and method in why
    rel = fa.anonymize(salaries, reqs, seed=0)
    assert rel.provenance["auto_choice"] == method
    assert rel.provenance["auto_reason"] == why
    report = fa.verify(salaries, rel, reqs)
    assert report.passed, str(report)
    again = fa.anonymize(salaries, reqs, seed=0)
    pd.testing.assert_frame_equal(rel.table, again.table)


def test_auto_routing_is_checked_before_the_exact_model(salaries):
    # The table is small enough for cpsat, which cannot enforce either requirement.
    assert choose_method(salaries, [fa.KAnonymity(2)])[0] == "cpsat"
    assert choose_method(salaries, [fa.MultiplicativeTCloseness(3)])[0] == "bucketization"


@pytest.mark.parametrize(
    "reqs, text",
    [
        ([fa.MultiplicativeTCloseness(2), fa.LDiversity(2)], "2-diversity"),
        ([fa.StochasticTCloseness(3, 1, bounds=(0, 100)), fa.TCloseness(0.3)], "0.3-closeness"),
        (
            [fa.MultiplicativeTCloseness(2), fa.StochasticTCloseness(3, 1, bounds=(0, 100))],
            "stochastic 3-closeness",
        ),
    ],
)
def test_auto_names_what_no_method_combines(salaries, reqs, text):
    with pytest.raises(IncompatibleRequirementError, match="k-anonymity only") as info:
        fa.anonymize(salaries, reqs, seed=0)
    assert text in str(info.value)


@pytest.mark.parametrize("method", ["mondrian", "auto", "cpsat", "lns"])
def test_anonymize_refuses_an_empty_requirement_list(method):
    """With nothing to enforce a method would release the table nearly as it is; the
    front door refuses, as the command line does, and says what to pass."""
    inst = fa.load("diva_table1")
    with pytest.raises(fa.InvalidParameterError, match=r"'requirements' parameter of anonymize is empty.*KAnonymity"):
        fa.anonymize(inst, [], method=method)
    with pytest.raises(fa.InvalidParameterError, match="is empty"):
        fa.anonymize(inst, (), method=method)
    reqs = [fa.KAnonymity(2)]
    rel = fa.anonymize(inst, reqs, method="mondrian")
    assert fa.verify(inst, rel, reqs).passed


@pytest.mark.parametrize("bad", ["x", "adult", None, 3])
def test_describe_names_what_it_takes(bad):
    with pytest.raises(fa.InvalidParameterError, match="'instance' parameter of describe must be an Instance"):
        fa.describe(bad)
    assert fa.describe(fa.load("diva_table1"))["n_rows"] == fa.load("diva_table1").n_rows


def test_choose_method_refuses_a_time_limit_that_is_no_positive_number():
    """The app's Run page asks it with the job's limit: 'abc' was a ValueError (500)."""
    for bad in ("abc", -3, float("nan")):
        with pytest.raises(fa.InvalidParameterError,
                           match="'time_limit' parameter of choose_method"):
            choose_method(fa.load("diva_table1"), [fa.KAnonymity(2)], time_limit=bad)


def test_auto_runs_the_exact_model_when_it_is_the_only_method_left():
    """A 10-record table under a diversity constraint that no release meets (5 women,
    at least 6 to show): with 10 s the model is above the size rule's budget and
    there is no lattice, so auto refused the table as too large; cpsat proves it
    infeasible in about a second."""
    from fairanon.models.diversity import parse_constraints

    inst = fa.load("diva_table1")
    reqs = [fa.KAnonymity(3), *parse_constraints("GEN(Female) [6, 10]")]
    assert (inst.table["GEN"] == "Female").sum() < 6
    rel = fa.anonymize(inst, reqs, method="auto", seed=0, time_limit=10)
    assert rel.provenance["auto_choice"] == "cpsat" and rel.status == fa.Status.INFEASIBLE


@pytest.mark.parametrize("export, match", [(5, "must be a file path"),
                                           ("/nonexistent/dir/m.pb", "could not be written")])
def test_cpsat_refuses_an_export_it_cannot_write(export, match):
    with pytest.raises(fa.InvalidParameterError, match=match):
        fa.anonymize(fa.load("diva_table1"), [fa.KAnonymity(3)], method="cpsat", seed=0,
                     export=export)
