"""The collector's refusals that need no browser, and the claim's ``extensions`` field."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from donegate.checks.base import CheckContext
from donegate.checks.dom_assertion import DOM_ASSERTION, EXTENSION_URI, DomAssertionSettings
from donegate.claim import Claim, parse_claim
from donegate.collect import collect
from donegate.instant import Instant
from tests.checks.support import config_from

NO_BROWSER = """
    [[checks]]
    check_type = "x-dom_assertion"
    url = "http://127.0.0.1:9/settings"
    selector = "#name"
    expected = { text = "Grace Hopper" }
    browser = "missing/chromium"
"""
TEST_RUN = """
    [[checks]]
    check_type = "test_run"
    command = ["true"]
    expected = { exit_code = 0 }
"""


def _claim(extensions: object = None) -> Claim:
    document: dict[str, object] = {
        "spec_version": "0.1",
        "task": {"id": "t"},
        "claimed_outcome": "done",
        "mutations": [
            {"id": "m1", "kind": "state_write", "target": "x", "at": (Instant.now() + -1.0).text}
        ],
    }
    if extensions is not None:
        document["extensions"] = extensions
    return parse_claim(document)


def test_a_claim_with_extension_evidence_names_the_extension_even_when_absent(
    tmp_path: Path,
) -> None:
    done = collect(_claim(), config_from(NO_BROWSER, tmp_path))
    assert done.evidence[0].verifier.kind == "absent"
    assert done.model_dump(mode="json")["extensions"] == {"x-dom_assertion": EXTENSION_URI}


def test_donegates_entry_replaces_the_agents_and_keeps_the_others(tmp_path: Path) -> None:
    listed = {"x-dom_assertion": "https://example.com/looser", "x-other": "https://example.com/o"}
    done = collect(_claim(listed), config_from(NO_BROWSER, tmp_path))
    assert done.model_dump(mode="json")["extensions"] == {
        "x-dom_assertion": EXTENSION_URI,
        "x-other": "https://example.com/o",
    }


def test_a_claim_of_v0_1_check_types_only_gains_no_field(tmp_path: Path) -> None:
    done = collect(_claim(), config_from(TEST_RUN, tmp_path))
    assert "extensions" not in done.model_dump(mode="json")


def test_a_browser_the_agent_wrote_is_not_run(tmp_path: Path) -> None:
    fake = tmp_path / "bin" / "chromium"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\ntouch ran\n")
    os.chmod(fake, 0o755)
    settings = DomAssertionSettings.model_validate(
        {
            "check_type": "x-dom_assertion",
            "url": "http://127.0.0.1:9/",
            "selector": "#name",
            "expected": {"present": True},
            "browser": "bin/chromium",
        }
    )
    context = CheckContext(tmp_path, tainted=frozenset({"bin/chromium"}))
    seen = DOM_ASSERTION.collect(settings, context)
    assert seen.observed is None
    assert (
        seen.why_not
        == "the browser bin/chromium was written by the agent and no person accepted it"
    )
    assert not (tmp_path / "ran").exists()


@pytest.mark.parametrize("url", ["file:///etc/passwd", "javascript:alert(1)", "ftp://host/x"])
def test_only_http_pages_are_read(url: str, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="should match pattern"):
        DomAssertionSettings.model_validate(
            {
                "check_type": "x-dom_assertion",
                "url": url,
                "selector": "a",
                "expected": {"present": True},
            }
        )


def test_a_browser_that_outlives_its_own_timeouts_is_left_behind_at_the_deadline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from donegate.checks import dom_assertion
    from donegate.checks.dom_assertion import _page

    hung = threading.Event()

    def never_returns(*_: object) -> object:
        hung.wait(10)  # a driver that does not answer; released when the test ends
        return None

    fake = tmp_path / "chromium"
    fake.write_text("#!/bin/sh\n")
    os.chmod(fake, 0o755)
    monkeypatch.setattr(_page, "read", never_returns)
    monkeypatch.setattr(dom_assertion, "WATCH_GRACE_S", 0.1)
    settings = DomAssertionSettings.model_validate(
        {
            "check_type": "x-dom_assertion",
            "url": "http://127.0.0.1:9/",
            "selector": "#name",
            "expected": {"present": True},
            "browser": str(fake),
            "timeout_s": 0.3,
        }
    )
    started = time.monotonic()
    try:
        seen = DOM_ASSERTION.collect(settings, CheckContext(tmp_path))
    finally:
        hung.set()
    assert time.monotonic() - started < 2
    assert seen.observed is None
    assert seen.why_not == (
        "deadline: the page did not finish within its deadline of 0.3 s; the page was not read"
    )
