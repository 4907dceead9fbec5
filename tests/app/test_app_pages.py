"""The app through FastAPI's test client: the token, every page, the API's validation
messages beside their fields, uploads, a run from the Run page to the Results page on
a bundled table (its job file re-run by the command line gives the same release), a
failing check's witness highlighted, and cancelling a run."""

from __future__ import annotations

import html
import io
import json
import os
import re
import time
from fractions import Fraction

import pandas as pd
import pytest
import yaml

pytest.importorskip("fastapi")
pytest.importorskip("httpx")
pytest.importorskip("multipart")

from fastapi.testclient import TestClient  # noqa: E402

import fairanon as fa  # noqa: E402
from fairanon.app import worker  # noqa: E402
from fairanon.app.requirements import check_requirements, form_of  # noqa: E402
from fairanon.app.web import CSRF_FIELD, CSRF_HEADER, create_app  # noqa: E402

TOKEN = "test-token"


@pytest.fixture
def client():
    app = create_app(token=TOKEN)
    with TestClient(app, headers={CSRF_HEADER: app.state.csrf}) as c:  # as htmx sends it
        assert c.get(f"/data?token={TOKEN}").status_code == 200
        yield c
    app.state.session.close()


def text(response) -> str:
    """The visible text of a response (or of a piece of HTML), spaces collapsed."""
    source = response if isinstance(response, str) else response.text
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", source)))


def wait_done(client, run_id: int, timeout: float = 300) -> dict:
    with client.stream("GET", f"/runs/{run_id}/events") as stream:
        last = None
        for line in stream.iter_lines():
            if line.startswith("data: "):
                last = json.loads(line[6:])
        return last


def test_token_is_required():
    app = create_app(token=TOKEN)
    with TestClient(app) as c:
        assert c.get("/data").status_code == 403
        assert c.get("/data?token=wrong").status_code == 403
        assert c.post("/data/dataset", data={"dataset": "german"}).status_code == 403
        assert c.get("/static/htmx.min.js").status_code == 200  # assets carry no data
        assert c.get(f"/data?token={TOKEN}").status_code == 200
        assert c.get("/data").status_code == 200  # the cookie set by the first visit
    app.state.session.close()


def _every_route():
    """(method, path) of every route of the app's steps, path parameters filled in."""
    from fastapi.routing import APIRoute

    from fairanon.app import compare, data, hierarchies, requirements, runs

    for route in (r for m in (data, hierarchies, requirements, runs, compare) for r in m.router.routes):
        if isinstance(route, APIRoute):
            path = route.path.replace("{run_id}", "1").replace("{name}", "age")
            for method in route.methods:
                yield method, path


def test_every_route_needs_the_token_and_every_post_the_csrf_token():
    app = create_app(token=TOKEN)
    routes = sorted(_every_route())
    assert len(routes) >= 20 and ("POST", "/hierarchies/apply") in routes
    with TestClient(app) as c:
        for method, path in routes:  # no token at all, then a wrong one
            assert c.request(method, path).status_code == 403, (method, path)
            assert c.request(method, f"{path}?token=wrong").status_code == 403, (method, path)
        assert c.get(f"/data?token={TOKEN}").status_code == 200
        for method, path in routes:  # signed in, but a POST without the pages' CSRF token
            if method == "POST":
                response = c.request(method, path, headers={CSRF_HEADER: "wrong"})
                assert response.status_code == 403 and "CSRF" in response.text, (method, path)
    app.state.session.close()


def test_posts_need_the_csrf_token_of_the_pages():
    """A page of another site can make the browser post (with the cookie, where the
    browser sends it) but cannot read the token the app's forms carry."""
    app = create_app(token=TOKEN)
    with TestClient(app) as c:
        assert c.get(f"/data?token={TOKEN}").status_code == 200
        csrf = app.state.csrf
        page = c.get("/data").text
        assert f'name="{CSRF_FIELD}" value="{csrf}"' in page  # in every form of the page
        for headers, data in (({}, {"dataset": "german"}), ({CSRF_HEADER: "wrong"}, {"dataset": "german"}),
                              ({}, {"dataset": "german", CSRF_FIELD: "wrong"})):
            response = c.post("/data/dataset", data=data, headers=headers)
            assert response.status_code == 403 and "CSRF token is missing or wrong" in response.text
        assert app.state.session.instance is None  # nothing was done
        files = {"file": ("a.csv", "x,y\n1,2\n", "text/csv")}
        assert c.post("/data/upload", files=files).status_code == 403
        assert c.post("/data/upload", files=files, data={CSRF_FIELD: csrf}).status_code == 200
        assert c.post("/data/dataset", data={"dataset": "german", CSRF_FIELD: csrf}).status_code == 200
        assert c.post("/requirements/check/k", data={"k": "2"}, headers={CSRF_HEADER: csrf}).status_code == 200
    app.state.session.close()


def test_a_request_over_the_upload_limit_is_refused_before_it_is_read(client):
    response = client.post("/data/upload", content=b"x", headers={"Content-Length": str(2**40)})
    assert response.status_code == 413 and "upload limit" in response.text


def test_digits_that_int_refuses_and_tokens_that_are_not_ascii_are_messages(client):
    """'²' is a digit to str.isdigit but not to int(); compare_digest refuses a str that
    is not ASCII: each is a message (or a refusal), not a server error."""
    client.post("/data/dataset", data={"dataset": "ruggieri_loan"})
    response = client.post("/requirements", data={"k": "\u00b2"})
    assert response.status_code == 400 and "'k' parameter of KAnonymity" in error_beside(response.text, "k")
    assert "'k' parameter of KAnonymity" in text(client.post("/requirements/check/k", data={"k": "\u00b2"}))
    missing = client.post("/requirements/check/%3Cb%3Ex", data={})
    assert missing.status_code == 404 and "<b>" not in missing.text and "no requirement field" in text(missing)
    app = client.app
    with TestClient(app) as fresh:
        assert fresh.get("/data?token=\u00e9").status_code == 403
        assert fresh.get("/data", headers={"Cookie": "fairanon_app_token=\u00e9".encode()}).status_code == 403
        assert fresh.get(f"/data?token={TOKEN}").status_code == 200
        response = fresh.post("/data/dataset", data={"dataset": "german", CSRF_FIELD: "\u00e9"})
        assert response.status_code == 403 and "CSRF" in response.text
    response = client.post("/data/dataset", data={"dataset": "german"}, headers={CSRF_HEADER: "\u00e9".encode("latin-1")})
    assert response.status_code == 403 and "CSRF" in response.text
    assert app.state.session.instance.name == "ruggieri_loan"  # nothing was done


def test_a_query_cannot_set_a_page_message_or_status(client):
    client.post("/data/dataset", data={"dataset": "ruggieri_loan"})
    for path in ("/data", "/run"):
        response = client.get(f"{path}?error=Your+data+was+sent+to+evil.example&status_code=99")
        assert response.status_code == 200 and "evil.example" not in response.text, path
        assert client.get(f"{path}?status_code=1000").status_code == 200, path


def test_the_token_cookie_is_named_by_the_port():
    """Two apps on two ports of one host: the browser sends both cookies to each, so each
    app reads the cookie named by its own port."""
    app = create_app(token=TOKEN, port=8765)
    with TestClient(app) as c:
        assert c.get(f"/data?token={TOKEN}").status_code == 200
        assert c.cookies.get("fairanon_app_token_8765") == TOKEN
        assert c.get("/data").status_code == 200
    with TestClient(app, cookies={"fairanon_app_token_8766": TOKEN}) as other:
        assert other.get("/data").status_code == 403
    app.state.session.close()


def test_pages_before_any_data(client):
    assert "no data chosen" in text(client.get("/data"))
    assert "Choose the data first" in text(client.get("/requirements"))
    assert "Choose the data first" in text(client.get("/run"))
    assert client.get("/runs/7").status_code == 404
    assert client.get("/runs/7/results").status_code == 404
    assert client.get("/runs/7/files/release.csv").status_code == 404
    response = client.post("/run", data={"method": "auto"})
    assert response.status_code == 400 and "Choose the data first" in text(response)


def test_events_and_cancel_of_a_run_that_does_not_exist(client):
    events = client.get("/runs/7/events")
    assert events.status_code == 404 and events.text == "There is no run 7."
    assert events.headers["content-type"].startswith("text/plain")  # not an event stream that never ends
    cancelled = client.post("/runs/7/cancel")
    assert cancelled.status_code == 404 and "There is no run 7." in text(cancelled)
    for path in ("/runs/x/events", "/runs/-1x/events"):
        bad = client.get(path)
        assert bad.status_code == 400 and bad.text == "Bad request: run_id: Input should be a valid integer, " \
                                                      "unable to parse string as an integer."
    bad = client.post("/runs/x/cancel")
    assert bad.status_code == 400 and bad.text.startswith("Bad request: run_id: Input should be a valid integer")


def test_data_page_shows_preview_roles_and_figures(client):
    page = text(client.post("/data/dataset", data={"dataset": "ruggieri_loan"}))
    assert "ruggieri_loan: 17 records" in page
    assert "protected group: sex in ['female']" in page
    assert "a, b, c, d = 4, 4, 4, 5" in page and "τ(R) = 1/34" in page  # fa.describe's figures
    assert "housing" in page and "decision" in page
    response = client.post("/data/dataset", data={"dataset": "nope"})
    assert response.status_code == 400 and "nope" in text(response)


def test_requirement_messages_beside_their_fields(client):
    client.post("/data/dataset", data={"dataset": "ruggieri_loan"})
    response = client.post("/requirements", data={"k": "100", "t": "2", "l": "2", "diversity": "bogus"})
    assert response.status_code == 400
    page = response.text
    for name, message in (("k", "k=100 exceeds the 17 rows of instance 'ruggieri_loan'"),
                          ("t", "must be in [0, 1]"),
                          ("diversity", "Cannot read diversity constraint 'bogus'")):
        span = re.search(rf'<span id="e-{name}" class="message">(.*?)</span>\s*</span>', page, re.S)
        assert span and message in html.unescape(span.group(1)), (name, span)
    assert 'id="e-l" class="message"></span>' in page  # a valid field has no message
    assert "Give at least one requirement" in text(client.post("/requirements", data={"k": ""}))
    # the field check htmx sends on change
    assert "exceeds" in client.post("/requirements/check/k", data={"k": "18"}).text
    assert client.post("/requirements/check/k", data={"k": "3"}).text == ""


def error_beside(page: str, group: str) -> str:
    span = re.search(rf'<span id="e-{group}" class="message">(.*?)</span>\s*</span>', page, re.S)
    return html.unescape(span.group(1)) if span else ""


def test_every_requirement_group_and_its_messages(client):
    """Each group's fields become one requirement of the job file; a bad field gets the
    requirement class's own message beside its group."""
    client.post("/data/dataset", data={"dataset": "ruggieri_loan"})
    bad = {"l": "2", "l_variant": "recursive", "t": "0.2", "t_distance": "equal", "t_domain": "declared",
           "mt": "-1", "st": "3", "st_epsilon": "1", "st_bounds": "x", "alpha": "1.2", "alpha_measure": "RR", "alpha_support": "x", "risk": "0",
           "uniques": "2", "population": "0.01", "population_fraction": "0.1", "population_size": "5"}
    response = client.post("/requirements", data=bad)
    assert response.status_code == 400
    for group, message in (("l", "The 'c' parameter of LDiversity is required for variant='recursive'"),
                           ("t", "'ordered_domain' parameter of TCloseness applies only to distance='ordered'"),
                           ("mt", "The 't' parameter of MultiplicativeTCloseness must be in [1, inf]"),
                           ("st", "The 'bounds' parameter of StochasticTCloseness must be a pair (L, U)"),
                           ("alpha", "The 'min_support' parameter of AlphaProtection must be an int"),
                           ("risk", "The 'r' parameter of AverageRisk must be in (0, 1]. Got '0' instead."),
                           ("uniques", "The 'u' parameter of SampleUniqueness must be in [0, 1]. Got '2' instead."),
                           ("population", "needs exactly one of 'sampling_fraction' and 'population_size'")):
        assert message in error_beside(response.text, group), (group, error_beside(response.text, group))
        assert "Bad arguments" not in error_beside(response.text, group)  # the class's message, as the API gives it
    assert 'id="e-k" class="message"></span>' in response.text  # a valid group has no message
    # the check htmx sends when a field of a group changes: that group only
    assert "is required" in client.post("/requirements/check/l", data=bad).text
    assert client.post("/requirements/check/l", data={**bad, "l_c": "3"}).text.strip() == ""
    assert client.post("/requirements/check/nope", data=bad).status_code == 404
    good = {"k": "2", "l": "2", "l_variant": "recursive", "l_c": "3", "l_attribute": "decision",
            "t": "1/5", "t_distance": "ordered", "t_domain": "declared", "mt": "3/2", "st": "3", "st_epsilon": "1/2",
            "st_bounds": "0, 1", "alpha": "1.2",
            "alpha_measure": "RR", "alpha_support": "2", "alpha_strict": "on", "risk": "1/2", "uniques": "0",
            "population": "1/100", "population_model": "pitman", "population_fraction": "1/10"}
    response = client.post("/requirements", data=good)
    assert response.url.path == "/run"
    specs = [fa.models.requirements.requirement_from_spec(s)
             for s in check_requirements(client.app.state.session.instance, good)[0]]
    assert specs == [fa.KAnonymity(2), fa.LDiversity(2, variant="recursive", c=3, attribute="decision"),
                     fa.TCloseness("1/5", distance="ordered", ordered_domain="declared"),
                     fa.MultiplicativeTCloseness("3/2"),
                     fa.models.requirements.StochasticTCloseness(3, "1/2", bounds=("0", "1")),
                     fa.AlphaProtection("RR", "1.2", min_support=2, strict=True),
                     fa.AverageRisk("1/2"), fa.SampleUniqueness(0),
                     fa.PopulationUniqueness("1/100", model="pitman", sampling_fraction="1/10")]
    # stochastic t-closeness's 'joint': a checkbox, read as the bool the class takes
    joint = {"st": "3", "st_epsilon": "1/2", "st_bounds": "0, 1", "st_joint": "on"}
    assert [fa.models.requirements.requirement_from_spec(s)
            for s in check_requirements(client.app.state.session.instance, joint)[0]] == [
        fa.models.requirements.StochasticTCloseness(3, "1/2", bounds=("0", "1"), joint=True)]
    assert 'id="f-st_joint" name="st_joint"' in client.get("/requirements").text
    assert form_of([{"stochastic_t_closeness": {"t": 3, "epsilon": 1, "joint": True}}])["st_joint"] == "on"
    # the page shows a job file's requirements in its fields
    assert form_of([{"t_closeness": {"t": "0.2", "distance": "ordered"}}, {"k": 5},
                    {"diversity": "sex(female) [2, 9]"}, {"alpha_protection": {"measure": "slift", "alpha": 2}},
                    {"stochastic_t_closeness": {"t": 3, "epsilon": "0.5", "bounds": [0, 100]}}]) == {
        "t": "1/5", "t_distance": "ordered", "t_domain": "present", "k": "5", "diversity": "sex(female) [2, 9]",
        "alpha": "2", "alpha_measure": "RR", "st": "3", "st_epsilon": "1/2", "st_bounds": "0, 100"}


def test_upload_csv_roles_and_malformed_files(client, tmp_path):
    csv = "age,zip,disease\n30,1234,flu\n31,1235,cold\n45,1300,flu\n46,1301,cold\n"
    page = text(client.post("/data/upload", files={"file": ("patients.csv", csv, "text/csv")}))
    assert "patients.csv: 4 records" in page and "Apply roles" in page
    form = {"role:age": "qi", "type:age": "numeric", "role:zip": "qi", "type:zip": "numeric",
            "role:disease": "sensitive", "type:disease": "categorical"}
    page = text(client.post("/data/roles", data=form))
    assert "quasi-identifiers: age, zip" in page
    bad = client.post("/data/roles", data={**form, "role:age": "boss"})
    assert bad.status_code == 400 and "boss" in text(bad)
    for content in (b"", b"\xff\xfe\x00bad", b'a,b\n1,"2\n'):
        response = client.post("/data/upload", files={"file": ("bad.csv", content, "text/csv")})
        assert response.status_code == 400 and 'class="error"' in response.text, content
        assert "Traceback" not in response.text
    assert "patients.csv: 4 records" in text(client.get("/data"))  # the earlier data stays
    response = client.post("/data/upload", files={"file": ("gaps.csv", "age,zip\n30,\n,1\n5,2\n", "text/csv")})
    assert response.status_code == 400
    assert "Missing values in 'age' (1 rows), 'zip' (1 rows) of 'gaps.csv'" in text(response)
    assert "missing: drop" in text(response) and "pass missing=" not in text(response)
    job = "instance:\n  csv: gaps.csv\n  missing: drop\n  schema: {age: {role: qi}, zip: {role: qi}}\n"
    assert "job.yaml: 1 records 2 records with missing values were dropped" in text(client.post(
        "/data/job", files=[("files", ("job.yaml", job, "text/yaml")),
                            ("files", ("gaps.csv", "age,zip\n30,\n,1\n5,2\n", "text/csv"))]))


def _role_selected(page: str, name: str) -> str:
    """The role the Data page's select of attribute `name` shows."""
    select = re.search(rf'<select name="role:{re.escape(name)}">(.*?)</select>', page, re.S)
    return re.search(r"<option selected>([^<]+)</option>", select[1])[1]


def test_a_text_column_of_nearly_all_distinct_values_starts_as_an_identifier(client):
    """The rule of docs/app.md: a text column distinct in at least 95 % of 20 or more rows
    is first an identifier, the Data page says so; fewer distinct values, a numeric column
    or a table of 19 rows leave a quasi-identifier."""
    ids = [f"P{i:03d}" for i in range(40)]
    near = ids[:38] + ids[:2]  # 38 distinct of 40: 95 %
    under = ids[:37] + ids[:3]  # 37 of 40: 92.5 %
    rows = [f"{a},{b},{c},{1000 + i},{'flu' if i % 2 else 'cold'}"
            for i, (a, b, c) in enumerate(zip(ids, near, under))]
    csv = "patient,near,under,income,disease\n" + "\n".join(rows) + "\n"
    response = client.post("/data/upload", files={"file": ("p.csv", csv, "text/csv")})
    assert response.status_code == 200
    names = ("patient", "near", "under", "income", "disease")
    assert {name: _role_selected(response.text, name) for name in names} == {
        "patient": "identifier", "near": "identifier", "under": "qi", "income": "qi", "disease": "qi"}
    assert "such as an ID, an identifier, dropped from the release" in text(response)
    assert client.app.state.session.instance.schema.qi == ("under", "income", "disease")
    short = "patient,disease\n" + "".join(f"{p},{'flu' if i % 2 else 'cold'}\n" for i, p in enumerate(ids[:19]))
    response = client.post("/data/upload", files={"file": ("s.csv", short, "text/csv")})
    assert _role_selected(response.text, "patient") == "qi"
    # Every column ID-like: they stay quasi-identifiers, so the table opens and the
    # user chooses (an instance needs one).
    both = "patient,email\n" + "".join(f"{p},{p.lower()}@x.org\n" for p in ids)
    response = client.post("/data/upload", files={"file": ("b.csv", both, "text/csv")})
    assert response.status_code == 200
    assert [_role_selected(response.text, name) for name in ("patient", "email")] == ["qi", "qi"]


@pytest.mark.slow  # 200,000 records read, described, and given a flat tree: about 8 s of CPU
def test_an_id_column_of_200000_values_is_a_page_as_identifier_and_as_quasi_identifier(client):
    """An uploaded ID column of 200,000 distinct values starts as an identifier; set back
    to quasi-identifier it gets a flat tree of 200,000 values and the page is shown (a
    table of its nodes by its values took 37 GiB: a MemoryError, a server error)."""
    rows = "\n".join(f"P{i:07d},{20 + i % 60},{'flu' if i % 3 else 'cold'}" for i in range(200_000))
    csv = "patient_id,age,disease\n" + rows + "\n"
    response = client.post("/data/upload", files={"file": ("ids.csv", csv, "text/csv")})
    assert response.status_code == 200 and "ids.csv: 200000 records" in text(response)
    assert _role_selected(response.text, "patient_id") == "identifier"
    response = client.post("/data/roles", data={"role:patient_id": "qi",
                                                 "role:disease": "sensitive"})
    assert response.status_code == 200 and _role_selected(response.text, "patient_id") == "qi"
    assert "200000 values, hierarchy of height 1" in text(response)
    tree = client.app.state.session.instance.schema["patient_id"].hierarchy
    assert tree.leaf_count("*") == 200_000


def _counting_reads(monkeypatch) -> list:
    """The paths fairanon.jobs.read_table is called with from now on."""
    import fairanon.jobs

    reads, original = [], fairanon.jobs.read_table

    def counted(path, *args, **kwargs):
        reads.append(path)
        return original(path, *args, **kwargs)

    monkeypatch.setattr(fairanon.jobs, "read_table", counted)
    return reads


def test_an_upload_is_parsed_once(client, monkeypatch):
    """The table the schema is guessed from is the instance's: the file is parsed once,
    and the instance is the one the job file's section reads from the file."""
    from fairanon.jobs import load_instance_spec

    reads = _counting_reads(monkeypatch)
    csv = "age,zip,note\n30,01234,1.50\n31,1235, x\n45,1300,NaNa\n46,1301,=1\n"
    assert client.post("/data/upload", files={"file": ("p.csv", csv, "text/csv")},
                       follow_redirects=False).status_code == 303
    session = client.app.state.session
    assert len(reads) == 1
    assert session.source["schema"]["zip"]["type"] == "numeric" and session.source["schema"]["note"]["type"] == (
        "categorical")
    expected = load_instance_spec(session.source).table  # read again here, as the command line reads it
    assert len(reads) == 2
    pd.testing.assert_frame_equal(session.instance.table, expected)
    assert list(session.instance.table["note"]) == ["1.50", "x", "NaNa", "=1"]  # as written, spaces after ',' skipped


def test_a_large_upload_parsed_in_chunks_is_read_again_for_its_text(client, monkeypatch):
    """pandas parses a large CSV in chunks: a column whose first chunk is all numbers and
    whose last is not is guessed categorical but holds numbers among its text (1, not
    '1'); its text is then read from the file again, as the job file's section reads it."""
    reads = _counting_reads(monkeypatch)
    rows = [f"{i % 10},{i % 7}" for i in range(300_000)]
    rows[-1] = "x,2"
    csv = "code,n\n" + "\n".join(rows) + "\n"
    assert client.post("/data/upload", files={"file": ("big.csv", csv, "text/csv")},
                       follow_redirects=False).status_code == 303
    session = client.app.state.session
    assert session.source["schema"]["code"]["type"] == "categorical" and len(reads) == 2
    codes = session.instance.table["code"]
    assert codes.iloc[0] == "0" and codes.iloc[123_456] == "6" and codes.iloc[-1] == "x"


def test_run_to_results_and_the_job_file_reproduces_the_release(client, tmp_path):
    client.post("/data/dataset", data={"dataset": "ruggieri_loan"})
    page = text(client.post("/requirements", data={"k": "2"}))
    assert "auto would run cpsat" in page  # fairanon.api.choose_method's choice and reason
    response = client.post("/run", data={"method": "auto", "seed": "0", "time_limit": ""})
    assert response.url.path == "/runs/1"
    assert "Cancel" in response.text
    status = wait_done(client, 1)
    assert status["state"] == "done" and status["code"] == 0, status
    page = text(client.get("/runs/1/results"))
    assert "OPTIMAL · PASSED" in page and "2-anonymity" in page
    assert "prosecutor" in page.lower()  # the risk panel, from report.json
    release = client.get("/runs/1/files/release.csv")
    assert release.status_code == 200 and release.text.startswith("record_id,")
    job = tmp_path / "job.yaml"
    job.write_bytes(client.get("/runs/1/files/job.yaml").content)
    from fairanon.cli import main

    assert main(["anonymize", str(job), "--out", str(tmp_path / "cli")]) == 0
    assert (tmp_path / "cli" / "release.csv").read_bytes() == release.content
    assert client.get("/runs/1/files/..%2Fjob.yaml").status_code == 404


def test_failing_check_shows_its_witness(client, failing_run):
    """A release that fails 5-anonymity: the check, its witness and the class's rows
    marked in the table (the report as ``fairanon anonymize`` writes it)."""
    client.post("/data/dataset", data={"dataset": "ruggieri_loan"})
    run, report = failing_run(client.app.state.session)
    page = client.get(f"/runs/{run.id}/results").text
    assert "FAILED" in page and "witness (highlighted below" in page
    witness = next(c.witness for c in report.checks if not c.passed)
    marked = re.findall(r'<tr class="witness-row"[^>]*><td>(\w+)</td>', page)
    assert sorted(marked) == sorted(str(r) for r in witness["records"])
    assert "No risk figures" in page and "No utility analysis" in page  # said, not hidden


def test_cancel_a_run(client):
    """Cancel while the command line runs: it ends by its Ctrl-C path (SIGINT), its
    process group is gone, it leaves no release, and the run's files are not served."""
    client.post("/data/dataset", data={"dataset": "german"})
    client.post("/requirements", data={"k": "5"})
    assert client.post("/run", data={"method": "lns", "seed": "0", "time_limit": "60"}).url.path == "/runs/1"
    run = client.app.state.session.runs[1]
    while worker.read_status(run.folder)["state"] != "running" and run.process.poll() is None:
        time.sleep(0.05)
    page = text(client.post("/runs/1/cancel"))
    assert "cancelled" in page
    assert run.process.returncode == 0  # the worker ended by itself, after the command line's clean exit
    with pytest.raises(ProcessLookupError):
        os.killpg(run.process.pid, 0)  # nothing of the group is left
    out = os.path.join(run.folder, "out")
    assert not (os.path.isdir(out) and [n for n in os.listdir(out) if n.startswith("release")])
    assert wait_done(client, 1)["state"] == "cancelled"
    assert worker.read_status(run.folder)["state"] == "cancelled"  # as the worker wrote it
    for name in ("job.yaml", "release.csv", "job.zip"):
        response = client.get(f"/runs/1/files/{name}", follow_redirects=False)
        assert response.status_code == 303 and response.headers["location"] == "/runs/1", name


def test_the_utility_analysis_gets_the_jobs_seed(monkeypatch, tmp_path):
    """The worker runs ``anonymize`` and then ``utility --seed`` with the job's seed,
    the options that ``start`` passes (the commands recorded, not run)."""
    commands = []

    def cli(argv, log):
        commands.append(argv)
        if argv[0] == "anonymize":
            os.makedirs(tmp_path / "out")
            (tmp_path / "out" / "report.json").write_text(json.dumps({"release_file": "release.csv"}))
        return 0

    monkeypatch.setattr(worker, "_cli", cli)
    worker.run("job.yaml", str(tmp_path), {"classifier": "none", "format": "csv", "seed": 7})
    assert commands[0] == ["anonymize", "job.yaml", "--out", str(tmp_path / "out"), "--format", "csv"]
    assert commands[1][0] == "utility" and commands[1][-2:] == ["--seed", "7"]
    assert worker.read_status(str(tmp_path))["state"] == "done"


def test_a_cancel_before_the_command_starts_runs_no_command(monkeypatch, tmp_path):
    """SIGINT that reaches the worker between its status and the command's start: the
    command, which would not get it, is not started (the signal sent to this process
    while the worker's handler is in place)."""
    import signal

    commands = []
    monkeypatch.setattr(worker, "_cli", lambda argv, log: commands.append(argv) or 0)
    write_status = worker.write_status

    def interrupted_status(run_dir, **status):
        write_status(run_dir, **status)
        if status["state"] == "running":
            os.kill(os.getpid(), signal.SIGINT)

    monkeypatch.setattr(worker, "write_status", interrupted_status)
    worker.run("job.yaml", str(tmp_path), {"classifier": "none", "format": "csv", "seed": None})
    assert commands == [] and worker.read_status(str(tmp_path))["state"] == "cancelled"


def test_bad_run_settings(client):
    client.post("/data/dataset", data={"dataset": "ruggieri_loan"})
    client.post("/requirements", data={"k": "2"})
    for form, message in (({"method": "magic"}, "Unknown method"), ({"seed": "-1"}, "seed must be"),
                          ({"seed": "\u00b2"}, "seed must be"), ({"seed": "--5"}, "seed must be"),
                          ({"seed": " 5_0"}, "seed must be"),
                          ({"time_limit": "0"}, "time limit must be"), ({"format": "xlsx"}, "release format must be")):
        response = client.post("/run", data={"method": "auto", **form})
        assert response.status_code == 400 and message in text(response)
    assert not client.app.state.session.runs


PATIENTS = ("age,zip,disease\n17,13053,flu\n23,13068,cold\n24,13053,flu\n36,14850,hiv\n38,14853,flu\n"
            "45,14850,cold\n47,13053,hiv\n81,13068,flu\n84,14853,cold\n29,13053,flu\n")


def test_hierarchies_page_builds_previews_and_applies_trees(client):
    assert "Choose the data first" in text(client.get("/hierarchies"))
    client.post("/data/dataset", data={"dataset": "german"})
    page = text(client.get("/hierarchies"))
    assert "Quasi-identifiers: credit_history · purpose" in page and "Import an ARX CSV" in page
    assert "Intervals of widths 5.0, 10.0, 20.0" in text(client.get("/hierarchies?attr=age"))
    assert client.get("/hierarchies?attr=nope").status_code == 404
    form = {"attr": "age", "builder": "intervals", "widths": "10, 20", "bottom": "20", "top": "60"}
    preview = text(client.post("/hierarchies/preview", data=form))
    # german's ages run from 19 to 75: <20, [20-30), [30-40), [40-50), [50-60), >=60 by hand
    for label in ("<20", "[20-30)", "[50-60)", "[20-40)", "[40-60)", ">=60"):
        assert f" {label} " in preview, label
    assert f"{fa.load('german').table['age'].nunique()} values, height 3" in preview  # one leaf per distinct age
    for bad, message in (({"widths": "10, 15"}, "whole multiple"), ({"widths": "ten"}, "must be a number"),
                         ({"bottom": "70"}, "must be below 'top'"), ({"builder": "magic"}, "builder must be one of"),
                         ({"attr": "nope"}, "'nope' is not an attribute")):
        response = client.post("/hierarchies/preview", data={**form, **bad})
        assert 'class="error"' in response.text and message in text(response), bad
        assert client.post("/hierarchies/apply", data={**form, **bad}).status_code == 400
    assert client.app.state.session.instance.schema["age"].kind == "numeric"  # a bad form changes nothing
    assert client.post("/hierarchies/apply", data=form).url.path == "/hierarchies"
    age = client.app.state.session.instance.schema["age"]
    assert age.kind == "categorical" and age.hierarchy.ancestors("19") == ["19", "<20", "*"]
    # in the job, 19 bottom-coded on every level (by hand)
    assert client.app.state.session.source["schema"]["age"]["hierarchy"][0] == ["19", "<20", "<20", "*"]
    exported = client.get("/hierarchies/age.csv")
    assert exported.headers["content-disposition"] == 'attachment; filename="age.csv"'
    assert fa.Hierarchy.from_arx_csv(io.StringIO(exported.text)) == age.hierarchy
    grouping = text(client.post("/hierarchies/preview", data={"attr": "job", "builder": "grouping", "sizes": "2"}))
    job_order = fa.load("german").schema["job"].order
    assert f"[{job_order[0]}-{job_order[1]}]" in grouping  # groups follow the attribute's order
    assert "sizes' parameter of grouping_hierarchy" in text(
        client.post("/hierarchies/preview", data={"attr": "job", "builder": "grouping", "sizes": "1"}))
    missing = client.get("/hierarchies/nope.csv")
    assert missing.status_code == 404 and "There is no hierarchy of 'nope'" in text(missing)


def test_hierarchy_import_of_arx_csv_and_bad_files(client):
    client.post("/data/dataset", data={"dataset": "ruggieri_loan"})
    good = "housing;*\ncar;*\n"
    response = client.post("/hierarchies/import", data={"attr": "purpose", "sep": ";"},
                           files={"file": ("purpose.csv", good, "text/csv")})
    assert response.url.path == "/hierarchies"
    assert client.app.state.session.instance.schema["purpose"].hierarchy.root == "*"  # was 'housing-car'
    for content, sep, message in ((b"housing;*\ncar\n", ";", "ragged"), (b"\xff\xfe\x00", ";", "not UTF-8"),
                                  (b"housing,*\ncar,*\n", ";", "looks ','-separated"),
                                  (good.encode(), ";;", "one character"),
                                  (b"house;*\ncar;*\n", ";", "housing")):  # a value of the data outside the tree
        response = client.post("/hierarchies/import", data={"attr": "purpose", "sep": sep},
                               files={"file": ("h.csv", content, "text/csv")})
        assert response.status_code == 400 and message in text(response), (content, text(response))
        assert "Traceback" not in response.text
    response = client.post("/hierarchies/import", data={"attr": "nope"}, files={"file": ("h.csv", good, "text/csv")})
    assert response.status_code == 400 and "'nope' is not an attribute" in text(response)
    assert client.app.state.session.instance.schema["purpose"].hierarchy.root == "*"  # the good tree stays


def test_trees_are_built_from_numbers_as_written(client):
    """A numeric column written 45.0, 030, 1e3 gets a tree whose leaves are that text,
    so applying it works; groupings follow the numbers' order (by hand: 030, 45, 45.0, 1e3)."""
    client.post("/data/upload", files={"file": ("p.csv", "age,disease\n45.0,flu\n030,cold\n1e3,flu\n45,hiv\n",
                                                "text/csv")})
    client.post("/data/roles", data={"role:age": "qi", "type:age": "numeric", "role:disease": "sensitive",
                                     "type:disease": "categorical"})
    assert client.app.state.session.instance.schema["age"].kind == "numeric"
    grouping = client.post("/hierarchies/preview", data={"attr": "age", "builder": "grouping", "sizes": "2"})
    assert "[030-45]" in text(grouping) and "[45.0-1e3]" in text(grouping)
    response = client.post("/hierarchies/apply", data={"attr": "age", "builder": "intervals", "widths": "10"})
    assert response.status_code == 200 and response.url.path == "/hierarchies", text(response)
    age = client.app.state.session.instance.schema["age"]
    assert age.hierarchy.to_levels() == [["030", "[30-40)", "*"], ["45", "[40-50)", "*"], ["45.0", "[40-50)", "*"],
                                         ["1e3", "[1000-1010)", "*"]]
    assert list(client.app.state.session.instance.table["age"]) == ["45.0", "030", "1e3", "45"]


def test_hierarchy_forms_refuse_bad_numbers_with_a_message(client):
    client.post("/data/dataset", data={"dataset": "german"})
    for form, message in (({"builder": "intervals", "widths": "--5"}, "must be a number. Got '--5'"),
                          ({"builder": "intervals", "widths": "5,\u00b2"}, "must be a number. Got '\u00b2'"),
                          ({"builder": "grouping", "sizes": "2,\u00b2", "attr": "job"}, "'sizes' parameter"),
                          ({"builder": "masking", "levels": "\u00b2"}, "must be an int in [0, 1] (the longest code has 2 characters). Got '\u00b2'")):
        form = {"attr": "age", **form}
        preview = client.post("/hierarchies/preview", data=form)
        assert preview.status_code == 200 and message in text(preview), (form, text(preview))
        applied = client.post("/hierarchies/apply", data=form)
        assert applied.status_code == 400 and message in text(applied), form
        assert 'class="error"' in applied.text


def test_hierarchy_redirects_encode_the_name_and_the_page_takes_no_message(client):
    client.post("/data/upload", files={"file": ("p.csv", "a&b=c,d\n1,x\n2,y\n", "text/csv")})
    client.post("/data/roles", data={"role:a&b=c": "qi", "type:a&b=c": "numeric", "role:d": "sensitive",
                                     "type:d": "categorical"})
    response = client.post("/hierarchies/apply", data={"attr": "a&b=c", "builder": "intervals", "widths": "5"},
                           follow_redirects=False)
    assert response.status_code == 303 and response.headers["location"] == "/hierarchies?attr=a%26b%3Dc"
    page = client.get(response.headers["location"])
    assert page.status_code == 200 and "a&b=c (categorical)" in text(page)
    forged = client.get("/hierarchies?error=You+have+been+hacked&status_code=99")
    assert forged.status_code == 200 and "hacked" not in forged.text


def test_an_exported_tree_is_formula_safe_and_imports_back(client):
    client.post("/data/upload", files={"file": ("p.csv", 'job,d\n"=HYPERLINK(""x"")",x\nclerk,y\n', "text/csv")})
    client.post("/data/roles", data={"role:job": "qi", "type:job": "categorical", "role:d": "sensitive",
                                     "type:d": "categorical"})
    assert client.post("/hierarchies/apply", data={"attr": "job", "builder": "masking", "levels": "1",
                                                   "direction": "left"}).url.path == "/hierarchies"
    exported = client.get("/hierarchies/job.csv").text
    assert exported.splitlines() == ['"\'=HYPERLINK(""x"")";"*HYPERLINK(""x"")";*', "clerk;*lerk;*"]  # by hand
    tree = client.app.state.session.instance.schema["job"].hierarchy
    response = client.post("/hierarchies/import", data={"attr": "job", "sep": ";"},
                           files={"file": ("job.csv", exported, "text/csv")})
    assert response.url.path == "/hierarchies"
    assert client.app.state.session.instance.schema["job"].hierarchy == tree


@pytest.mark.slow  # a run in worker processes: about 4 s of CPU
def test_a_run_over_built_trees_is_verified_and_its_job_file_reproduces_it(client, tmp_path):
    """Upload, build an interval tree (with top and bottom coding) for age and a masking
    tree for zip, run fulldomain: the release verifies, its labels are nodes of the trees,
    and the job file the app wrote gives the same bytes from the command line."""
    client.post("/data/upload", files={"file": ("patients.csv", PATIENTS, "text/csv")})
    client.post("/data/roles", data={"role:age": "qi", "type:age": "numeric", "role:zip": "qi",
                                     "type:zip": "categorical", "role:disease": "sensitive",
                                     "type:disease": "categorical"})
    client.post("/hierarchies/apply", data={"attr": "age", "builder": "intervals", "widths": "5, 10, 20",
                                            "bottom": "20", "top": "80"})
    client.post("/hierarchies/apply", data={"attr": "zip", "builder": "masking", "levels": "3",
                                            "direction": "right"})
    schema = client.app.state.session.instance.schema
    assert schema["zip"].hierarchy.ancestors("13053") == ["13053", "1305*", "130**", "13***", "*"]
    client.post("/requirements", data={"k": "2"})
    assert client.post("/run", data={"method": "fulldomain", "seed": "0"}).url.path == "/runs/1"
    status = wait_done(client, 1)
    assert status["state"] == "done" and status["code"] == 0, status
    assert "PASSED" in text(client.get("/runs/1/results"))
    release_bytes = client.get("/runs/1/files/release.csv").content
    release = pd.read_csv(io.BytesIO(release_bytes), dtype=str).set_index("record_id")
    assert set(release["age"]) <= set(schema["age"].hierarchy.nodes) | {"*"}
    assert set(release["zip"]) <= set(schema["zip"].hierarchy.nodes) | {"*"}
    # another table uploaded under the same name: the run's archive still holds its own data
    client.post("/data/upload", files={"file": ("patients.csv", PATIENTS.replace("flu", "cough"), "text/csv")})
    folder = unpack(client.get("/runs/1/files/job.zip").content, tmp_path / "unpacked")
    from fairanon.cli import main

    assert main(["anonymize", str(folder / "job.yaml"), "--out", str(tmp_path / "cli")]) == 0
    assert (tmp_path / "cli" / "release.csv").read_bytes() == release_bytes
    assert json.loads((tmp_path / "cli" / "report.json").read_text())["report"]["passed"]


def unpack(archive: bytes, folder) -> object:
    """Unpack a run's job.zip into `folder` (a pathlib.Path), which it returns."""
    import zipfile

    zipfile.ZipFile(io.BytesIO(archive)).extractall(folder)
    return folder


def test_an_uploaded_tables_run_is_reproduced_by_its_archive_after_another_upload(client, tmp_path):
    """The job names the run's own copy of the data (relative to the job file), so a
    later upload of another p.csv changes neither the run nor what its archive gives."""
    from fairanon.cli import main

    session = client.app.state.session
    roles = {"role:age": "qi", "role:zip": "qi", "type:zip": "categorical", "role:disease": "sensitive"}
    releases = []
    for content in (PATIENTS, PATIENTS.replace("hiv", "measles")):
        client.post("/data/upload", files={"file": ("p.csv", content, "text/csv")})
        client.post("/data/roles", data=roles)
        run = cli_run(session, session.job_document([{"k_anonymity": {"k": 2}}], method="mondrian", seed=0,
                                                    time_limit=None))
        assert yaml.safe_load(open(run.job))["instance"]["csv"] == "data/p.csv"
        releases.append(client.get(f"/runs/{run.id}/files/release.csv").content)
    assert b"measles" not in releases[0] and b"measles" in releases[1]
    assert worker.read_report(session.runs[1].folder)["report"]["passed"]
    folder = unpack(client.get("/runs/1/files/job.zip").content, tmp_path / "run1")
    assert sorted(p.name for p in folder.rglob("*")) == ["data", "job.yaml", "p.csv"]
    assert main(["anonymize", str(folder / "job.yaml"), "--out", str(tmp_path / "cli")]) == 0
    assert (tmp_path / "cli" / "release.csv").read_bytes() == releases[0]
    # the job names its data file: job.yaml alone does not reproduce the release, the archive does
    report = text(client.get("/runs/1/report.html"))
    assert "in the folder the run's job.zip unpacks to" in report and "with the job file below gives" not in report
    assert "Re-run from the command line, in the folder job.zip unpacks to" in text(client.get("/runs/1/results"))
    # a candidate's run of a picked job (relative paths) copies the files of the run it comes from
    hierarchy = "".join(f"{z};{z[:3]}**;*\n" for z in ("13053", "13068", "14850", "14853"))
    job = ("instance:\n  csv: p.csv\n  schema:\n    age: {role: ignore}\n"
           "    zip: {role: qi, hierarchy: zip.csv}\n    disease: {role: sensitive}\n"
           "requirements:\n  - k_anonymity: {k: 2}\nmethod: fulldomain\nseed: 0\n")
    client.post("/data/job", files=[("files", ("job.yaml", job, "text/yaml")), ("files", ("p.csv", PATIENTS, "t")),
                                    ("files", ("zip.csv", hierarchy, "text/csv"))])
    full = cli_run(session, session.job_document([{"k_anonymity": {"k": 2}}], method="fulldomain", seed=0,
                                                 time_limit=None))
    assert yaml.safe_load(open(full.job))["instance"]["schema"]["zip"]["hierarchy"] == "data/zip.csv"
    assert client.post(f"/runs/{full.id}/choose", data={"candidate": "0"}).url.path == f"/runs/{full.id + 1}"
    chosen = session.runs[full.id + 1]
    assert yaml.safe_load(open(chosen.job))["instance"]["schema"]["zip"]["hierarchy"] == "data/zip.csv"
    with open(os.path.join(chosen.folder, "data", "zip.csv")) as fh:
        assert fh.read() == hierarchy


def test_parquet_upload(client, tmp_path):
    table = pd.DataFrame({"age": [30, 31, 45, 46], "zip": ["1234", "1235", "1300", "1301"],
                          "disease": ["flu", "cold", "flu", "cold"]})
    table.to_parquet(tmp_path / "patients.parquet")
    page = text(client.post("/data/upload", files={"file": ("patients.parquet", (tmp_path / "patients.parquet")
                                                            .read_bytes(), "application/octet-stream")}))
    assert "patients.parquet: 4 records" in page and "Apply roles" in page
    assert client.app.state.session.source["schema"]["age"]["type"] == "numeric"  # from the Parquet schema
    page = text(client.post("/data/roles", data={"role:disease": "sensitive", "type:zip": "categorical"}))
    assert "quasi-identifiers: age, zip" in page
    response = client.post("/data/upload", files={"file": ("bad.parquet", b"PAR1 not really", "application/x")})
    assert response.status_code == 400 and "Cannot read" in text(response) and "Traceback" not in response.text


def test_job_file_picker_reads_only_the_picked_files(client, tmp_path):
    job = ("instance:\n  csv: data/patients.csv\n  schema:\n    age: {role: qi, type: numeric}\n"
           "    zip: {role: qi, type: categorical, hierarchy: hierarchies/zip.csv}\n"
           "    disease: {role: sensitive}\nrequirements:\n  - k_anonymity: {k: 2}\n  - l_diversity: {l: 2}\n"
           "method: mondrian\nseed: 3\n")
    zips = "".join(f"{z};{z[:3]}*;*\n" for z in ("13053", "13068", "14850", "14853"))
    files = [("files", ("job.yaml", job, "text/yaml")), ("files", ("patients.csv", PATIENTS, "text/csv")),
             ("files", ("zip.csv", zips, "text/csv"))]
    page = text(client.post("/data/job", files=files))
    assert "job.yaml: 10 records" in page
    session = client.app.state.session
    assert session.instance.schema["zip"].hierarchy.ancestors("13053") == ["13053", "130*", "*"]
    assert session.job_settings["method"] == "mondrian" and session.job_settings["seed"] == 3
    assert session.form == {"k": "2", "l": "2", "l_variant": "distinct"}  # the requirements in their fields
    assert "job file's requirements" in text(client.get("/requirements"))
    for bad_files, message in (
            (files[:2], "names the file 'hierarchies/zip.csv': pick it together with the job file"),
            (files[1:], "Pick one job file"),
            ([("files", ("job.yaml", "instance: [1\n", "text/yaml"))], "is malformed at line"),
            ([("files", ("job.yaml", "instance: {csv: /etc/passwd, schema: {}}\n", "text/yaml"))],
             "names the file '/etc/passwd'"),
            # a data set's loader would read any file named by its options, or say whether it exists
            ([("files", ("job.yaml", "instance: {dataset: census, options: {path: /etc/hostname}}\n", "t"))],
             "names the file '/etc/hostname': pick it together with the job file"),
            ([("files", ("job.yaml", "instance: {dataset: ruggieri, options: {data: census, path: p.csv, "
                                     "path_test: /nope}}\n", "t")), ("files", ("p.csv", PATIENTS, "text/csv"))],
             "names the file '/nope': pick it together with the job file"),
            # not text: refused by name, never passed on (os.path.exists(5) asks about descriptor 5)
            *[([("files", ("job.yaml", f"instance: {{dataset: census, options: {{path: {value}}}}}\n", "t"))],
               f"The option 'path' of data set 'census' names a file: it must be a path as text; got {shown}.")
              for value, shown in (("!!binary L2V0Yy9ob3N0bmFtZQ==", "b'/etc/hostname'"),
                                   ("[/etc/hostname]", "['/etc/hostname']"), ("5", "5"))],
            # no file named: the loader would read the server's $FAIRANON_DATA, which job.zip does not carry
            *[([("files", ("job.yaml", f"instance: {{dataset: {section}}}\n", "t"))],
               "has no 'path' option, so it would be read from the server's $FAIRANON_DATA folder")
              for section in ("census, options: {rows: 5}", "ruggieri, options: {data: census}")]):
        response = client.post("/data/job", files=bad_files)
        assert response.status_code == 400 and message in text(response), (message, text(response))
    assert session.instance.n_rows == 10  # the good job's data stays


def test_a_picked_job_whose_requirements_do_not_fit_the_data_is_a_message_on_the_run_page(client):
    job = ("instance:\n  csv: patients.csv\n  schema:\n    age: {role: qi, type: numeric}\n"
           "    zip: {role: qi, type: categorical}\n    disease: {role: sensitive}\n"
           "requirements:\n  - l_diversity: {l: 2, attribute: nope}\nmethod: mondrian\n")
    files = [("files", ("job.yaml", job, "text/yaml")), ("files", ("patients.csv", PATIENTS, "text/csv"))]
    assert client.post("/data/job", files=files).status_code == 200
    message = "'nope'"
    assert message in text(client.get("/run"))
    response = client.post("/run", data={"method": "mondrian"})
    assert response.status_code == 400 and message in text(response) and "job file's requirements" in text(response)
    assert not client.app.state.session.runs  # no run started, to fail in its log


def test_auto_choice_is_computed_again_for_new_data(client):
    """The choice is kept per data: choosing the data again (a new instance, which may
    get the freed one's id()) drops it."""
    session = client.app.state.session
    client.post("/data/dataset", data={"dataset": "ruggieri_loan"})
    client.post("/requirements", data={"k": "2"})
    assert "auto would run cpsat" in text(client.get("/run"))
    (key,) = session.auto_choices
    session.auto_choices = {key: ("stale", "kept from other data")}
    assert "would run stale" in text(client.get("/run"))  # the same data: kept
    client.post("/data/dataset", data={"dataset": "ruggieri_loan"})
    assert "auto would run cpsat" in text(client.get("/run"))


def cli_run(session, document: dict, *, utility: bool = False, release_format: str = "csv"):
    """A run of the app whose files the command line wrote in this process (the
    worker runs the same commands in processes of their own)."""
    from fairanon.cli import main

    run = session.new_run(document)
    run.format = release_format
    out = os.path.join(run.folder, "out")
    with open(os.path.join(run.folder, worker.LOG_FILE), "w") as log:
        log.write("test\n")
    # as the worker runs it: a fulldomain run also lists its candidate transformations
    listing = ["--candidates", os.path.join(run.folder, worker.CANDIDATES_FILE)] if document.get(
        "method") == "fulldomain" else []
    code = main(["anonymize", run.job, "--out", out, "--format", release_format, *listing])
    if utility:
        assert main(["utility", run.job, "--release", os.path.join(out, "release.csv"), "--classifier", "none",
                     "--out", os.path.join(run.folder, worker.UTILITY_FILE)]) == 0
    worker.write_status(run.folder, state="done", step="finished", code=code, started=time.time())
    return run


def test_results_show_the_risk_and_utility_plots(client):
    session = client.app.state.session
    client.post("/data/dataset", data={"dataset": "ruggieri_loan"})
    run = cli_run(session, {"instance": {"dataset": "ruggieri_loan"}, "requirements": [{"k_anonymity": {"k": 2}}],
                            "method": "mondrian", "seed": 0}, utility=True)
    page = client.get(f"/runs/{run.id}/results").text
    risk = re.search(r'<figure class="plot" id="risk-plot">(.*?)</figure>', page, re.S).group(1)
    report = json.load(open(os.path.join(run.folder, "out", "report.json")))
    sample = report["risk"]["sample"]
    # one bar per risk bin holding records, each labelled by its bounds (1/3 -> 0.333)
    for b in (b for b in sample["histogram"] if b["records"]):
        label = f"{float(Fraction(b['lo'])):.3g}–{float(Fraction(b['hi'])):.3g}"
        assert label in html.unescape(risk), label
    assert "red: above 0.2" in risk  # the report's threshold (bins are ]lo, hi])
    utility = re.search(r'<figure class="plot" id="utility-plot">(.*?)</figure>', page, re.S).group(1)
    for name in ("purpose", "emp", "sex", "total variation distance", "suppressed"):
        assert name in utility, name


def test_results_of_an_infeasible_set_show_the_conflict(client):
    session = client.app.state.session
    client.post("/data/dataset", data={"dataset": "ruggieri_loan"})
    # 8 of the 17 records are female: no release shows 9 female values
    assert (fa.load("ruggieri_loan").table["sex"] == "female").sum() == 8
    run = cli_run(session, {"instance": {"dataset": "ruggieri_loan"}, "method": "cpsat", "seed": 0,
                            "requirements": [{"k_anonymity": {"k": 2}}, {"diversity": "sex(female) [9, 9]"}]})
    page = client.get(f"/runs/{run.id}/results").text
    conflict = text(re.search(r'<div class="conflict" id="conflict".*?</div>', page, re.S).group(0))
    assert "No release satisfies these requirements" in conflict
    assert "(a minimal set): diversity sex[female] in [9, 9] Relax one" in conflict
    assert "2-anonymity" not in conflict  # not part of the conflict


LOAN = {"instance": {"dataset": "ruggieri_loan"}, "method": "mondrian", "seed": 0}


def test_compare_runs_side_by_side(client):
    session = client.app.state.session
    client.post("/data/dataset", data={"dataset": "ruggieri_loan"})
    assert "No finished run yet" in text(client.get("/compare"))
    runs = [cli_run(session, {**LOAN, "requirements": [{"k_anonymity": {"k": k}}]}) for k in (2, 4)]
    page = client.get("/compare?runs=1&runs=2")
    assert page.status_code == 200
    table = re.search(r'<table class="compare" id="side-by-side">.*?</table>', page.text, re.S).group(0)
    rows = {cells[0]: cells[1:] for cells in (re.findall(r"<t[dh]>(.*?)</t[dh]>", row)
                                              for row in re.findall(r"<tr>(.*?)</tr>", table, re.S))}
    assert rows[""] == ["run 1: mondrian (2-anonymity)", "run 2: mondrian (4-anonymity)"]
    for column, run in enumerate(runs):  # each column shows its run's report.json
        report = worker.read_report(run.folder)
        assert rows["smallest class"][column] == str(report["report"]["metrics"]["min_class_size"])
        assert rows["highest prosecutor risk"][column] == report["risk"]["sample"]["prosecutor_highest"]["exact"]
    assert int(rows["smallest class"][1]) >= 4 and rows["verification passed"] == ["True", "True"]
    plot = re.search(r'<figure class="plot" id="compare-plot">(.*?)</figure>', page.text, re.S).group(1)
    assert "<svg" in plot and "GCP (lower is better)" in plot and "Pareto front" in plot
    assert 'value="1" checked' in page.text and 'value="2" checked' in page.text
    missing = client.get("/compare?runs=1&runs=9")
    assert missing.status_code == 404 and "There is no finished run 9 to compare" in text(missing)
    bad = client.get("/compare?runs=x")
    assert bad.status_code == 400 and bad.text.startswith("Bad request: runs") and "{" not in bad.text


#: The kinds of plot `fairanon bench` draws per comparison (tests/bench/test_which_report.py).
KINDS = ("size", "loss", "scatter", "coverage", "dominance", "tradeoff", "winmap")
DEWRI = {"instance": {"dataset": "dewri_t1"}, "requirements": [{"k_anonymity": {"k": 2}}], "seed": 0}


def figures(page: str, group: int) -> dict:
    """The plots of one comparison on the Compare page, by kind: the SVG parsed."""
    import xml.etree.ElementTree as ET

    found = re.findall(rf'<figure class="plot" id="plot-(\w+)-{group}">(<svg.*?</svg>)', page, re.S)
    return {kind: ET.fromstring(svg) for kind, svg in found}


def test_compare_shows_the_bench_plots_of_each_comparison(client):
    from fairanon.bench.compare import RunRelease, compare_runs
    from fairanon.jobs import read_release

    session = client.app.state.session
    client.post("/data/dataset", data={"dataset": "dewri_t1"})
    runs = [cli_run(session, {**DEWRI, "method": m}) for m in ("mondrian", "kmember")]
    page = client.get("/compare?runs=1&runs=2").text
    shown = figures(page, 1)
    assert sorted(shown) == sorted(KINDS)  # one plot of each kind, each a well-formed SVG
    assert all(root.tag == "{http://www.w3.org/2000/svg}svg" for root in shown.values())
    assert "run 1: mondrian (2-anonymity); run 2: kmember (2-anonymity)" in text(page)
    labels = svg_text(shown["scatter"])  # the two releases, named without their common requirements
    assert "run 1: mondrian" in labels and "run 2: kmember" in labels
    # the per-record class sizes the bench compares, against the classes counted by hand
    # (records with equal released quasi-identifiers) in each release file
    data = fa.load("dewri_t1")
    held = [RunRelease(f"run {r.id}", "dewri_t1", data, tuple(DEWRI["requirements"]),
                       read_release(os.path.join(r.folder, "out", "release.csv"), data)) for r in runs]
    (comparison,) = compare_runs(held).values()
    for r in runs:
        table = pd.read_csv(os.path.join(r.folder, "out", "release.csv"), dtype=str).set_index("record_id")
        counted = table.groupby(list(data.schema.qi))[data.schema.qi[0]].transform("size")
        sizes = comparison.vectors[f"run {r.id}"]["size"]
        assert {int(i): int(n) for i, n in counted.items()} == {int(i): int(n) for i, n in sizes.items()}
        assert min(counted) >= 2


def svg_text(root) -> str:
    return " ".join(t for t in root.itertext() if t.strip())


def test_compare_groups_runs_of_different_data(client):
    session = client.app.state.session
    client.post("/data/dataset", data={"dataset": "dewri_t1"})
    cli_run(session, {**DEWRI, "method": "mondrian"})
    client.post("/data/dataset", data={"dataset": "diva_table1"})
    cli_run(session, {**DEWRI, "instance": {"dataset": "diva_table1"}, "method": "mondrian"})
    page = client.get("/compare?runs=1&runs=2")
    assert page.status_code == 200
    words = text(page)
    assert "These runs are of 2 different data: they cannot be compared per record" in words
    assert "Runs of dewri_t1" in words and "Runs of diva_table1" in words
    for group in (1, 2):  # one release each: its own distributions, nothing to compare it with
        assert sorted(figures(page.text, group)) == ["loss", "size"]
    assert words.count("no other run of this data to compare it with") == 2


def test_compare_by_requirements_and_bad_groupings(client):
    session = client.app.state.session
    client.post("/data/dataset", data={"dataset": "dewri_t1"})
    for k in (2, 3):
        cli_run(session, {**DEWRI, "requirements": [{"k_anonymity": {"k": k}}], "method": "mondrian"})
    # 8 of the loan table's 17 records are female: no release shows 9 (INFEASIBLE, no release)
    cli_run(session, {**LOAN, "method": "cpsat", "requirements": [{"k_anonymity": {"k": 2}},
                                                                  {"diversity": "sex(female) [9, 9]"}]})
    apart = client.get("/compare?runs=1&runs=2&runs=3&by=requirements").text
    assert "Run 3 is not compared record by record: its status is INFEASIBLE: there is no release." in text(apart)
    assert "Runs of dewri_t1 · 2-anonymity" in text(apart) and "Runs of dewri_t1 · 3-anonymity" in text(apart)
    assert "or under different requirements" in text(apart)
    for group in (1, 2):
        assert sorted(figures(apart, group)) == ["loss", "size"]
    bad = client.get("/compare?runs=1&by=method")
    assert bad.status_code == 400 and "Runs are grouped by one of ['instance', 'requirements']; got 'method'" in text(
        bad)
    assert "plot-size" not in bad.text


def test_compare_reads_each_data_once_and_leaves_out_cancelled_runs(client, monkeypatch):
    """Two runs of one uploaded table: the Compare page reads the table once for both
    and hashes each run's copy once for good; a cancelled run is not finished, as on
    the Results page."""
    import fairanon.instances.files
    import fairanon.jobs

    session = client.app.state.session
    client.post("/data/upload", files={"file": ("patients.csv", PATIENTS, "text/csv")})
    client.post("/data/roles", data={"role:disease": "sensitive", "type:disease": "categorical"})
    for k in (2, 3):
        cli_run(session, {"instance": session.source, "requirements": [{"k_anonymity": {"k": k}}],
                          "method": "mondrian", "seed": 0})
    loads, hashes = [], []
    load, sha256_of = fairanon.jobs.load_instance_spec, fairanon.instances.files.sha256_of
    monkeypatch.setattr(fairanon.jobs, "load_instance_spec", lambda *a, **kw: loads.append(a) or load(*a, **kw))
    monkeypatch.setattr(fairanon.instances.files, "sha256_of", lambda path: hashes.append(path) or sha256_of(path))
    page = client.get("/compare?runs=1&runs=2")
    assert page.status_code == 200 and page.text.count("<h3>Runs of ") == 1  # one data, one comparison
    assert len(loads) == 1 and len(hashes) == 2  # one table read; each run's copy hashed
    assert sorted(figures(page.text, 1)) == sorted(KINDS)  # the two runs compared record by record
    client.get("/compare?runs=1&runs=2")
    assert len(loads) == 2 and len(hashes) == 2  # read again for the new page, hashed never again
    session.runs[2].cancelled = True
    missing = client.get("/compare?runs=2")
    assert missing.status_code == 404 and "There is no finished run 2 to compare" in text(missing)
    assert 'value="2"' not in client.get("/compare").text and 'value="1"' in client.get("/compare").text


def test_html_report_and_parquet_release(client):
    session = client.app.state.session
    client.post("/data/dataset", data={"dataset": "ruggieri_loan"})
    run = cli_run(session, {**LOAN, "requirements": [{"k_anonymity": {"k": 2}}]}, release_format="parquet")
    files = worker.run_files(run.folder)
    assert "release.parquet" in files and "release.csv" not in files
    page = client.get(f"/runs/{run.id}/results")
    assert "--format parquet" in text(page) and "PASSED" in text(page)
    release = pd.read_parquet(files["release.parquet"])
    shown = re.findall(r"<tr><td>(\d+)</td>", page.text)
    assert shown == [str(i) for i in release.index[:len(shown)]] and shown  # the release table, read from Parquet
    report = client.get(f"/runs/{run.id}/report.html")
    assert report.headers["content-disposition"] == f'attachment; filename="report-run{run.id}.html"'
    assert "<style>" in report.text and "<script" not in report.text  # standalone, inert
    assert 'href="/' not in report.text and 'src="/' not in report.text  # nothing points into the app
    assert "PASSED" in text(report) and "k_anonymity" in text(report)  # the verdict and the job file
    assert "with the job file below gives the same release" in text(report)  # a bundled table: no files named
    assert "job.zip" not in text(report)
    with open(run.job) as fh:
        assert html.escape(fh.read(), quote=False) in report.text
    assert client.get("/runs/9/report.html").status_code == 404
    unfinished = session.new_run({**LOAN, "requirements": []})
    waiting = client.get(f"/runs/{unfinished.id}/report.html", follow_redirects=False)
    assert waiting.status_code == 303 and waiting.headers["location"] == f"/runs/{unfinished.id}"  # its progress


def test_a_job_file_given_at_the_start_opens_its_data_requirements_and_settings(tmp_path):
    """``fairanon app JOB``: the job's data (paths relative to the job file), its
    requirements in their fields and its settings on the Run page."""
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "patients.csv").write_text(PATIENTS)
    (tmp_path / "zip.csv").write_text("".join(f"{z};{z[:3]}**;*\n" for z in ("13053", "13068", "14850", "14853")))
    job = tmp_path / "job.yaml"
    job.write_text("instance:\n  csv: data/patients.csv\n  schema:\n    age: {role: qi, type: numeric}\n"
                   "    zip: {role: qi, hierarchy: zip.csv}\n    disease: {role: sensitive}\n"
                   "requirements:\n  - t_closeness: {t: '0.4', distance: equal}\nmethod: mondrian\nseed: 7\n")
    app = create_app(str(job), token=TOKEN)
    with TestClient(app) as c:
        assert "job.yaml: 10 records" in text(c.get(f"/data?token={TOKEN}"))
        assert app.state.session.instance.schema["zip"].hierarchy.lca(["13053", "13068"]) == "130**"
        page = c.get("/requirements").text
        assert 'id="f-t" name="t" value="2/5"' in page and "job file's requirements" in text(page)
        run = c.get("/run").text
        assert "<option selected>mondrian</option>" in run and 'name="seed" size="6" value="7"' in run
    app.state.session.close()
    with pytest.raises(fa.exceptions.FairanonError, match="does not exist"):
        create_app(str(tmp_path / "nope.yaml"), token=TOKEN)
    # a data set's loader failing on a file it reads: the API's error, with the loader's message
    (tmp_path / "census.csv").write_text('a,b\n1,2,3\n"x\n')
    job.write_text(f"instance: {{dataset: census, options: {{path: {tmp_path / 'census.csv'}}}}}\n"
                   "requirements: [{k: 2}]\n")
    with pytest.raises(fa.exceptions.FairanonError, match="Cannot load the data: Error tokenizing data"):
        create_app(str(job), token=TOKEN)


def census_file(path) -> str:
    """A Census-Income (KDD) file of 8 records written by hand (42 columns, ", "
    separated, values the loader's hierarchies and orders know); its text."""
    from fairanon.instances.datasets.census import CENSUS_COLUMNS

    pairs = {"education": ("High school graduate", "Children"), "marital stat": ("Never married", "Divorced"),
             "race": ("White", "Black"), "income class": ("- 50000.", "50000+."), "sex": ("Male", "Female")}
    numeric = {"age", "wage per hour", "capital gains", "capital losses", "dividends from stocks", "instance weight",
               "num persons worked for employer", "weeks worked in year"}
    content = "".join(", ".join(pairs[c][i % 2] if c in pairs else str(20 + i) if c in numeric else "x"
                                for c in CENSUS_COLUMNS) + "\n" for i in range(8))
    with open(path, "w") as fh:
        fh.write(content)
    return content


def test_a_jobs_data_set_option_naming_a_file_is_copied_into_the_run(tmp_path):
    """``fairanon app JOB`` on a job whose data set reads a file named by an option
    (Census-Income's ``path``, relative to the job file): the run's folder holds a copy
    and its job names the copy, so job.zip re-runs anywhere to the same release."""
    (tmp_path / "in").mkdir()
    content = census_file(tmp_path / "in" / "census.csv")
    job = tmp_path / "job.yaml"
    job.write_text("instance: {dataset: census, options: {path: in/census.csv, qi: [age, sex]}}\n"
                   "requirements: [{k_anonymity: {k: 2}}]\nmethod: mondrian\nseed: 0\n")
    app = create_app(str(job), token=TOKEN)
    try:
        with TestClient(app) as c:
            assert "job.yaml: 8 records" in text(c.get(f"/data?token={TOKEN}"))
            session = app.state.session
            run = cli_run(session, session.job_document([{"k_anonymity": {"k": 2}}], method="mondrian", seed=0,
                                                        time_limit=None))
            written = yaml.safe_load(open(run.job))["instance"]
            assert written["options"] == {"path": "data/census.csv", "qi": ["age", "sex"]}
            with open(os.path.join(run.folder, "data", "census.csv")) as fh:
                assert fh.read() == content
            release = c.get(f"/runs/{run.id}/files/release.csv")
            assert release.status_code == 200
            archive = c.get(f"/runs/{run.id}/files/job.zip").content
    finally:
        app.state.session.close()
    import zipfile

    from fairanon.cli import main

    with zipfile.ZipFile(io.BytesIO(archive)) as zf:
        assert sorted(zf.namelist()) == ["data/census.csv", "job.yaml"]
        zf.extractall(tmp_path / "elsewhere")
    os.remove(tmp_path / "in" / "census.csv")  # the copy alone: the job's path is read relative to the job file
    assert main(["anonymize", str(tmp_path / "elsewhere" / "job.yaml"), "--out", str(tmp_path / "cli")]) == 0
    assert (tmp_path / "cli" / "release.csv").read_bytes() == release.content


def test_a_picked_jobs_data_set_option_names_a_picked_file(client, tmp_path):
    """A job file picked in the app whose data set option names a file: the file must be
    picked with it, as its data and hierarchy files must, and the run gets a copy."""
    content = census_file(tmp_path / "census.csv")
    job = "instance: {dataset: census, options: {path: census.csv, qi: [age, sex]}}\nrequirements: [{k: 2}]\n"
    page = text(client.post("/data/job", files=[("files", ("job.yaml", job, "text/yaml")),
                                                ("files", ("census.csv", content, "text/csv"))]))
    assert "job.yaml: 8 records" in page
    session = client.app.state.session
    run = session.new_run(session.job_document([{"k_anonymity": {"k": 2}}], method="mondrian", seed=0,
                                               time_limit=None))
    assert yaml.safe_load(open(run.job))["instance"]["options"]["path"] == "data/census.csv"
    with open(os.path.join(run.folder, "data", "census.csv")) as fh:
        assert fh.read() == content


def test_the_release_is_formula_safe_and_shown_as_released(client):
    """A cell that a spreadsheet would run (=..., +..., @...) is written with a leading '
    in the release CSV (the command line's default), and the Results page shows the
    value itself."""
    table = "age,zip,note\n30,1234,=HYPERLINK(\"http://x\")\n31,1235,@SUM(A1)\n45,1300,ok\n46,1301,ok\n"
    client.post("/data/upload", files={"file": ("notes.csv", table, "text/csv")})
    client.post("/data/roles", data={"role:note": "insensitive", "type:zip": "categorical"})
    session = client.app.state.session
    run = cli_run(session, session.job_document([{"k_anonymity": {"k": 2}}], method="mondrian", seed=0,
                                                time_limit=None))
    release = client.get(f"/runs/{run.id}/files/release.csv").text
    assert "'=HYPERLINK" in release and "'@SUM(A1)" in release
    assert worker.read_report(run.folder)["neutralized_formulas"] is True
    page = client.get(f"/runs/{run.id}/results").text
    cells = [html.unescape(c) for c in re.findall(r"<td>([^<]*)</td>", page)]
    assert '=HYPERLINK("http://x")' in cells and "@SUM(A1)" in cells and "'@SUM(A1)" not in cells


def test_plot_text_is_escaped():
    """Attribute names go into the SVG put into the page: as escaped text."""
    from fairanon.app.plots import utility_svg

    svg = utility_svg({"attributes": [{"name": "<script>alert(1)</script>", "n": 2, "exact": 1, "generalized": 1,
                                       "tv_distance": 0.5}]})
    assert "<script>" not in svg and "&lt;script&gt;alert(1)&lt;/script&gt;" in svg
    assert utility_svg({"attributes": []}) is None and utility_svg({}) is None


def _loan_candidates(client):
    """A fulldomain run of the loan table under 2-anonymity, objective 'generalized':
    the run, its Results page, the candidates table and its rows' text."""
    session = client.app.state.session
    client.post("/data/dataset", data={"dataset": "ruggieri_loan"})
    run = cli_run(session, {"instance": {"dataset": "ruggieri_loan"}, "requirements": [{"k_anonymity": {"k": 2}}],
                            "method": "fulldomain", "options": {"objective": "generalized"}, "seed": 0})
    page = client.get(f"/runs/{run.id}/results").text
    table = re.search(r'<table class="candidates">(.*?)</table>', page, re.S).group(1)
    return run, page, table, [text(r) for r in re.findall(r"<tr.*?</tr>", table, re.S)[1:]]


def test_fulldomain_candidates_are_shown_and_one_can_be_chosen(client, tmp_path):
    """The loan table under 2-anonymity, objective 'generalized': three of the four
    nodes pass (by hand: (purpose 1, emp 0) and (0, 1) generalize 17 cells each, (1, 1)
    34; (0, 0) leaves a class of one record). Choosing (1, 1) runs the job with its
    levels, and the command line re-runs that job to the same bytes."""
    session = client.app.state.session
    run, page, table, rows = _loan_candidates(client)
    assert [r.split(" choose")[0].strip() for r in rows] == [
        "0 purpose=1 emp=0 17 0.3333 0 1/4 4/17 yes",  # the optimum, released by this run
        "1 purpose=1 emp=1 34 0.6667 0 1/8 2/17 yes",
        "2 purpose=0 emp=1 17 0.3333 0 1/2 4/17",
    ]
    assert re.search(r'<tr class="chosen"><td>0</td>', table)
    assert "3 of the lattice's 4 nodes meet the requirements" in text(page)
    plot = re.search(r'<figure class="plot" id="candidates-plot">(.*?)</figure>', page, re.S).group(1)
    assert "highest prosecutor risk" in plot and "this release" in plot

    response = client.post(f"/runs/{run.id}/choose", data={"candidate": "1"})
    assert response.url.path == "/runs/2"
    assert wait_done(client, 2)["state"] == "done"
    job = tmp_path / "job.yaml"
    job.write_bytes(client.get("/runs/2/files/job.yaml").content)
    document = yaml.safe_load(job.read_text())
    assert document["method"] == "fulldomain"
    assert document["options"] == {"objective": "generalized", "levels": {"purpose": 1, "emp": 1}}
    chosen = client.get("/runs/2/results").text
    assert "FEASIBLE · PASSED" in text(chosen)
    # listed by run 2's own worker (its candidates.json), the chosen node marked
    assert os.path.isfile(os.path.join(session.runs[2].folder, worker.CANDIDATES_FILE))
    assert re.search(r'<tr class="chosen"><td>1</td><td>purpose=1 emp=1 </td>', chosen)
    release = client.get("/runs/2/files/release.csv")
    from fairanon.cli import main

    assert main(["anonymize", str(job), "--out", str(tmp_path / "cli")]) == 0
    assert (tmp_path / "cli" / "release.csv").read_bytes() == release.content
    assert set(pd.read_csv(io.StringIO(release.text))["emp"]) == {"*"}  # emp at level 1: its root


def test_choosing_a_candidate_refuses_bad_input(client):
    session = client.app.state.session
    client.post("/data/dataset", data={"dataset": "ruggieri_loan"})
    loan = {"instance": {"dataset": "ruggieri_loan"}, "requirements": [{"k_anonymity": {"k": 2}}], "seed": 0}
    full = cli_run(session, {**loan, "method": "fulldomain"})
    other = cli_run(session, {**loan, "method": "mondrian"})
    for value in ("", "x", "-1", "3", "1.0", "\u00b2", "--1"):
        response = client.post(f"/runs/{full.id}/choose", data={"candidate": value})
        assert response.status_code == 400 and "must be one of 0..2" in response.text, value
    response = client.post(f"/runs/{other.id}/choose", data={"candidate": "0"})
    assert response.status_code == 400 and "only fulldomain runs" in response.text
    assert 'id="candidates"' not in client.get(f"/runs/{other.id}/results").text
    # the worker's candidates.json among a finished run's files, as the others: not offered before it ends
    assert f'href="/runs/{full.id}/files/candidates.json"' in client.get(f"/runs/{full.id}/results").text
    with open(os.path.join(full.folder, worker.CANDIDATES_FILE), "rb") as fh:
        assert client.get(f"/runs/{full.id}/files/candidates.json").content == fh.read()
    assert "candidates.json" not in client.get(f"/runs/{other.id}/results").text
    assert client.get(f"/runs/{other.id}/files/candidates.json").status_code == 404
    worker.write_status(full.folder, state="running", step="anonymizing", started=time.time())
    waiting = client.get(f"/runs/{full.id}/files/candidates.json", follow_redirects=False)
    assert waiting.status_code == 303 and waiting.headers["location"] == f"/runs/{full.id}"
    assert client.post("/runs/99/choose", data={"candidate": "0"}).status_code == 404
    assert sorted(session.runs) == [full.id, other.id]  # no run started


def test_candidates_of_a_larger_lattice_say_which_nodes_were_checked(client, monkeypatch):
    """With room for 3 of the loan table's 4 nodes (as for a lattice above 65,536 nodes):
    the search checks them in order of least possible cost (generalized cells), (0, 0),
    (1, 0) and (0, 1), and the two passing nodes below the open (1, 1)'s cost (34) are
    listed, (1, 0) Pareto-relevant as in the whole lattice (the rows of the test above);
    the page says what was shown."""
    import importlib

    monkeypatch.setattr(importlib.import_module("fairanon.solver.fulldomain.candidates"), "CANDIDATE_NODES", 3)
    _, page, _, rows = _loan_candidates(client)
    assert [r.split(" choose")[0].strip() for r in rows] == [
        "0 purpose=1 emp=0 17 0.3333 0 1/4 4/17 yes", "1 purpose=0 emp=1 17 0.3333 0 1/2 4/17"]
    shown = text(page)
    assert "2 nodes meet the requirements among those costing less than 34 (generalized)" in shown
    assert "3 of the lattice's 4 nodes were checked" in shown and "costing 34 or more are not shown" in shown


def test_candidates_not_listed_say_why(client):
    """The Results page and the choose route read the worker's candidates.json: its
    error or time-limit reason, or its absence, is shown as "Not computed" and nothing
    can be chosen; the release is shown as usual."""
    session = client.app.state.session
    client.post("/data/dataset", data={"dataset": "ruggieri_loan"})
    full = {"instance": {"dataset": "ruggieri_loan"}, "requirements": [{"k_anonymity": {"k": 2}}],
            "method": "fulldomain", "seed": 0}
    reason = "the time limit (5.0 s) ran out after checking 3 of the lattice's 4 nodes"
    for written, shown in (
            ({"error": "The lattice has 70000 nodes; candidates lists lattices of at most 65536 nodes."},
             "Not computed: The lattice has 70000 nodes"),
            ({"objective": "lm", "lattice_size": 4, "checked": 3, "feasible": 2, "pareto": 0, "reason": reason,
              "candidates": []}, f"Not computed: {reason}."),
            (None, "Not computed: the run wrote no list of candidates (its log says why).")):
        run = cli_run(session, full)
        path = os.path.join(run.folder, worker.CANDIDATES_FILE)
        os.remove(path)
        if written is not None:
            with open(path, "w") as fh:
                json.dump(written, fh)
        page = client.get(f"/runs/{run.id}/results").text
        assert shown in text(page) and "OPTIMAL · PASSED" in text(page)
        assert '<table class="candidates">' not in page
        response = client.post(f"/runs/{run.id}/choose", data={"candidate": "0"})
        assert response.status_code == 400 and "lists no candidate transformations" in response.text
        assert shown in response.text and "only fulldomain runs" not in response.text  # the listing's reason
    # listed, but no node meets the requirements
    run = cli_run(session, full)
    with open(os.path.join(run.folder, worker.CANDIDATES_FILE), "w") as fh:
        json.dump({"objective": "lm", "lattice_size": 4, "checked": 4, "feasible": 0, "pareto": 0, "reason": None,
                   "candidates": []}, fh)
    response = client.post(f"/runs/{run.id}/choose", data={"candidate": "0"})
    assert response.status_code == 400 and "0 of the lattice's 4 nodes meet the requirements" in response.text


def test_a_run_without_a_decision_measures_utility_without_a_classifier(client, monkeypatch):
    """diva_table1 has no decision attribute, which the classifier would predict: the
    utility analysis of its runs failed ("has no decision attribute") whenever
    scikit-learn was installed."""
    started = []
    monkeypatch.setattr(worker, "start", lambda job, folder, options: started.append(options))
    client.post("/data/dataset", data={"dataset": "diva_table1"})
    client.post("/requirements", data={"k": "2"})
    client.post("/run", data={"method": "mondrian", "seed": "0", "time_limit": ""})
    assert fa.load("diva_table1").schema.decision is None
    assert [options["classifier"] for options in started] == ["none"]
