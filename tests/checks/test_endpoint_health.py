"""``endpoint_health`` against a real HTTP server on loopback."""

from __future__ import annotations

import itertools
import json
import socket
import time
import tracemalloc
from pathlib import Path

import pytest

from donegate.errors import InvalidInput
from tests.checks.httpserver import Reply, serving
from tests.checks.support import collect_one, config_from, detail, only, state

V142 = '{"status": "ok", "version": "1.4.2", "build": {"id": "b7"}}'
V141 = '{"status": "ok", "version": "1.4.1", "build": {"id": "b6"}}'
BODY_142 = '"version": "1.4.2"'


def check(url: str, expected: str, extra: str = "") -> str:
    return f"""
        [[checks]]
        check_type = "endpoint_health"
        url = {json.dumps(url)}
        expected = {expected}
        timeout_s = 2
        {extra}
    """


def contains(text: str) -> str:
    return "{ status = 200, body_contains = " + json.dumps(text) + " }"


def test_right_version_verifies(tmp_path: Path) -> None:
    with serving({"/healthz": lambda: Reply(body=V142)}) as server:
        done = collect_one(check(server.url + "/healthz", contains(BODY_142)), tmp_path, "deploy")
    item = only(done)
    assert item.observed_value == {"status": 200, "body_contains": True}
    assert item.target == server.url + "/healthz"
    assert detail(item)["attempts"] == 1
    assert state(done) == "verified"


def test_wrong_version_refutes(tmp_path: Path) -> None:
    with serving({"/healthz": lambda: Reply(body=V141)}) as server:
        done = collect_one(check(server.url + "/healthz", contains(BODY_142)), tmp_path, "deploy")
    assert only(done).observed_value == {"status": 200, "body_contains": False}
    assert state(done) == "refuted"


def test_version_that_appears_after_a_delay_is_waited_for(tmp_path: Path) -> None:
    ready_at = time.monotonic() + 1.0

    def rolling() -> Reply:
        return Reply(body=V142 if time.monotonic() >= ready_at else V141)

    with serving({"/healthz": rolling}) as server:
        config = check(server.url + "/healthz", contains(BODY_142), "wait_s = 10")
        done = collect_one(config, tmp_path, "deploy")
    attempts = detail(only(done))["attempts"]
    assert isinstance(attempts, int)
    assert attempts > 1
    assert state(done) == "verified"


def test_wrong_version_after_waiting_refutes_with_attempts(tmp_path: Path) -> None:
    with serving({"/healthz": lambda: Reply(body=V141)}) as server:
        config = check(server.url + "/healthz", contains(BODY_142), "wait_s = 1")
        done = collect_one(config, tmp_path, "deploy")
    attempts = detail(only(done))["attempts"]
    assert isinstance(attempts, int)
    assert attempts >= 3
    assert state(done) == "refuted"


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def test_refused_connection_is_absent(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{_closed_port()}/healthz"
    done = collect_one(check(url, contains(BODY_142), "wait_s = 0.6"), tmp_path, "deploy")
    item = only(done)
    assert item.verifier.kind == "absent"
    assert "observed_value" not in item.model_fields_set
    why = str(detail(item)["why_not_counted"])
    assert "no response after" in why
    assert "ConnectError" in why
    assert state(done) == "unverified"


def test_redirect_is_not_followed_unless_configured(tmp_path: Path) -> None:
    routes = {
        "/old": lambda: Reply(302, headers={"Location": "/healthz"}),
        "/healthz": lambda: Reply(body=V142),
    }
    with serving(routes) as server:
        plain = collect_one(check(server.url + "/old", contains(BODY_142)), tmp_path, "deploy")
        follow = check(server.url + "/old", contains(BODY_142), "follow_redirects = true")
        followed = collect_one(follow, tmp_path, "deploy")
    assert only(plain).observed_value == {"status": 302, "body_contains": False}
    assert detail(only(plain))["redirect_to"] == "/healthz"
    assert state(plain) == "refuted"
    assert state(followed) == "verified"


def test_slow_response_times_out_and_is_absent(tmp_path: Path) -> None:
    with serving({"/slow": lambda: Reply(body=V142, delay_s=3)}) as server:
        config = check(server.url + "/slow", contains(BODY_142)).replace(
            "timeout_s = 2", "timeout_s = 0.5"
        )
        started = time.monotonic()
        done = collect_one(config, tmp_path, "deploy")
    assert time.monotonic() - started < 20  # it ended; the deadline itself is asserted below
    item = only(done)
    assert item.verifier.kind == "absent"
    assert "within its deadline of 0.5 s" in str(detail(item)["why_not_counted"])
    assert state(done) == "unverified"


def test_json_paths_and_headers(tmp_path: Path) -> None:
    reply = Reply(body=V142, headers={"X-Build": "b7"})
    expected = '{ json = { "build.id" = "b7", version = "1.4.2" }, headers = { "x-build" = "b7" } }'
    with serving({"/v": lambda: reply}) as server:
        done = collect_one(check(server.url + "/v", expected), tmp_path, "deploy")
    assert only(done).observed_value == {
        "status": 200,
        "json": {"build.id": "b7", "version": "1.4.2"},
        "headers": {"x-build": "b7"},
    }
    assert state(done) == "verified"


@pytest.mark.parametrize("path", ["version", "build.missing"])
def test_json_field_wrong_or_not_there_refutes(tmp_path: Path, path: str) -> None:
    expected = "{ json = { " + json.dumps(path) + ' = "1.4.3" } }'
    with serving({"/v": lambda: Reply(body=V142)}) as server:
        done = collect_one(check(server.url + "/v", expected), tmp_path, "deploy")
    assert state(done) == "refuted"


def test_body_that_is_not_json_observes_no_json(tmp_path: Path) -> None:
    expected = '{ json = { version = "1.4.2" } }'
    with serving({"/v": lambda: Reply(body="<html>ok</html>")}) as server:
        done = collect_one(check(server.url + "/v", expected), tmp_path, "deploy")
    assert only(done).observed_value == {"status": 200}
    assert state(done) == "unverified"


def test_status_only_expectation_is_accepted_with_a_warning(tmp_path: Path) -> None:
    with serving({"/healthz": lambda: Reply(body="ok")}) as server:
        text = check(server.url + "/healthz", "{ status = 200 }")
        config = config_from(text, tmp_path)
        done = collect_one(text, tmp_path, "deploy")
    (warning,) = config.warnings()
    assert "weak evidence" in warning
    assert detail(only(done))["warnings"] == [warning.split(": ", 1)[1]]
    assert state(done) == "verified"


def test_url_password_never_appears_in_evidence(tmp_path: Path) -> None:
    with serving({"/healthz": lambda: Reply(body=V142)}) as server:
        url = server.url.replace("http://", "http://probe:hunter2@") + "/healthz"
        done = collect_one(check(url, contains(BODY_142)), tmp_path, "deploy")
    text = json.dumps(done.to_json_dict())
    assert "hunter2" not in text
    assert "probe:***@" in only(done).target
    assert state(done) == "verified"


@pytest.mark.parametrize(
    ("expected", "why"),
    [
        ("{ stauts = 200 }", "unknown expected keys"),
        ('{ status = "200" }', "expected.status is an integer"),
        ("{}", "expected is required"),
    ],
)
def test_bad_expectations_are_rejected(tmp_path: Path, expected: str, why: str) -> None:
    with pytest.raises(InvalidInput, match=why) as info:
        config_from(check("http://127.0.0.1:1/", expected), tmp_path)
    assert info.value.path == "checks[0]"


def test_url_must_be_http(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput) as info:
        config_from(check("file:///etc/passwd", "{ status = 200 }"), tmp_path)
    assert info.value.path == "checks[0].url"


ENDED_S = 20  # a 2 s deadline that "never ends" fails this; one that ends passes by far


def test_a_per_read_timeout_does_not_bound_a_trickle() -> None:
    """The control: httpx's own timeout restarts on every byte, so a trickle outlives it."""
    import httpx

    trickle = {"/t": lambda: Reply(stream=itertools.repeat(b"xx"), pause_s=0.5)}
    with serving(trickle) as server, httpx.stream("GET", server.url + "/t", timeout=1) as response:
        started = time.monotonic()
        chunks = response.iter_raw()
        while time.monotonic() - started < 3:  # three times the timeout, and still reading
            assert next(chunks)


@pytest.mark.parametrize("trickle_head", [False, True])
def test_trickling_endpoint_ends_by_its_deadline(tmp_path: Path, trickle_head: bool) -> None:
    reply = Reply(stream=itertools.repeat(b"xx"), pause_s=0.5, trickle_head=trickle_head)
    with serving({"/t": lambda: reply}) as server:
        started = time.monotonic()
        done = collect_one(check(server.url + "/t", contains(BODY_142)), tmp_path, "deploy")
        assert time.monotonic() - started < ENDED_S
        assert server.hung_up.wait(ENDED_S)  # the server saw donegate close the connection
    item = only(done)
    assert item.verifier.kind == "absent"
    assert "the request did not finish within its deadline of 2 s" in str(
        detail(item)["why_not_counted"]
    )
    assert state(done) == "unverified"


def test_endless_body_is_cut_at_the_cap_with_bounded_memory(tmp_path: Path) -> None:
    endless = {"/e": lambda: Reply(stream=itertools.repeat(b"x" * 65536))}
    with serving(endless) as server:
        tracemalloc.start()
        try:
            config = check(server.url + "/e", contains(BODY_142), "wait_s = 0")
            done = collect_one(config.replace("timeout_s = 2", "timeout_s = 30"), tmp_path, "d")
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert server.hung_up.wait(ENDED_S)
    assert peak < 16 * 1024 * 1024  # the default cap is 1 MiB; the body is endless
    item = only(done)
    # Text not found in a cut body is not observed: it might come after the cut.
    assert item.observed_value == {"status": 200}
    assert "longer than max_body_bytes (1048576)" in str(detail(item)["body_cut"])
    assert state(done) == "unverified"


def test_text_found_before_the_cut_counts(tmp_path: Path) -> None:
    stream = itertools.chain([V142.encode()], itertools.repeat(b" " * 65536))
    with serving({"/e": lambda: Reply(stream=stream)}) as server:
        config = check(server.url + "/e", contains(BODY_142), "max_body_bytes = 1024")
        done = collect_one(config, tmp_path, "deploy")
    assert only(done).observed_value == {"status": 200, "body_contains": True}
    assert state(done) == "verified"


def test_json_from_a_cut_body_is_not_observed(tmp_path: Path) -> None:
    expected = '{ json = { version = "1.4.2" } }'
    with serving({"/v": lambda: Reply(body=V142)}) as server:
        config = check(server.url + "/v", expected, "max_body_bytes = 16")
        done = collect_one(config, tmp_path, "deploy")
    item = only(done)
    assert item.observed_value == {"status": 200}
    assert "max_body_bytes (16)" in str(detail(item)["body_cut"])
    assert state(done) == "unverified"
