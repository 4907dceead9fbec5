"""Suite files: grids, labels, run identities and one clear error per bad input."""

import textwrap

import pytest

from fairanon.bench.spec import Suite, load_suite, parse_memory, resolve_method
from fairanon.exceptions import InvalidParameterError
from fairanon.heuristics.mondrian import mondrian

BASE = {
    "instances": [{"dataset": "dewri_t1"}],
    "requirements": [{"k_anonymity": {"k": 2}}],
    "algorithms": [{"method": "mondrian"}],
}


def _suite(**changes):
    doc = dict(BASE)
    doc.update(changes)
    return Suite.from_dict(doc)


def test_grids_expand_into_runs():
    suite = _suite(
        instances=[
            {"dataset": "dewri_t1"},
            {"synthetic": {"n_rows": [100, 1000], "n_qi": 3, "seed": 0}, "name": "pop"},
        ],
        requirements=[
            {"name": "k", "set": [{"k_anonymity": {"k": [2, 3]}}]},
            [{"k_anonymity": 2}, {"l_diversity": 2}],
        ],
        algorithms=[{"method": "mondrian", "params": {"cut_rule": ["median", "balanced"]}}],
        seeds=[0, 1],
        repetitions=2,
    )
    runs = suite.runs()
    assert len(runs) == 3 * 3 * 2 * 2 * 2
    assert [i["name"] for i in suite.instances] == ["dewri_t1", "pop n=100", "pop n=1000"]
    first = runs[0]
    assert first.release == "mondrian(cut_rule=median) k(k=2) seed=0"
    assert first.requirements_text == "2-anonymity"
    assert first.columns == {"p.k": 2, "p.cut_rule": "median"}
    assert len({r.key for r in runs}) == len(runs)
    assert [r.index for r in runs] == list(range(len(runs)))
    two = [r for r in runs if r.reqset == "k_anonymity+l_diversity"]
    assert two[0].release.endswith("2-anonymity; 2-diversity seed=0")
    pop = next(r for r in runs if r.instance_label == "pop n=1000")
    assert pop.instance["synthetic"]["n_rows"] == 1000 and pop.columns["i.n_rows"] == 1000


def test_run_keys_are_stable_and_ignore_limits():
    a = _suite().runs()[0]
    b = _suite(time_limit=5, memory_limit="1GB").runs()[0]
    assert a.key == b.key
    assert a.key != _suite(seeds=[1]).runs()[0].key


def test_defaults_and_per_algorithm_limits():
    suite = _suite(algorithms=[{"method": "mondrian", "time_limit": 3, "memory_limit": 512}])
    run = suite.runs()[0]
    assert (run.time_limit, run.memory_limit, run.grace) == (3.0, 512 * 2**20, 5.0)
    assert suite.metrics["vectors"] == "auto" and suite.seeds == [0]


def test_methods_resolve_by_name_and_module_path():
    assert resolve_method("mondrian") is mondrian
    assert resolve_method("fairanon.heuristics.mondrian:mondrian") is mondrian
    with pytest.raises(InvalidParameterError, match="'mondrian'"):
        resolve_method("nonesuch")
    with pytest.raises(InvalidParameterError, match="Cannot import"):
        resolve_method("no.such.module:f")


def test_missing_methods_can_be_skipped():
    suite = _suite(
        algorithms=[{"method": "mondrian"}, {"method": "nonesuch", "skip_missing": True}]
    )
    assert suite.skipped == ["nonesuch"] and len(suite.runs()) == 1


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"bogus": 1}, "Unknown keys \\['bogus'\\]"),
        ({"instances": []}, "non-empty 'instances'"),
        ({"instances": [{"dataset": "nope"}]}, "Unknown dataset 'nope'"),
        ({"instances": [{"csv": "nope.csv"}]}, "does not exist"),
        ({"instances": [{"dataset": "adult", "csv": "x.csv"}]}, "exactly one of"),
        ({"instances": [{"synthetic": {"n_qi": 3}}]}, "'n_rows'"),
        ({"instances": [{"dataset": "dewri_t1"}, {"dataset": "dewri_t1"}]}, "distinct names"),
        ({"requirements": [{"k_anonymity": {"k": 0}}]}, "'k' parameter of KAnonymity"),
        ({"requirements": [{"k_anonymity": {"k": []}}]}, "empty list"),
        ({"requirements": [{"nonsense": 1}]}, "Unknown requirement"),
        ({"algorithms": [{"method": "nonesuch"}]}, "must be one of"),
        ({"algorithms": [{"method": "mondrian"}, {"method": "mondrian"}]}, "distinct names"),
        ({"algorithms": [{"params": {}}]}, "needs a 'method'"),
        ({"seeds": ["a"]}, "'seeds'"),
        ({"repetitions": 0}, "'repetitions'"),
        ({"time_limit": -1}, "'time_limit'"),
        ({"memory_limit": "lots"}, "'memory_limit'"),
        ({"metrics": {"vectors": "sometimes"}}, "metrics.vectors"),
        ({"metrics": {"utility": "sometimes"}}, "metrics.utility"),
        # 1 and 0 equal True and False but are not switches.
        ({"metrics": {"utility": 1}}, "metrics.utility"),
        ({"metrics": {"utility": 0.0}}, "metrics.utility"),
        ({"metrics": {"vectors": 1}}, "metrics.vectors"),
        ({"metrics": {"vectors": 0}}, "metrics.vectors"),
        ({"metrics": {"classifier": "svm"}}, "metrics.classifier"),
        ({"compare": {"properties": ["nope"]}}, "compare.properties"),
        ({"compare": {"multi": [{"procedure": "wtd", "properties": ["size"]}]}}, "needs 'weights'"),
        (
            {"compare": {"multi": [{"procedure": "vote", "properties": ["size"]}]}},
            "procedure must be one of",
        ),
    ],
)
def test_bad_suites(changes, message):
    with pytest.raises(InvalidParameterError, match=message):
        _suite(**changes)


def test_load_suite_from_yaml(tmp_path):
    (tmp_path / "data.csv").write_text("id,age,disease\n1,30,flu\n2,31,cold\n3,40,flu\n4,41,cold\n")
    path = tmp_path / "mine.yaml"
    path.write_text(
        textwrap.dedent("""
        instances:
          - csv: data.csv
            id_column: id
            schema:
              age: {role: qi, type: numeric}
              disease: {role: sensitive}
        requirements:
          - k_anonymity: {k: 2}
        algorithms: [mondrian]
    """)
    )
    suite = load_suite(str(path))
    assert suite.name == "mine" and suite.instances[0]["name"] == "data"
    assert suite.base_dir == str(tmp_path)
    with pytest.raises(InvalidParameterError, match="does not exist"):
        load_suite(str(tmp_path / "missing.yaml"))
    (tmp_path / "bad.yaml").write_text("instances: [\n")
    with pytest.raises(InvalidParameterError, match="malformed"):
        load_suite(str(tmp_path / "bad.yaml"))


def test_parse_memory():
    assert parse_memory(None) is None
    assert parse_memory("1.5G") == int(1.5 * 2**30)
    assert parse_memory("256 MiB") == 256 * 2**20
    with pytest.raises(InvalidParameterError):
        parse_memory(0)


def test_experiments_restrict_the_product():
    suite = Suite.from_dict(
        {
            "requirements": [{"k_anonymity": {"k": 2}}],
            "experiments": [
                {"name": "a", "instances": [{"dataset": "dewri_t1"}], "algorithms": ["mondrian"]},
                {
                    "name": "b",
                    "instances": [{"dataset": "diva_table1"}, {"dataset": "dewri_t1"}],
                    "requirements": [{"k_anonymity": {"k": [2, 3]}}],
                    "algorithms": ["mondrian"],
                },
                {
                    "name": "c",
                    "instances": [{"dataset": "dewri_t1"}],
                    "algorithms": [{"method": "nonesuch", "skip_missing": True}],
                },
            ],
        }
    )
    runs = suite.runs()
    # dewri_t1 with k = 2 is in both a and b: run once.
    assert [(r.instance_label, r.release) for r in runs] == [
        ("dewri_t1", "mondrian 2-anonymity"),
        ("diva_table1", "mondrian 2-anonymity"),
        ("diva_table1", "mondrian 3-anonymity"),
        ("dewri_t1", "mondrian 3-anonymity"),
    ]
    assert [e.name for e in suite.experiments] == ["a", "b"] and suite.skipped == ["nonesuch"]
    assert [i["name"] for i in suite.instances] == ["dewri_t1", "diva_table1"]


def test_experiment_errors():
    base = {"requirements": [{"k_anonymity": 2}], "algorithms": ["mondrian"]}
    with pytest.raises(InvalidParameterError, match="experiment 'x' needs a non-empty 'instances'"):
        Suite.from_dict({**base, "experiments": [{"name": "x"}]})
    with pytest.raises(InvalidParameterError, match="two different instances"):
        Suite.from_dict(
            {
                **base,
                "experiments": [
                    {"instances": [{"dataset": "dewri_t1", "name": "t"}]},
                    {"instances": [{"dataset": "diva_table1", "name": "t"}]},
                ],
            }
        )
    with pytest.raises(InvalidParameterError, match="both labelled"):
        Suite.from_dict(
            {
                **base,
                "instances": [{"dataset": "dewri_t1"}],
                "experiments": [
                    {"algorithms": [{"method": "mondrian"}]},
                    {"algorithms": [{"method": "mondrian", "params": {"cut_rule": "balanced"}}]},
                ],
            }
        )


@pytest.mark.parametrize("name", ["quick", "paper", "scale"])
def test_shipped_suites_are_valid(name):
    import os

    path = os.path.join(
        os.path.dirname(__file__), "..", "..", "benchmarks", "suites", f"{name}.yaml"
    )
    suite = load_suite(path)
    assert suite.name == name and suite.runs()
    if name == "scale":
        assert max(i["spec"]["synthetic"]["n_rows"] for i in suite.instances) == 10_000_000
