"""Collecting an ``x-dom_assertion`` check from a ``donegate.toml`` the way a team writes one."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from donegate.claim import Claim, Evidence, parse_claim
from donegate.collect import collect
from donegate.config import load_config
from donegate.instant import Instant
from tests.checks.dom_assertion.app import App


def toml(url: str, expected: str, *, selector: str = "#display-name", more: str = "") -> str:
    """One ``[[checks]]`` table of the extension, as a team's file holds it."""
    return textwrap.dedent(
        f"""
        [[checks]]
        check_type = "x-dom_assertion"
        name = "display name on the settings page"
        url = {json.dumps(url)}
        selector = {json.dumps(selector)}
        expected = {expected}
        """
    ) + textwrap.dedent(more or _GENEROUS)


# Room for a browser started on a loaded machine (CI runs tests side by side): a test of the
# deadline itself sets its own.
_GENEROUS = "timeout_s = 60\n"


def claim_of_write(at: Instant) -> Claim:
    """The agent's claim: it changed the display name, at ``at``."""
    return parse_claim(
        {
            "spec_version": "0.1",
            "task": {"id": "rename-4471", "description": "Change the display name"},
            "claimed_outcome": "Changed the display name to Grace Hopper.",
            "mutations": [
                {
                    "id": "m1",
                    "kind": "state_write",
                    "target": "settings/display_name",
                    "at": at.text,
                }
            ],
        }
    )


def collected(base: Path, config_text: str, at: Instant | None = None) -> Claim:
    """The claim of a write made ``at`` (default: now), collected with ``config_text`` written
    to ``base/donegate.toml``."""
    base.mkdir(parents=True, exist_ok=True)
    (base / "donegate.toml").write_text(config_text, encoding="utf-8")
    return collect(claim_of_write(at or Instant.now()), load_config(base / "donegate.toml"))


def only(claim: Claim) -> tuple[Evidence, dict[str, object]]:
    """The one evidence item and its detail."""
    assert len(claim.evidence) == 1
    item = claim.evidence[0]
    detail = (item.model_extra or {})["detail"]
    assert isinstance(detail, dict)
    return item, detail


def state(claim: Claim) -> str:
    """The verdict's state."""
    assert claim.verdict is not None
    return claim.verdict.state


def settings_url(app: App) -> str:
    """The page that shows the display name."""
    return f"{app.url}/settings"
