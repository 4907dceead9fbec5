"""The exact model's build stops at its deadline inside an attribute's labels and
inside the typing of the records, not only between them. The clock is a counter
(each reading one tick later), so where the build stops does not depend on the load."""

import itertools
import time

import numpy as np
import pandas as pd
import pytest

import fairanon as fa
from fairanon.solver.bounds import lp_bound
from fairanon.solver.local_recoding import labels as labels_module
from fairanon.solver.local_recoding.encoding import BuildStopped, encode, type_table
from fairanon.solver.local_recoding.labels import _active, _label_losses


def _ages():
    """72 ages (17 to 88, as in UCI Adult), each twice: 72 x 71 / 2 = 2,556 ranges."""
    df = pd.DataFrame({"age": list(range(17, 89)) * 2, "d": ["x", "y"] * 72})
    schema = fa.Schema([fa.Attribute("age", kind="numeric"), fa.Attribute("d", role="sensitive")])
    return fa.Instance(df, schema, name="ages")


@pytest.fixture
def ticks(monkeypatch):
    """time.perf_counter as a counter; returns the ranges formatted so far."""
    clock = itertools.count()
    monkeypatch.setattr(time, "perf_counter", lambda: float(next(clock)))
    formatted = []
    real = labels_module.format_range

    def counted(*args):
        formatted.append(args)
        return real(*args)

    monkeypatch.setattr(labels_module, "format_range", counted)
    return formatted


def test_encode_stops_inside_the_ranges_of_an_attribute(ticks):
    """20 readings of the clock: the build stops among age's 2,556 ranges, not after
    all of them (it looked at the deadline only between attributes)."""
    with pytest.raises(BuildStopped, match="building the labels of 'age'"):
        encode(_ages(), [fa.KAnonymity(2)], max_range_values=72, deadline=time.perf_counter() + 20)
    assert 0 < len(ticks) < 20


def test_lp_bound_stops_inside_the_ranges_of_an_attribute(ticks):
    """lp_bound with 20 ticks: no bound (None), and at most 20 of the 2,556 ranges were
    built before it gave up."""
    assert lp_bound(_ages(), [fa.KAnonymity(2)], "ncp", time_limit=20) is None
    assert len(ticks) < 20


def test_label_losses_stop_at_the_deadline():
    inst = _ages()
    values, _ = _active(inst, "age")
    texts = [f"[{int(lo)}-{int(hi)}]" for lo, hi in itertools.combinations(values, 2)]
    with pytest.raises(BuildStopped, match="building the labels of 'age'"):
        _label_losses(inst.schema["age"], values, None, texts, deadline=time.perf_counter() - 1,
                      stage="building the labels of 'age'")


def test_type_table_stops_at_the_deadline():
    inst = _ages()
    space = labels_module._label_space(inst, "age", "generalization", 72)
    with pytest.raises(BuildStopped, match="typing the records"):
        type_table(inst, [fa.KAnonymity(2)], "generalization", [space], [space.row_value],
                   [space.values], deadline=time.perf_counter() - 1)


def test_type_table_stops_while_listing_each_types_records(ticks, monkeypatch):
    """type_table looks at the clock before sorting the records and before listing the
    types, then every TYPES_BLOCK types whose records it lists (one here): the third
    reading is past a deadline three ticks ahead, while the 72 types' records are listed
    (np.split listed them all at once, 0.03-0.07 s on UCI Adult, without a look)."""
    from fairanon.solver.local_recoding import encoding

    inst = _ages()
    space = labels_module._label_space(inst, "age", "generalization", 72)
    monkeypatch.setattr(encoding, "TYPES_BLOCK", 1, raising=False)
    with pytest.raises(BuildStopped, match="typing the records"):
        type_table(inst, [fa.KAnonymity(2)], "generalization", [space], [space.row_value],
                   [space.values], deadline=time.perf_counter() + 3)
    # With more time the table is typed: 72 ages of two records each.
    enc = type_table(inst, [fa.KAnonymity(2)], "generalization", [space], [space.row_value],
                     [space.values], deadline=time.perf_counter() + 1000)
    assert [len(rows) for rows in enc.rows] == [2] * 72
    assert sorted(np.concatenate(enc.rows).tolist()) == list(range(144))


def test_a_numeric_attributes_ranges_are_every_run_narrowest_first():
    """By hand, 4 values: the runs of 2 (3 of them), of 3 (2), and all 4 ('*'), after
    each value's own label. (The ranges are held in arrays, not one tuple each.)"""
    df = pd.DataFrame({"n": [1, 2, 3, 5] * 2, "d": ["x", "y"] * 4})
    inst = fa.Instance(df, fa.Schema([fa.Attribute("n", kind="numeric"),
                                      fa.Attribute("d", role="sensitive")]))
    space = labels_module._label_space(inst, "n", "generalization", 4)
    assert space.texts == ["1", "2", "3", "5", "[1-2]", "[2-3]", "[3-5]", "[1-3]", "[2-5]", "*"]
    assert list(zip(space.lo.tolist(), space.hi.tolist())) == [
        (0, 1), (1, 2), (2, 3), (3, 4), (0, 2), (1, 3), (2, 4), (0, 3), (1, 4), (0, 4)]
    single = fa.Instance(df[df.n == 1], inst.schema)
    one = labels_module._label_space(single, "n", "generalization", 4)
    assert one.texts == ["1", "*"] and one.hi.tolist() == [1, 1]


def test_the_bound_stops_calling_its_searches_at_the_deadline():
    """Past the deadline the types left get `missing` without a call each (160,501
    calls that only found the time gone took 0.4 s on the KDD census), in this process
    and in the forked half."""
    from fairanon.models import bounds

    calls = []
    out = bounds._until(list(range(5)), calls.append, time.perf_counter() - 1, "missing")
    assert out == ["missing"] * 5 and calls == []
    assert bounds._until([1, 2], lambda x: x * 2, None, "missing") == [2, 4]
