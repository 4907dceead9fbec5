"""What t-closeness forces every refinement of a node to suppress.

t-closeness is not monotone on the lattice: a class E that fails it at a node U can
split, at a node L whose classes E is a union of, into parts that pass. So a failure
of t condemns U alone -- but with suppression, it still bounds what every such L
suppresses.

At L, E's records fall into classes of L; those failing k, l or t are suppressed and
the others (together the *kept* part P of E) each meet t. The EMD to the table's
distribution q is convex in the class's distribution (it is the optimum of a
transportation LP in which that distribution is the right-hand side [1]_), and the
distribution of a union of classes is the mixture of theirs, so ``EMD(P) <= t``. Every
kept class also holds at least k records. Hence L keeps at most

    kept(E) = max { |P| : P a sub-multiset of E's records, EMD(P) <= t },

or none when that is below k, and suppresses at least ``|E| - kept(E)`` of E's records.
:func:`kept` computes an upper bound of kept(E) per class, which is all the search
needs (a lower bound of suppression):

- equal ground distance (the variational distance), exactly, in integers: a
  sub-multiset x <= c of |x| = w records has ``EMD = sum_i max(0, q_i w - x_i) / w``,
  least when each x_i is as large as it may be, so some P of w records passes if and
  only if ``sum_i max(0, q_i w - c_i) <= t w``. The left side is the largest of
  ``q(S) w - c(S)`` over sets S of values; so the largest such w is the least, over
  sets S with ``q(S) > t``, of ``c(S) / (q(S) - t)``, reached by a prefix of the
  values in increasing order of ``c_i / q_i`` (any set gives a valid bound, so
  rounding in that order costs tightness only);
- ordered and hierarchical ground distances, by convexity alone: with F the
  suppressed rest of E, ``EMD(E) <= (|P| EMD(P) + |F| EMD(F)) / |E|``, and
  ``EMD(F) <= D_E``, the largest EMD of a single value of E (a convex function over
  the distributions on E's values is largest at a vertex), so
  ``|F| >= |E| (EMD(E) - t) / (D_E - t)``.

.. [1] N. Li, T. Li, S. Venkatasubramanian. t-Closeness: privacy beyond k-anonymity
   and l-diversity. ICDE 2007.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from ...models import measures as M

__all__ = ["kept"]

#: Relative slack of the float bound (ordered and hierarchical distances): the EMDs
#: it reads are exact to about 1e-15, so the slack only ever loosens it.
SLACK = 1e-6


def kept(
    counts: np.ndarray, global_counts: np.ndarray, t: Fraction, ground: M.EMDGround, k: int
) -> np.ndarray:
    """Per class (row of `counts`, the counts of each value of the target): an upper
    bound of the records any refinement keeps of it under t-closeness (see the module
    docstring); 0 where the bound is below `k`, at most the class's size.

    >>> glob = np.array([50, 50])
    >>> kept(np.array([[9, 1], [5, 5]]), glob, Fraction(1, 5), M.EMDGround.equal(2), 1)
    array([ 3, 10])
    """
    counts = np.asarray(counts, dtype=np.int64)
    global_counts = np.asarray(global_counts, dtype=np.int64)
    if ground.distance == "equal":
        out = _kept_equal(counts, global_counts, t)
    else:
        out = _kept_convex(counts, global_counts, t, ground)
    return np.where(out < k, 0, out)


def _kept_equal(counts: np.ndarray, global_counts: np.ndarray, t: Fraction) -> np.ndarray:
    """The largest w <= |E| with ``sum_i max(0, q_i w - c_i) <= t w``, exactly: over
    prefixes S of the values ordered by ``c_i / G_i`` (G the table's counts, N their
    sum), ``w (b G(S) - a N) <= b N c(S)`` for t = a / b."""
    sizes = counts.sum(axis=1)
    if not len(sizes):
        return sizes
    total = int(global_counts.sum())
    a, b = t.numerator, t.denominator
    # Products up to b N |E| stay exact in int64 below 2^62; beyond, in Python integers.
    exact = np.int64 if b * total * total < 2**62 else object
    order = np.argsort(counts / global_counts, axis=1, kind="stable")
    g = np.cumsum(global_counts[order].astype(exact, copy=False), axis=1)
    c = np.cumsum(counts[np.arange(len(sizes))[:, None], order].astype(exact, copy=False), axis=1)
    slope = b * g - a * total
    binding = slope > 0
    room = np.where(binding, (b * total * c) // np.where(binding, slope, 1), sizes[:, None])
    return np.minimum(room.min(axis=1), sizes).astype(np.int64, copy=False)


def _kept_convex(
    counts: np.ndarray, global_counts: np.ndarray, t: Fraction, ground: M.EMDGround
) -> np.ndarray:
    """``|E| - ceil(|E| (EMD(E) - t) / (D_E - t))``, rounded towards |E| by `SLACK`."""
    sizes = counts.sum(axis=1)
    if not len(sizes):
        return sizes
    vertex = M.emd_of_each_value(global_counts, ground)
    most = np.where(counts > 0, vertex, 0.0).max(axis=1)
    over = M.emd(counts, global_counts, ground) - float(t)
    room = most - float(t)
    # Where the class is (nearly) t-close or no value of it is far, claim nothing.
    usable = (over > 0) & (room > SLACK)
    share = np.where(usable, over / np.where(usable, room, 1.0), 0.0)
    lost = np.ceil(sizes * share - SLACK * (sizes + 1)).clip(0).astype(np.int64)
    return sizes - np.minimum(lost, sizes)
