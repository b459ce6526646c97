"""Building claims and running configured checks in tests."""

from __future__ import annotations

import textwrap
from pathlib import Path

from donegate.claim import Claim, Evidence, parse_claim
from donegate.collect import collect
from donegate.config import Config, parse_config
from donegate.instant import Instant


def claim_with(*targets: str, kind: str = "file_write", at: Instant | None = None) -> Claim:
    """A claim with one mutation per target, timed ``at`` (default: a second ago)."""
    when = at or Instant.now() + -1.0
    mutations = [
        {"id": f"m{i}", "kind": kind, "target": target, "at": when.text}
        for i, target in enumerate(targets, start=1)
    ]
    return parse_claim(
        {
            "spec_version": "0.1",
            "task": {"id": "t-1"},
            "claimed_outcome": "done",
            "mutations": mutations,
        }
    )


def config_from(toml: str, base_dir: Path, environ: dict[str, str] | None = None) -> Config:
    """A configuration from (dedented) TOML text, relative paths starting at ``base_dir``."""
    return parse_config(textwrap.dedent(toml), base_dir=base_dir, environ=environ or {})


def collect_one(toml: str, base_dir: Path, *targets: str) -> Claim:
    """Collect with ``toml`` for a claim of ``targets``; the result carries evidence and verdict."""
    return collect(claim_with(*targets), config_from(toml, base_dir))


def write(root: Path, files: dict[str, str]) -> Path:
    """Write ``files`` (path -> dedented text) under ``root``; return ``root``."""
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root


def only(claim: Claim) -> Evidence:
    """The one evidence item of a claim collected with one check."""
    assert len(claim.evidence) == 1
    return claim.evidence[0]


def detail(item: Evidence) -> dict[str, object]:
    """The collector's ``detail`` extra field of an evidence item."""
    value = (item.model_extra or {})["detail"]
    assert isinstance(value, dict)
    return value


def state(claim: Claim) -> str:
    """The verdict state of a collected claim."""
    assert claim.verdict is not None
    return claim.verdict.state
