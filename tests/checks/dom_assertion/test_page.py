"""``x-dom_assertion`` against a real application on loopback, read by the real Chromium."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from donegate.checks.dom_assertion import WATCH_GRACE_S
from donegate.instant import Instant
from tests.checks.dom_assertion.app import HIJACKED, NEW_NAME, OLD_NAME, App, running
from tests.checks.dom_assertion.support import collected, only, settings_url, state, toml
from tests.report.browser import chromium_or_skip

SHOWS_NEW = (
    f'{{ present = true, text = "{NEW_NAME}", attribute = {{ data-value = "{NEW_NAME}" }} }}'
)


@pytest.fixture(autouse=True)
def state_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Screenshots go to a state directory of the test's own."""
    path = tmp_path / "state"
    monkeypatch.setenv("DONEGATE_STATE_DIR", str(path))
    return path


@pytest.fixture
def app() -> Iterator[App]:
    chromium_or_skip()
    with running() as running_app:
        yield running_app


def test_the_agents_write_shown_on_the_page_verifies(app: App, tmp_path: Path) -> None:
    app.save(NEW_NAME)
    wrote = Instant.now()
    before = len(app.served_at("/settings"))
    done = collected(tmp_path, toml(settings_url(app), SHOWS_NEW), at=wrote)
    item, detail = only(done)
    assert state(done) == "verified"
    assert item.check_type == "x-dom_assertion"
    assert item.verifier.kind == "independent"
    assert item.observed_value == {
        "present": True,
        "text": NEW_NAME,  # "  Grace Hopper  " in the markup, whitespace-normalised
        "attribute": {"data-value": NEW_NAME},
    }
    assert detail["status"] == 200
    assert detail["matched"] == 1
    # Read after the write, and the page was asked for after the evidence's instant: rule 2
    # compares that instant with the write, so it may not be later than the read.
    read = app.served_at("/settings")[before:]
    assert read
    assert item.at > wrote
    assert all(Instant.from_ns(ns) >= item.at for ns in read)
    assert app.writes() == [("POST", "/settings")]  # the agent's own, and only that


def test_the_page_still_showing_the_old_value_refutes(app: App, tmp_path: Path) -> None:
    done = collected(tmp_path, toml(settings_url(app), SHOWS_NEW))  # the write never happened
    item, _ = only(done)
    assert state(done) == "refuted"
    assert item.observed_value == {
        "present": True,
        "text": OLD_NAME,
        "attribute": {"data-value": OLD_NAME},
    }


def test_text_contains_and_count(app: App, tmp_path: Path) -> None:
    app.save(NEW_NAME)
    expected = '{ text_contains = "Hopper", count = 1 }'
    done = collected(tmp_path, toml(settings_url(app), expected))
    assert state(done) == "verified"
    assert only(done)[0].observed_value == {"text_contains": "Hopper", "count": 1}
    expected = '{ count = 2, text_contains = "three" }'
    done = collected(tmp_path, toml(settings_url(app), expected, selector="ul.item"))
    assert state(done) == "refuted"
    assert only(done)[0].observed_value == {"count": 2, "text_contains": "one"}


def test_a_selector_that_matches_nothing_refutes(app: App, tmp_path: Path) -> None:
    app.save(NEW_NAME)
    done = collected(tmp_path, toml(settings_url(app), SHOWS_NEW, selector="#display_name"))
    item, detail = only(done)
    assert state(done) == "refuted"
    assert item.observed_value == {"present": False, "text": None, "attribute": None}
    assert detail["matched"] == 0


def test_page_scripts_that_lie_to_other_scripts_do_not_change_what_is_read(
    app: App, tmp_path: Path
) -> None:
    # The page renders the old name; its scripts make innerText, getAttribute and
    # querySelectorAll answer the new one (or nothing) to any script of the page's world.
    done = collected(tmp_path, toml(f"{app.url}/lying", SHOWS_NEW))
    item, _ = only(done)
    assert state(done) == "refuted"
    assert item.observed_value == {
        "present": True,
        "text": OLD_NAME,
        "attribute": {"data-value": OLD_NAME},
    }


def test_a_page_that_never_answers_is_absent_by_its_deadline(app: App, tmp_path: Path) -> None:
    started = time.monotonic()
    done = collected(tmp_path, toml(f"{app.url}/hang", SHOWS_NEW, more="timeout_s = 6\n"))
    elapsed = time.monotonic() - started
    item, detail = only(done)
    assert state(done) == "unverified"
    assert item.verifier.kind == "absent"
    assert item.observed_value is None
    why = str(detail["why_not_counted"])
    assert why.startswith("deadline: loading http://127.0.0.1:"), why
    assert "/hang did not finish within the check's deadline of 6 s" in why
    assert elapsed < 6 + WATCH_GRACE_S + 3


def test_an_error_status_is_absent_not_a_reading(app: App, tmp_path: Path) -> None:
    # /gone answers 404 with a page holding the selector and the text expected.
    done = collected(tmp_path, toml(f"{app.url}/gone", '{ text = "gone" }'))
    item, detail = only(done)
    assert state(done) == "unverified"
    assert item.verifier.kind == "absent"
    assert "answered HTTP 404: the page was not read" in str(detail["why_not_counted"])


def test_wait_for_that_never_shows_is_absent(app: App, tmp_path: Path) -> None:
    # A deadline long enough for a busy machine to start the browser and load the page.
    more = 'wait_for = "#saved-banner"\ntimeout_s = 8\n'
    done = collected(tmp_path, toml(settings_url(app), SHOWS_NEW, more=more))
    item, detail = only(done)
    assert item.verifier.kind == "absent"
    assert str(detail["why_not_counted"]).startswith("deadline: waiting for '#saved-banner'")


def test_no_browser_on_path_is_absent_and_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    done = collected(tmp_path, toml("http://127.0.0.1:9/settings", SHOWS_NEW))
    item, detail = only(done)
    assert state(done) == "unverified"
    assert item.verifier.kind == "absent"
    assert detail["why_not_counted"] == (
        "no Chromium on PATH (looked for chromium, chromium-browser, google-chrome): install "
        "Chromium from the system's packages (apt-get install chromium) or set "
        "browser = '/path/to/chromium' in the check"
    )


def test_a_configured_browser_that_is_not_there_is_absent(tmp_path: Path) -> None:
    more = 'browser = "bin/chromium"\n'
    done = collected(tmp_path, toml("http://127.0.0.1:9/settings", SHOWS_NEW, more=more))
    _, detail = only(done)
    assert state(done) == "unverified"
    assert f"the configured browser {tmp_path}/bin/chromium is not an executable file" in str(
        detail["why_not_counted"]
    )


def test_a_page_whose_scripts_post_on_load_changes_nothing(app: App, tmp_path: Path) -> None:
    done = collected(tmp_path, toml(f"{app.url}/posting", f'{{ text = "{OLD_NAME}" }}'))
    time.sleep(0.5)  # a write that got through would have landed by now
    item, detail = only(done)
    assert app.name == OLD_NAME
    assert app.writes() == []
    assert state(done) == "verified"  # read, and what it read is the page as served
    blocked = detail["blocked_requests"]
    assert isinstance(blocked, list)
    url = f"{app.url}/settings"
    assert sorted(blocked) == sorted(
        [f"POST {url}", f"POST {url}", f"PUT {url}", f"POST {url}", f"WebSocket ws{url[4:]}"]
    )
    assert item.verifier.kind == "independent"


def test_a_form_submitted_on_load_is_blocked_and_the_read_does_not_count(
    app: App, tmp_path: Path
) -> None:
    done = collected(tmp_path, toml(f"{app.url}/submitting", f'{{ text = "{OLD_NAME}" }}'))
    time.sleep(0.5)
    item, detail = only(done)
    assert app.name == OLD_NAME
    assert HIJACKED not in app.name
    assert app.writes() == []
    # The aborted submit leaves the tab on an error page: what is read there is not the page.
    assert state(done) == "unverified"
    assert item.verifier.kind == "absent"
    assert "went on to load another document (POST " in str(detail["why_not_counted"])
    assert detail["blocked_total"] == 6


def test_a_screenshot_that_cannot_be_kept_leaves_the_observation_standing(
    app: App, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocked = tmp_path / "not-a-directory"
    blocked.write_text("")
    monkeypatch.setenv("DONEGATE_STATE_DIR", str(blocked))
    app.save(NEW_NAME)
    done = collected(tmp_path, toml(settings_url(app), SHOWS_NEW))
    item, detail = only(done)
    assert state(done) == "verified"
    assert item.verifier.kind == "independent"
    assert "screenshot" not in detail
    assert str(detail["screenshot_not_kept"]).startswith(f"state directory {blocked} cannot be")
