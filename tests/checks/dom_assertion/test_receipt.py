"""One verified ``x-dom_assertion`` collection, followed where it goes: the claim names the
extension, ``donegate verify`` agrees without knowing the check type, the screenshot is kept, and
the report shows it."""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from donegate.checks.dom_assertion import EXTENSION_URI
from donegate.claim import Claim
from donegate.cli.app import run
from donegate.ledger import Ledger
from tests.checks.dom_assertion.app import NEW_NAME, OLD_NAME, running
from tests.checks.dom_assertion.support import collected, only, settings_url, state, toml
from tests.report.browser import browser_page, chromium_or_skip

EXPECTED = f'{{ present = true, text = "{NEW_NAME}" }}'


@pytest.fixture(scope="module")
def state_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    path = tmp_path_factory.mktemp("dom") / "state"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DONEGATE_STATE_DIR", str(path))
        yield path


@pytest.fixture(scope="module")
def claims(state_dir: Path) -> dict[str, Claim]:
    """The claim collected after the write, and one collected before it (refuted)."""
    chromium_or_skip()
    base = state_dir.parent
    with running() as app:
        before = collected(base / "before", toml(settings_url(app), EXPECTED))
        app.save(NEW_NAME)
        after = collected(base / "after", toml(settings_url(app), EXPECTED))
    return {"verified": after, "refuted": before}


def _document(claim: Claim) -> dict[str, Any]:
    return claim.model_dump(mode="json")


def test_the_collected_claim_names_the_extension(claims: dict[str, Claim]) -> None:
    for claim in claims.values():
        assert _document(claim)["extensions"] == {"x-dom_assertion": EXTENSION_URI}
    assert state(claims["verified"]) == "verified"
    assert state(claims["refuted"]) == "refuted"
    assert only(claims["refuted"])[0].observed_value == {"present": True, "text": OLD_NAME}


@pytest.mark.parametrize("outcome", ["verified", "refuted"])
def test_donegate_verify_reaches_the_same_verdict_without_knowing_the_type(
    claims: dict[str, Claim],
    outcome: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    document = _document(claims[outcome])
    del document["verdict"]
    path = tmp_path / "claim.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    capsys.readouterr()
    code = run(["verify", str(path), "--json"])
    answer = json.loads(capsys.readouterr().out)
    assert code == {"verified": 0, "refuted": 1}[outcome]
    assert answer["verdict"]["state"] == outcome
    assert answer["verdict"]["evidence"][0]["outcome"] == (
        "match" if outcome == "verified" else "contradicts"
    )
    assert answer["extensions"] == {"x-dom_assertion": EXTENSION_URI}


def test_the_screenshot_is_kept_by_its_hash(claims: dict[str, Claim], state_dir: Path) -> None:
    _, detail = only(claims["verified"])
    reference = detail["screenshot"]
    assert isinstance(reference, dict)
    sha256 = reference["sha256"]
    assert reference["file"] == f"screenshots/{sha256}.png"
    png = (state_dir / str(reference["file"])).read_bytes()
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    assert hashlib.sha256(png).hexdigest() == sha256
    assert reference["bytes"] == len(png)


def test_the_report_shows_the_screenshot(
    claims: dict[str, Claim], state_dir: Path, tmp_path: Path
) -> None:
    claim = _document(claims["verified"])
    with Ledger(state_dir) as ledger:
        receipt = ledger.record(
            session_id="s-dom",
            host="claude-code",
            workspace="/srv/repos/web",
            verdict="verified",
            decision="allow",
            reason="verified_after_write",
            claim=claim,
        )
    out = tmp_path / "report.html"
    code = run(["report", "--since", "7d", "--state-dir", str(state_dir), "-o", str(out)])
    assert code == 0
    page = out.read_text(encoding="utf-8")
    reference = only(claims["verified"])[1]["screenshot"]
    assert isinstance(reference, dict)
    png = (state_dir / str(reference["file"])).read_bytes()
    assert f"src='data:image/png;base64,{base64.b64encode(png).decode()}'" in page
    requests: list[str] = []
    with browser_page() as opened:
        browser: Any = opened
        browser.on("request", lambda request: requests.append(request.url))
        browser.goto(out.as_uri())
        browser.locator(f"a[href='#receipt-{receipt}']").first.click()
        image = browser.locator(f"#receipt-{receipt} figure.screenshot img")
        assert image.is_visible()
        # Decoded by the browser at the size the check's viewport had (1280 by 800).
        size = image.evaluate("i => [i.naturalWidth, i.naturalHeight]")
        assert size == [1280, 800]
        assert "display name on the settings page" in image.get_attribute("alt")
    assert all(url.startswith(("file:", "data:")) for url in requests), requests
