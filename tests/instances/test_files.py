"""Spreadsheet-safe cells and safe file names (fairanon.instances.files)."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fairanon.instances.files import FORMULA_TRIGGERS, neutralize_formulas, restore_formulas, safe_file_name

cells = st.text(alphabet=st.sampled_from(list("'=+-@\t\r0123456789.eE ab")), max_size=6)


@given(st.lists(cells, min_size=1, max_size=8))
def test_neutralized_cells_never_start_a_formula_and_restore_exactly(values):
    table = pd.DataFrame({"a": values, "b": pd.Categorical(values)})
    safe = neutralize_formulas(table)
    for cell in safe["a"]:
        if cell[:1] in FORMULA_TRIGGERS:  # only plain numbers may start so
            float(cell)
    assert safe["a"].tolist() == [str(c) for c in safe["b"]]
    back = restore_formulas(safe)
    assert back["a"].tolist() == values and back["b"].astype(str).tolist() == values


@given(st.text(max_size=20))
def test_safe_file_names_stay_in_their_folder(text):
    name = safe_file_name(text)
    assert name and "/" not in name and "\\" not in name and not name.startswith(".")


@pytest.mark.parametrize(
    ("value", "source", "target"),
    [(-1, "int64", "uint64"), (2**63, "uint64", "int64")],
)
def test_as_record_ids_refuses_a_cast_that_wraps(value, source, target):
    """int64 -1 as uint64 is 2**64 - 1 and uint64 2**63 as int64 is -2**63, each casting
    back to itself: refused, not taken for another record."""
    from fairanon.instances.files import as_record_ids

    with pytest.raises(ValueError, match=f"{value}.* is not a record id of type {target}"):
        as_record_ids(pd.Series([1, value], dtype=source), np.dtype(target))
    assert as_record_ids(pd.Series([1, 2], dtype=source), np.dtype(target)).tolist() == [1, 2]


@pytest.mark.parametrize("text", ["1_0", "\uff11", "1.0x", "", "True"])
def test_as_record_ids_reads_text_as_plain_digits(text):
    """Python's int(), which the cast calls, reads '1_0' as 10 and a full-width '１' as
    1, where the Dask engine's CSV parser refuses them: one release file gave the two
    engines different records."""
    from fairanon.instances.files import as_record_ids

    with pytest.raises(ValueError, match="is not a record id"):
        as_record_ids(pd.Series(["7", text], dtype=object), np.dtype("int64"))
    assert as_record_ids(pd.Series(["7", "-3", "+4"], dtype=object), np.dtype("int64")).tolist() == [7, -3, 4]
