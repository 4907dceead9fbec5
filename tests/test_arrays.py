"""Gathers through narrow integer arrays give what plain indexing gives."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fairanon._arrays import as_index, gather, unique_rows


@given(
    n_values=st.integers(1, 300),
    n=st.integers(0, 500),
    dtype=st.sampled_from([np.int8, np.uint8, np.int16, np.int32, np.int64, np.intp]),
    chunk=st.integers(1, 64),
    seed=st.integers(0, 2**32 - 1),
)
def test_gather_is_plain_indexing(n_values, n, dtype, chunk, seed):
    rng = np.random.default_rng(seed)
    n_values = min(n_values, int(np.iinfo(dtype).max) + 1)
    values = rng.normal(size=n_values)
    index = rng.integers(0, n_values, n).astype(dtype)
    out = gather(values, index, chunk=chunk)
    assert out.dtype == values.dtype
    np.testing.assert_array_equal(out, values[index])


def test_as_index_copies_only_narrow_arrays():
    wide = np.arange(5, dtype=np.intp)
    assert as_index(wide) is wide
    narrow = np.arange(5, dtype=np.int16)
    assert as_index(narrow).dtype == np.intp
    np.testing.assert_array_equal(as_index(narrow), narrow)


@settings(max_examples=40)
@given(
    n=st.integers(0, 200),
    width=st.integers(1, 5),
    low=st.sampled_from([0, -1, -1_000, -(2**40)]),
    high=st.sampled_from([1, 3, 1_000, 2**40]),
    seed=st.integers(0, 2**32 - 1),
)
def test_unique_rows_is_numpy_unique_by_rows(n, width, low, high, seed):
    """Packed into one integer per row, or sorted by rows when a value is negative or
    the columns' ranges multiply beyond 2**62 (high = 2**40 on two columns or more):
    numpy's answer."""
    keys = np.random.default_rng(seed).integers(low, high, size=(n, width))
    rows, inverse = unique_rows(keys)
    expected, expected_inverse = np.unique(keys, axis=0, return_inverse=True)
    np.testing.assert_array_equal(rows, expected)
    np.testing.assert_array_equal(inverse, expected_inverse.reshape(-1))


def test_unique_rows_keeps_uint64_past_int64():
    """Values of 2**63 and more are not wrapped to negatives: by hand, two distinct rows,
    in order, the first and third the same."""
    keys = np.array([[2**63 + 1, 0], [2**63, 7], [2**63 + 1, 0]], dtype=np.uint64)
    rows, inverse = unique_rows(keys)
    assert rows.dtype == np.uint64
    assert rows.tolist() == [[2**63, 7], [2**63 + 1, 0]]
    assert inverse.tolist() == [1, 0, 1]


@pytest.mark.parametrize("keys", [
    np.array([[1.2], [1.7]]),  # would merge as 1 and 1
    np.array([[np.nan], [0.0]]),
    np.array([[True], [False]]),
])
def test_unique_rows_refuses_non_integers(keys):
    with pytest.raises(TypeError, match="integer array; got dtype"):
        unique_rows(keys)


@pytest.mark.parametrize("keys", [np.array([3, 1, 3]), np.zeros((2, 2, 2), dtype=np.int64)])
def test_unique_rows_needs_a_table(keys):
    with pytest.raises(ValueError, match="2-D array"):
        unique_rows(keys)
