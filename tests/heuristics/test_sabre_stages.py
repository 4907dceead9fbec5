"""Sabre's bucketization stages against the implementations they replaced, kept here
as references: the equal-distance greedy that sums every value's rest anew, and the
stage loop that sorts every bucket at every stage (the stages now update the buckets
by each split only); every stage equal, on counts with many ties, for the three
distances."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from fairanon.heuristics.sabre import buckets as B
from fairanon.instances.builders import masking_hierarchy


def _reference_equal(counts):
    def wc(vals):
        return int(counts[vals].sum() - counts[vals].min()) if len(vals) else 0

    buckets, wcs = [list(range(len(counts)))], [wc(list(range(len(counts))))]
    while True:
        yield [list(b) for b in buckets], list(wcs)
        best = None
        for pos, vals in enumerate(buckets):
            if len(vals) < 2:
                continue
            for v in vals:
                rest = [u for u in vals if u != v]
                gain = wcs[pos] - wc(rest)
                if best is None or gain > best[0]:
                    best = (gain, pos, v, rest)
        if best is None:
            return
        _, pos, v, rest = best
        buckets[pos : pos + 1] = [rest, [v]]
        wcs[pos : pos + 1] = [wc(rest), 0]


def _reference_stages(stages, m, total, scale, t):
    for buckets, wcs, _ in stages:
        if not B._within(sum(wcs), total, scale, t):
            continue
        order = sorted(range(len(buckets)), key=lambda i: min(buckets[i]))
        buckets = [sorted(buckets[i]) for i in order]
        bucket_of = np.zeros(m, dtype=np.int64)
        for b, vals in enumerate(buckets):
            bucket_of[vals] = b
        yield [list(map(int, v)) for v in buckets], bucket_of.tolist(), [int(wcs[i]) for i in order]


@pytest.mark.parametrize("seed", range(8))
def test_equal_greedy_is_the_reference(seed):
    rng = np.random.default_rng(seed)
    m = int(rng.integers(1, 40))
    counts = rng.integers(1, [2, 4, 50][seed % 3], m)
    got = [(list(map(list, b)), w) for b, w, _ in B._greedy_equal(counts)]
    assert got == list(_reference_equal(counts))


@pytest.mark.parametrize("distance", ["equal", "ordered", "hierarchical"])
@pytest.mark.parametrize("seed", range(4))
def test_stages_are_the_reference(distance, seed):
    rng = np.random.default_rng(seed)
    m = int(rng.integers(2, 120))
    counts = rng.integers(1, 5, m)
    values = [f"{i:03d}" for i in range(m)]
    tree = masking_hierarchy(values, levels=2)
    t = Fraction(int(rng.integers(1, 5)), 10)
    got = [(list(map(lambda a: a.tolist(), b.buckets)), b.bucket_of.tolist(), list(map(int, b.wc_num)))
           for b in B.bucketize_stages(counts, distance, t, hierarchy=tree, values=values)]
    if distance == "equal":
        stages, scale = B._greedy_equal(counts), 1
    elif distance == "ordered":
        stages, scale = B._greedy_ordered(counts, np.arange(m)), max(m - 1, 1)
    else:
        stages, scale = B._greedy_tree(counts, tree, values), max(tree.height, 1)
    assert got == list(_reference_stages(stages, m, int(counts.sum()), scale, t))
    assert got  # at least one stage is t-close (the last: every value alone)


@pytest.mark.parametrize("seed", range(6))
def test_tree_stages_are_the_reference_on_shuffled_trees(seed):
    """Children in random order (depth-first order is not the values' order), leaves
    with no value present, unary chains and many equal gains."""
    import fairanon as fa

    rng = np.random.default_rng(seed)
    parent = {"*": None}
    inner = ["*"]
    for i in range(int(rng.integers(2, 12))):
        node = f"n{i}"
        parent[node] = str(rng.choice(inner))
        inner.append(node)
    leaves = [f"v{i:02d}" for i in range(int(rng.integers(3, 40)))]
    for v in leaves:
        parent[v] = str(rng.choice(inner))
    order = list(parent)
    rng.shuffle(order)  # the children's insertion order
    tree = fa.Hierarchy({node: parent[node] for node in ["*"] + [n for n in order if n != "*"]})
    values = sorted(rng.choice([v for v in tree.leaves if v.startswith("v")],
                               int(rng.integers(2, len(leaves) + 1)), replace=False).tolist())
    counts = rng.integers(1, 3, len(values))
    t = Fraction(int(rng.integers(1, 6)), 10)
    got = [(list(map(lambda a: a.tolist(), b.buckets)), b.bucket_of.tolist(), list(map(int, b.wc_num)))
           for b in B.bucketize_stages(counts, "hierarchical", t, hierarchy=tree, values=values)]
    scale = max(tree.height, 1)
    assert got == list(_reference_stages(_reference_tree(counts, tree, values), len(values),
                                         int(counts.sum()), scale, t))


def _reference_tree(counts, hierarchy, values):
    """The hierarchical greedy as it was: every bucket scanned at every stage."""
    index = {v: i for i, v in enumerate(values)}
    wc = B._TreeWorstCase(hierarchy, values, counts)

    def leaves_under(node):
        first, end = hierarchy.leaf_range(node)
        under = (hierarchy.leaves[j] for j in np.sort(hierarchy.depth_first_leaves[first:end]).tolist())
        return [index[v] for v in under if v in index]

    def lowest(node):
        while True:
            kids = [k for k in hierarchy.children[node] if leaves_under(k)]
            if len(kids) != 1:
                return node, kids, leaves_under(node)
            node = kids[0]

    buckets = [lowest(hierarchy.root)]
    wcs = [wc(buckets[0][0], buckets[0][2])]
    while True:
        yield [b[2] for b in buckets], list(wcs), None
        best = None
        for pos, (node, kids, vals) in enumerate(buckets):
            if not kids:
                continue
            parts = [lowest(k) for k in kids]
            part_wcs = [wc(p[0], p[2]) for p in parts]
            gain = wc(node, vals) - sum(part_wcs)
            if best is None or gain > best[0]:
                best = (gain, pos, parts, part_wcs)
        if best is None:
            return
        _, pos, parts, part_wcs = best
        buckets[pos : pos + 1] = parts
        wcs[pos : pos + 1] = part_wcs
