"""Job files: bundled data sets with schema overrides, JSON jobs, requirement specs."""

import json

import pytest

import fairanon as fa
from fairanon.exceptions import InvalidParameterError
from fairanon.jobs import default_job, read_job
from fairanon.models.requirements import requirement_from_spec


def test_default_job_is_the_adult_job():
    job = read_job(default_job())
    assert job.instance.name == "adult" and job.instance.n_rows == 30162
    assert [str(r) for r in job.requirements] == ["5-anonymity", "2-diversity", "0.2-closeness (ordered EMD)"]
    assert job.method == "mondrian-loss" and job.seed == 0


def test_dataset_with_schema_override(tmp_path):
    path = tmp_path / "job.json"
    path.write_text(json.dumps({
        "instance": {"dataset": "german", "schema": {"age": {"role": "ignore"}}},
        "requirements": [{"k": 10}, {"diversity": "job(skilled) [100, 700]"}],
        "method": "mondrian",
    }))
    job = read_job(str(path))
    assert "age" not in job.instance.schema.qi
    assert job.instance.n_rows == 1000
    assert str(job.requirements[1]) == "diversity job[skilled] in [100, 700]"


@pytest.mark.parametrize(
    "spec",
    [
        {"k_anonymity": {"k": 5}},
        {"l_diversity": {"l": 3, "variant": "recursive", "c": "2"}},
        {"l_diversity": {"l": "1.5", "variant": "entropy"}},
        {"t_closeness": {"t": "0.15", "distance": "hierarchical", "attribute": "disease"}},
        {"diversity": {"target": {"sex": "F", "race": "Black"}, "lower": 1, "upper": 9}},
        {"alpha_protection": {"measure": "elift", "alpha": "1.2", "min_support": 20, "strict": True}},
    ],
)
def test_requirement_specs_round_trip(spec):
    req = requirement_from_spec(spec)
    assert requirement_from_spec(req.to_spec()) == req


def test_thresholds_are_exact():
    req = requirement_from_spec({"t_closeness": {"t": 0.15}})
    assert req.t.denominator == 20
    assert fa.AlphaProtection("elift", 1.2).alpha == fa.AlphaProtection("ER", "6/5").alpha


def test_a_requirement_entry_with_a_bad_value_gives_the_class_message():
    from fairanon.exceptions import InvalidParameterError

    with pytest.raises(InvalidParameterError) as info:
        requirement_from_spec({"average_risk": {"r": 0}})
    assert str(info.value) == "The 'r' parameter of AverageRisk must be in (0, 1]. Got 0 instead."
    with pytest.raises(InvalidParameterError, match="Bad arguments for 'average_risk': .*unexpected keyword"):
        requirement_from_spec({"average_risk": {"risk": 0}})


def test_a_table_read_with_numeric_ids_is_read_again_for_its_ids(tmp_path):
    """A caller's table whose id column pandas parsed as numbers (007 -> 7) is not used:
    the file is read again, and the ids are as the file writes them."""
    import pandas as pd

    from fairanon.jobs import load_instance_spec

    (tmp_path / "d.csv").write_text("id,age,sex\n007,30,F\n010,40,M\n")
    spec = {"csv": "d.csv", "id_column": "id",
            "schema": {"age": {"role": "qi", "type": "numeric"}, "sex": {"role": "protected", "protected": ["F"]}}}
    parsed = pd.read_csv(tmp_path / "d.csv", dtype={"sex": str})
    assert parsed["id"].tolist() == [7, 10]
    instance = load_instance_spec(spec, str(tmp_path), table=parsed)
    assert list(instance.row_ids) == ["007", "010"]


def test_job_options_naming_the_jobs_own_keys_are_refused(tmp_path):
    """'options: {time_limit: 5}' reached anonymize as a second time_limit (a TypeError);
    it is refused by name, saying where it belongs."""
    from fairanon.jobs import read_job

    path = tmp_path / "job.yaml"
    path.write_text("instance: {dataset: diva_table1}\nrequirements: [{k_anonymity: {k: 2}}]\n"
                    "options: {time_limit: 5, seed: 1}\n")
    named = r"name \['seed', 'time_limit'\]: arguments of the job"
    with pytest.raises(InvalidParameterError, match=named):
        read_job(str(path))


def test_a_job_expanding_past_the_bound_through_aliases_is_refused(tmp_path):
    """Nine levels of nine aliases (under 600 bytes) expand to 9^9 values: refused by
    the count of values, before anything reads them (a str() of the name ran out of
    memory); a name that is no text is refused too."""
    from fairanon.jobs import read_job

    lines = ["a0: &l0 [x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 9) + "]" for i in range(1, 8)]
    lines += ["name: [" + ", ".join(["*l7"] * 9) + "]"]
    path = tmp_path / "bomb.yaml"
    path.write_text("\n".join(lines) + "\n")
    assert path.stat().st_size < 600
    with pytest.raises(InvalidParameterError, match="expands to more than 1,000,000 values"):
        read_job(str(path))
    path.write_text("instance: {dataset: diva_table1}\nrequirements: [{k_anonymity: {k: 2}}]\n"
                    "name: [1]\n")
    with pytest.raises(InvalidParameterError, match="'name' of job file .* must be text"):
        read_job(str(path))
