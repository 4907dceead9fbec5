"""Shared pieces of the app's tests."""

from __future__ import annotations

import json
import os
import time

import pytest


@pytest.fixture
def failing_run():
    """A function that adds to an app's session a finished run whose release fails
    5-anonymity (a 3-anonymous Mondrian release of ruggieri_loan, its report as
    ``fairanon anonymize`` writes it); it returns the run and the verifier's report."""
    import fairanon as fa
    from fairanon.app import worker
    from fairanon.instances.files import write_csv

    def make(session):
        inst = fa.load("ruggieri_loan")
        rel = fa.anonymize(inst, [fa.KAnonymity(3)], method="mondrian", seed=0)
        report = fa.verify(inst, rel, [fa.KAnonymity(5)])
        assert not report.passed
        run = session.new_run({"instance": {"dataset": "ruggieri_loan"},
                               "requirements": [{"k_anonymity": {"k": 5}}]})
        os.makedirs(os.path.join(run.folder, "out"))
        write_csv(rel.table, os.path.join(run.folder, "out", "release.FAILED.csv"), index_label="record_id")
        with open(os.path.join(run.folder, "out", "report.json"), "w") as fh:
            json.dump({"release_file": "release.FAILED.csv", "report": report.to_dict()}, fh)
        open(os.path.join(run.folder, worker.LOG_FILE), "w").close()
        worker.write_status(run.folder, state="done", step="finished", code=1, started=time.time())
        return run, report

    return make
