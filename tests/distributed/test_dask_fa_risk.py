"""fa.risk and fa.verify(..., risk=True) with engine="dask", and the witnesses of a
release written by Dask, against the local engine (an independent path: one machine
regroups the table itself) and hand-computed figures. Dask's synchronous scheduler: the
figures do not depend on where the tasks run, and the tests stay fast."""

import math
from fractions import Fraction

import pandas as pd
import pytest

dask = pytest.importorskip("dask")
dd = pytest.importorskip("dask.dataframe")

import fairanon as fa  # noqa: E402
from fairanon._memory import memory_limit  # noqa: E402
from fairanon.distributed import as_dask_instance, as_dask_release, mondrian_dask, verify_dask  # noqa: E402
from fairanon.heuristics.mondrian import mondrian  # noqa: E402
from fairanon.instances.synthetic import population  # noqa: E402
from fairanon.models.verify import verify  # noqa: E402


pytestmark = pytest.mark.usefixtures("synchronous")


def _without_seconds(figures: dict) -> dict:
    return {k: v for k, v in figures.items() if k != "seconds"}


def _figures(report) -> dict:
    """A RiskReport as a dict, without its timings and instance name (a Parquet
    instance is named after its file)."""
    return {k: v for k, v in report.to_dict().items() if k not in ("seconds", "instance")}


@pytest.mark.parametrize("released", [False, True], ids=["instance", "release"])
def test_fa_risk_on_dask_equals_the_local_report(released):
    inst = population(400, n_qi=3, seed=5)
    release = fa.anonymize(inst, [fa.KAnonymity(3)], method="mondrian", seed=0) if released else None
    options = {"sampling_fraction": "1/10", "threshold": "1/3"}
    local = fa.risk(inst, release, **options)
    dist = fa.risk(inst, release, engine="dask", **options)
    assert isinstance(dist, fa.RiskReport) and dist.instance == local.instance
    assert _figures(dist) == _figures(local)
    assert dist.released is released and dist.population.population_size == 4000
    # Not all zero: the population estimators were fitted; SUDA found MSUs in the instance.
    assert any(e.fitted for e in local.uniqueness.estimates.values())
    assert released or local.suda.n_msus > 0


def test_fa_risk_on_dask_of_a_hand_computed_release(hand_release):
    inst, release = hand_release  # classes of 3, 2 and 1 records and a suppressed block of 2
    rep = fa.risk(inst, release, engine="dask", sampling_fraction="1/2", suda_max_size=None)
    assert (rep.sample.n_records, rep.sample.n_classes, rep.sample.n_suppressed) == (8, 4, 2)
    assert rep.sample.highest == 1 and rep.sample.average == Fraction(4, 8)
    assert rep.uniqueness.sample_uniques == 1 and rep.population.population_size == 16
    # π = 1/2: the individual risk of a class of f records is E[1/F | f], F − f negative
    # binomial: r_f = Σ_{F ≥ f} (1/F) C(F − 1, f − 1) (1/2)^F, summed here term by term.
    def r(f):
        return sum(math.comb(F - 1, f - 1) * 0.5**F / F for F in range(f, 400))

    expected = 3 * r(3) + 2 * r(2) + r(1) + 2 * r(2)
    assert rep.individual.expected_reidentifications == pytest.approx(expected, rel=1e-12)
    assert r(1) == pytest.approx(math.log(2), rel=1e-12)
    assert rep.disclosure["disease"].beta == 7  # hiv: 1 of 8 records, all of (s3, 35)
    # The instance itself: every record is alone on (city, age); no suppressed block.
    own = fa.risk(inst, engine="dask", suda_max_size=None)
    assert (own.released, own.sample.n_classes, own.sample.n_suppressed, own.uniqueness.sample_uniques) == \
        (False, 8, 0, 8)


def test_fa_risk_on_dask_of_a_distributed_release():
    inst = population(300, n_qi=3, seed=2)
    release = fa.anonymize(inst, [fa.KAnonymity(4)], method="mondrian", engine="dask", seed=0)
    rep = fa.risk(inst, release, engine="dask", suda_max_size=None)
    # The same rows in the same order on one machine: the same figures and witnesses.
    assert _figures(rep) == _figures(fa.risk(inst, release.compute(), suda_max_size=None))
    assert rep.sample.highest <= Fraction(1, 4)


def test_fa_risk_on_dask_of_a_parquet_path_and_a_dask_frame(tmp_path):
    inst = population(300, n_qi=3, seed=2)
    release = fa.anonymize(inst, [fa.KAnonymity(4)], method="mondrian", seed=0)
    path = tmp_path / "data.parquet"
    inst.table.to_parquet(path, index=False)  # the population's ids are 0..n-1 in row order
    frame = dd.from_pandas(release.table, npartitions=2, sort=False)
    rep = fa.risk(str(path), frame, engine="dask", schema=inst.schema, suda_max_size=None)
    assert rep.instance == "data" and _figures(rep) == _figures(fa.risk(inst, release, suda_max_size=None))
    dinst = as_dask_instance(inst, partitions=3)
    assert _figures(fa.risk(dinst, engine="dask", suda_max_size=None)) == _figures(fa.risk(inst, suda_max_size=None))


def test_fa_verify_on_dask_with_risk_equals_the_local_report():
    inst = population(400, n_qi=3, seed=5)
    release = fa.anonymize(inst, [fa.KAnonymity(3)], method="mondrian", seed=0)
    reqs = [fa.KAnonymity(5), fa.AverageRisk("1/10")]
    local = fa.verify(inst, release, reqs, risk=True)
    dist = fa.verify(inst, release, reqs, engine="dask", risk=True)
    assert dist.method == "mondrian" and dist.risk == local.risk
    assert _without_seconds(dist.risk_report) == _without_seconds(local.risk_report)
    assert local.risk_report["sample"]["prosecutor_highest"]["exact"] == "1/3"  # k = 3
    assert not hasattr(fa.verify(inst, release, reqs, engine="dask"), "risk_report")


def test_fa_risk_on_dask_refuses_what_it_cannot_measure():
    base = population(200, n_qi=3, seed=5)
    schema = fa.Schema([*base.schema, fa.Attribute("w", role="weight", kind="numeric")])
    inst = fa.Instance(base.table.assign(w=3.0), schema, name="weighted")
    with pytest.raises(fa.InvalidParameterError, match="weight column 'w'.*weights=False"):
        fa.risk(inst, engine="dask")
    with pytest.raises(fa.InvalidParameterError, match="weight column 'w'"):
        fa.risk(base, engine="dask", weights="w")
    assert _figures(fa.risk(inst, engine="dask", weights=False, suda_max_size=None)) == \
        _figures(fa.risk(inst, weights=False, suda_max_size=None))
    with memory_limit("1KB"), pytest.raises(fa.MemoryLimitError, match="suda_max_size=None"):
        fa.risk(base, engine="dask")


def test_fa_risk_bad_input():
    inst = population(100, n_qi=3, seed=1)
    release = fa.anonymize(inst, [fa.KAnonymity(3)], method="mondrian", seed=0)
    with pytest.raises(fa.InvalidParameterError, match=r"no option\(s\) \['classes'\]"):
        fa.risk(inst, engine="dask", classes=None)
    with pytest.raises(fa.InvalidParameterError, match=r"no option\(s\) \['k'\]"):
        fa.risk(inst, k=3)
    with pytest.raises(fa.InvalidParameterError, match="'engine' parameter of risk"):
        fa.risk(inst, engine="spark")
    with pytest.raises(fa.InvalidParameterError, match="needs a schema"):
        fa.risk(inst.table, engine="dask")
    with pytest.raises(fa.InvalidParameterError, match="DistributedRelease, a Dask DataFrame or a Parquet path"):
        fa.risk(inst, release.table, engine="dask")
    with pytest.raises(fa.SchemaError, match="'sensitive' parameter of risk names 'nope'"):
        fa.risk(inst, release, engine="dask", sensitive=["nope"])
    with pytest.raises(fa.SchemaError, match="lacks quasi-identifier"):
        fa.risk(inst, fa.Release(release.table.drop(columns=["age"]), groups=release.groups), engine="dask")
    with pytest.raises(fa.InvalidParameterError, match="'suda_max_size' parameter of risk"):
        fa.risk(inst, engine="dask", suda_max_size=0)
    empty = fa.Release(release.table.iloc[:0], groups=release.groups[:0])
    with pytest.raises(fa.SchemaError, match="holds no rows"):  # as on one machine
        fa.risk(inst, empty, engine="dask")
    assert fa.verify(inst, empty, engine="dask", risk=True).risk_report is None


def test_fa_verify_on_dask_with_risk_leaves_the_weighted_figures_as_errors():
    base = population(200, n_qi=3, seed=5)
    schema = fa.Schema([*base.schema, fa.Attribute("w", role="weight", kind="numeric")])
    inst = fa.Instance(base.table.assign(w=3.0), schema, name="weighted")
    release = fa.anonymize(inst, [fa.KAnonymity(3)], method="mondrian", seed=0)
    dist = _without_seconds(fa.verify(inst, release, engine="dask", risk=True).risk_report)
    local = _without_seconds(fa.verify(inst, release, risk=True).risk_report)
    assert "weight column 'w'" in dist["individual"]["error"] and local["individual"]["source"].startswith("weights")
    assert {k: v for k, v in dist.items() if k not in ("individual", "journalist")} == \
        {k: v for k, v in local.items() if k not in ("individual", "journalist")}


def test_witnesses_of_a_dask_release_are_those_of_the_single_machine_one():
    # The same release, written by Dask in the order of its shuffle and by one machine in
    # the instance's order: every failing check names the same class and records.
    inst = population(600, n_qi=3, seed=7)
    dinst = as_dask_instance(inst, partitions=2)
    written = mondrian_dask(dinst, [fa.KAnonymity(3)], max_rows=200).compute()  # in the order Dask wrote it
    single = mondrian(inst, [fa.KAnonymity(3)])
    assert not written.table.index.equals(single.table.index)  # another order
    reqs = [fa.KAnonymity(10), fa.LDiversity(3), fa.LDiversity(2, variant="recursive", c=2),
            fa.TCloseness(Fraction(1, 10), distance="equal"), fa.AverageRisk("1/10")]
    remote, local = verify_dask(dinst, as_dask_release(written), reqs), verify(inst, single, reqs)
    assert [c.name for c in local.checks if not c.passed] == [str(r) for r in reqs]
    assert [(c.name, c.passed, c.achieved, c.witness) for c in remote.checks] == \
        [(c.name, c.passed, c.achieved, c.witness) for c in local.checks]
    # The witnesses name several classes, each one's records in id order.
    assert len({str(c.witness["class"]) for c in local.checks[4:]}) >= 2
    assert all(c.witness["records"] == sorted(c.witness["records"]) for c in local.checks[4:])


def _with_ids(inst, ids):
    """`inst` with the record ids `ids` (a pandas Index) in place of its own."""
    return fa.Instance(inst.table.set_axis(ids, axis=0), inst.schema, name="ids")


@pytest.mark.parametrize("ids", [
    pd.Index([f"r{i}" for i in range(120)], dtype=object, name="rid"),
    pd.Index([f"r{i}" for i in range(120)], dtype="string"),
    pd.Index(list(range(120)), dtype=object),  # whole numbers held as objects: ids, not text
], ids=["text", "arrow-text-unnamed", "object-ints"])
def test_dask_risk_and_verify_of_ids_that_are_not_numpy_integers(ids):
    inst = _with_ids(population(120, n_qi=3, seed=7), ids)
    single = mondrian(inst, [fa.KAnonymity(3)])
    release = fa.Release(single.table.iloc[::-1], single.groups[::-1], provenance={"method": "hand"})
    assert _figures(fa.risk(inst, release, engine="dask", suda_max_size=None)) == \
        _figures(fa.risk(inst, release, suda_max_size=None))
    reqs = [fa.KAnonymity(10)]  # fails: a witness class and its records, in id order
    remote, local = (fa.verify(inst, release, reqs, engine=e, risk=True) for e in ("dask", "local"))
    assert [(c.name, c.passed, c.witness) for c in remote.checks] == \
        [(c.name, c.passed, c.witness) for c in local.checks]
    assert not local.passed and _without_seconds(remote.risk_report) == _without_seconds(local.risk_report)
    # The bytes the integrity join moves count each id as its type holds it.
    joined = verify_dask(as_dask_instance(inst), as_dask_release(release), reqs).join_bytes
    assert isinstance(joined, int) and joined > 0


@pytest.mark.parametrize("ids, problem", [
    (pd.Index([i if i % 2 else f"r{i}" for i in range(200)], dtype=object), "mixed kinds"),
    (pd.Index([None] + [f"r{i}" for i in range(1, 200)], dtype=object), "1 missing value"),
], ids=["numbers-beside-text", "missing-id"])
def test_dask_refuses_ids_it_cannot_sort(ids, problem):
    inst = _with_ids(population(200, n_qi=3, seed=7), ids)
    release = mondrian(inst, [fa.KAnonymity(3)])
    with pytest.raises(fa.SchemaError, match=f"record ids of instance 'ids'.*{problem}.*engine='local'"):
        fa.risk(inst, release, engine="dask")
    with pytest.raises(fa.SchemaError, match=f"record ids of the release.*{problem}"):
        as_dask_release(release)
    with pytest.raises(fa.SchemaError, match=problem):
        fa.verify(inst, release, engine="dask", risk=True)


def test_integrity_witnesses_follow_the_record_ids_on_both_engines():
    # Two records with an unreadable age and a changed race (ids 40 and 100) and two
    # records released twice (ids 90 and 30, in that order): the witnesses are record
    # 40 and the ids [30, 90], however the rows are ordered and on either engine.
    inst = population(120, n_qi=3, seed=7)
    table = mondrian(inst, [fa.KAnonymity(3)]).table.astype(object)
    for rid in (40, 100):
        table.loc[rid, "age"] = "nonsense"
        table.loc[rid, "race"] = "Other" if table.loc[rid, "race"] != "Other" else "White"
    table = pd.concat([table, table.loc[[90, 30]]])
    reversed_rows = table.iloc[::-1]  # 100 before 40, and 30's copy before 90's
    expected = {"lost": [], "duplicated": [30, 90], "unknown": [], "suppressed_not_released": []}
    for rows, engine in ((table, "local"), (reversed_rows, "local"), (reversed_rows, "dask")):
        release = fa.Release(rows, groups=[0] * len(rows), provenance={"method": "hand"})
        report = fa.verify(inst, release, [fa.KAnonymity(3)], engine=engine)
        truth, unchanged = report["truthfulness"].witness, report["unchanged values"].witness
        assert report["rows"].witness == expected, engine
        assert (truth["row"], truth["attribute"], truth["released"]) == (40, "age", "nonsense"), engine
        assert (unchanged["row"], unchanged["attribute"]) == (40, "race"), engine
        assert (report["truthfulness"].achieved, report["unchanged values"].achieved) == (2, 2)


@pytest.fixture
def no_dask_pass(monkeypatch):
    """The Dask engine's passes over the table fail the test if they run."""
    import fairanon.distributed.verify as distributed_verify

    def no_pass(*args, **kwargs):
        raise AssertionError("the Dask passes ran before the options were checked")

    monkeypatch.setattr(distributed_verify, "_verify_dask", no_pass)


@pytest.mark.parametrize("option, message", [
    ({"sampling_fraction": 5}, r"'sampling_fraction' parameter of risk must be in \(0, 1\]\. Got 5"),
    ({"population_size": 0}, r"'population_size' parameter of risk must be an int in \[1, inf\)"),
    ({"threshold": 2}, r"'threshold' parameter of risk must be in \[0, 1\]\. Got 2"),
    ({"models": ["nope"]}, r"'models' parameter of risk must name models of .*Got \['nope'\]"),
    ({"models": 5}, r"'models' parameter of risk must be a sequence of names"),
    ({"individual_method": "x"}, r"'individual_method' parameter of risk must be one of 'exact', 'sdcmicro'"),
    ({"suda_max_size": 0}, r"'suda_max_size' parameter of risk must be an int in \[1, inf\)"),
    ({"weights": True}, r"'weights' parameter of risk must be a column name, False or None\. Got True"),
    ({"sensitive": 5}, r"'sensitive' parameter of risk must be an attribute name or a sequence of them\. Got 5"),
])
def test_fa_risk_refuses_a_bad_option_before_reading_the_table(option, message, no_dask_pass):
    inst = population(60, n_qi=3, seed=1)
    for engine in ("local", "dask"):
        with pytest.raises(fa.InvalidParameterError, match=message):
            fa.risk(inst, engine=engine, **option)


def test_fa_risk_on_dask_refuses_a_weight_column_before_its_passes(no_dask_pass):
    inst = population(60, n_qi=3, seed=1)
    with pytest.raises(fa.InvalidParameterError, match="weight column 'age'"):
        fa.risk(inst, engine="dask", weights="age")


def test_fa_verify_risk_must_be_a_bool():
    inst = population(60, n_qi=3, seed=1)
    release = mondrian(inst, [fa.KAnonymity(3)])
    for engine in ("local", "dask"):
        with pytest.raises(fa.InvalidParameterError,
                           match=r"'risk' parameter of verify must be a bool \(True or False\)\. Got 'yes'"):
            fa.verify(inst, release, engine=engine, risk="yes")
