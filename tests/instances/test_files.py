"""Spreadsheet-safe cells and safe file names (fairanon.instances.files)."""

import pandas as pd
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
