"""The warm start's labels mapped onto the model (solve._hint_from_release) against
the mapping it replaced, kept here as the reference: per released label, every
candidate label holding what it covers, the most specific (fewest values, lowest id)
taken, a value's own label by its text; then the records mapped alike take, per
attribute, the most specific label holding their values (found by the same scan)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import fairanon as fa
from fairanon.instances.builders import masking_hierarchy
from fairanon.solver.local_recoding import build_model, encode
from fairanon.solver.local_recoding import solve as solve_module


def _reference_labels(space, column):
    from fairanon.instances.generalization import label_covers

    uniq, inv = np.unique(column, return_inverse=True)
    covers = label_covers(space.attr, list(uniq))
    if space.attr.kind != "numeric":
        index = {v: i for i, v in enumerate(space.attr.domain)}
        codes = np.array([index[v] for v in space.values], dtype=np.int64)
    mapped = []
    for u in range(len(uniq)):
        if space.attr.kind == "numeric":
            mask = covers.contains(np.full(space.m, u), np.array(space.values))
        else:
            mask = covers.contains(np.full(space.m, u), codes)
        if mask.sum() <= 1 and mask.any() and uniq[u] in space.texts[: space.m]:
            mapped.append(space.texts.index(uniq[u]))
            continue
        ok = space.containing(np.flatnonzero(mask))
        if mask.sum() > 1:
            ok[space.own] = False
        cand = np.flatnonzero(ok)
        mapped.append(int(cand[np.lexsort((cand, space.sizes[cand]))[0]]) if len(cand) else -1)
    return np.array(mapped, dtype=np.int64)[inv.reshape(-1)]


def _reference_tight(enc, mapped):
    """Per group of records with the same protected value and mapped labels, per
    attribute: the most specific candidate label holding the group's values."""
    keys = list(zip(enc.protected[enc.row_type].tolist(), *[m.tolist() for m in mapped]))
    out = [m.copy() for m in mapped]
    for key in set(keys):
        rows = np.array([r for r, k in enumerate(keys) if k == key])
        for a, space in enumerate(enc.spaces):
            values = np.unique(enc.qi[enc.row_type[rows], a])
            ok = space.containing(values)
            if len(values) > 1:
                ok[space.own] = False
            cand = np.flatnonzero(ok)
            out[a][rows] = cand[np.lexsort((cand, space.sizes[cand]))[0]]
    return out


def _instance(seed):
    rng = np.random.default_rng(seed)
    n = 60
    codes = [f"{i:02d}" for i in range(30)]
    df = pd.DataFrame({
        "dx": rng.choice(codes[: rng.integers(4, 30)], n),
        "age": rng.integers(18, 18 + rng.integers(3, 30), n),
        "grade": rng.choice(list("abcdefghij"), n),
    })
    return fa.Instance(df, fa.Schema([
        fa.Attribute("dx", hierarchy=masking_hierarchy(codes, levels=1)),
        fa.Attribute("age", kind="numeric", intervals=fa.IntervalHierarchy((2, 4, 8, 16))),
        fa.Attribute("grade", kind="ordered", order=list("abcdefghij"),
                     hierarchy=fa.Hierarchy.from_levels([[g, "a-e" if g <= "e" else "f-j", "*"] for g in "abcdefghij"])),
    ]))


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("method", ["mondrian", "kmember", "oka"])
def test_hint_labels_are_the_reference_mapping(seed, method, monkeypatch):
    inst = _instance(seed)
    reqs = [fa.KAnonymity(3)]
    rel = fa.anonymize(inst, reqs, method=method, seed=seed)
    assert fa.verify(inst, rel, reqs).passed
    # 8: every range of the ordered grade is not a label (its hierarchy is), nor of the ages
    for max_range_values in (8, 30):
        enc = encode(inst, reqs, max_range_values=max_range_values)
        expected = _reference_tight(enc, [_reference_labels(s, rel.table[s.name].astype(str).to_numpy())
                                          for s in enc.spaces])
        pm = build_model(enc, reqs, objective="ncp")
        hint = solve_module._hint_from_release(pm, rel)
        # the hint's per-record vectors, read back from its x values
        got = {}
        for i, var in enumerate(pm.x):
            if var in hint and hint[var]:
                got[(int(pm.pair_t[i]), pm.vectors[int(pm.pair_v[i])])] = hint[var]
        want, vectors = {}, set(pm.vectors)
        for row in range(inst.n_rows):
            t = int(enc.row_type[row])
            vec = (int(enc.protected[t]),) + tuple(int(e[row]) for e in expected)
            if vec in vectors:
                want[(t, vec)] = want.get((t, vec), 0) + 1
        assert got == want


@pytest.mark.parametrize("method", ["mondrian", "kmember", "fulldomain"])
def test_the_hint_is_a_whole_solution_no_worse_than_its_release(method):
    """Every record gets a vector of the model, the model with every x fixed to the hint
    is feasible, and its NCP is at most the release's (tight summaries only narrow)."""
    from fairanon.models.objectives import objective_value
    from fairanon.release import Status
    from fairanon.solver._cpsat import solve

    inst = _instance(5)
    reqs = [fa.KAnonymity(3)]
    rel = fa.anonymize(inst, reqs, method=method, seed=0)
    enc = encode(inst, reqs, max_range_values=30)
    pm = build_model(enc, reqs, objective="ncp")
    hint = solve_module._hint_from_release(pm, rel)
    assigned = sum(value for var, value in hint.items() if var.name.startswith("x["))
    assert assigned == inst.n_rows
    for var in pm.x:
        pm.model.add(var == hint.get(var, 0))
    _, outcome = solve(pm.model, num_workers=1)
    assert outcome.status == Status.OPTIMAL  # the one solution left
    assert outcome.objective / pm.scale <= float(objective_value(inst, rel, "ncp")) + 1e-9
