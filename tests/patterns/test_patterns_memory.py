"""Pattern mining keeps to its memory limit: the frequent itemsets are counted before
they are mined, and a set that would not fit is refused with the knobs named."""

import json

import pytest

from fairanon import patterns as fp
from fairanon.cli import main
from fairanon.exceptions import MemoryLimitError
from fairanon.patterns.mining import ITEMSET_BYTES, count_frequent


@pytest.fixture(scope="module")
def german():
    return fp.paper_german()


@pytest.mark.parametrize("support", [400, 150, pytest.param(80, marks=pytest.mark.slow)])
def test_the_count_is_the_number_of_itemsets_mined(german, support):
    db = german.train
    assert count_frequent(db, support) == len(fp.mine(db, support))
    assert count_frequent(db, support, max_len=2) == len(fp.mine(db, support, max_len=2))
    # stopping above the cap returns the first count past it
    full = count_frequent(db, support)
    assert full // 2 < count_frequent(db, support, cap=full // 2) <= full


def test_small_tables_count_like_apriori():
    db = fp.TransactionDB.from_counts({("f", "v", "C"): 2, ("f", "v"): 3, ("v", "C"): 1, ("v",): 4, ("x",): 1})
    for support in (1, 2, 3, 5):
        assert count_frequent(db, support) == len(fp.mine(db, support, backend="apriori"))


def test_mining_beyond_the_limit_is_refused_before_the_work(german):
    with pytest.raises(MemoryLimitError) as info:
        fp.PatternSet.from_db(german.train, 2, german.roles, memory_limit="20MB")
    message = str(info.value)
    assert "support" in message and "memory_limit" in message and "--memory-limit" in message
    assert info.value.limit == 20 * 10**6 and info.value.need > info.value.limit
    # the count stopped just past what fits
    assert info.value.need <= info.value.limit + 64 * ITEMSET_BYTES * 1000


def test_mining_within_the_limit_is_unchanged(german):
    free = fp.mine(german.train, 200, memory_limit="none")
    assert fp.mine(german.train, 200, memory_limit="20MB") == free
    with pytest.raises(MemoryLimitError):
        fp.mine(german.train, 200, memory_limit=len(free) * ITEMSET_BYTES - 1)


def test_cli_support_two_on_german_is_refused_with_the_knobs_named(tmp_path, capsys):
    out = tmp_path / "o"
    code = main(["patterns", "german", "--support", "2", "--out", str(out), "--memory-limit", "50MB"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "--support" in err and "--memory-limit" in err and "50 MB" in err
    assert not out.exists()


def test_cli_memory_limit_accepts_bytes_shares_and_none(tmp_path, capsys):
    for limit in ("2GB", "0.5", "none"):
        out = tmp_path / limit
        assert main(["patterns", "german", "--support", "0.3", "--out", str(out), "--memory-limit", limit]) == 0
        assert json.loads((out / "report.json").read_text())["report"]["passed"]
    assert main(["patterns", "german", "--memory-limit", "lots"]) == 2
    assert "--memory-limit" in capsys.readouterr().err
