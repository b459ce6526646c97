"""Screenshots a check kept with its receipt, shown on the receipt's page.

donegate's ``x-dom_assertion`` evidence names a screenshot by its SHA-256 (see
:mod:`donegate.checks.dom_assertion.screenshots`). The report looks for the file in the state
directories it is given and embeds it as a ``data:`` URI, so the page still opens offline and
fetches nothing; only bytes that still hash to the name are shown. Evidence that only claims to be
donegate's (relabelled ``self_attested`` when collected) is not looked at. Past a budget of
embedded bytes, a screenshot is linked to instead of embedded.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from donegate.checks.dom_assertion.screenshots import find, relative_name
from donegate.ledger import Receipt
from donegate.report.markup import Markup, html, join

MAX_EMBEDDED_BYTES = 32 * 1024 * 1024
"""The most screenshot bytes one report embeds; older receipts' screenshots are linked."""


@dataclass(frozen=True, slots=True)
class Reference:
    """One screenshot an evidence item names: the check's label and the image's hash."""

    check: str
    sha256: str


@dataclass(frozen=True, slots=True)
class Shot:
    """A screenshot as found: its file, and its bytes when embedded (None: linked only)."""

    path: Path
    png: bytes | None


def references(claim: Mapping[str, Any]) -> list[Reference]:
    """The screenshots named by donegate's own evidence in a claim document."""
    evidence = claim.get("evidence")
    found: list[Reference] = []
    for item in evidence if isinstance(evidence, list) else []:
        if not isinstance(item, dict) or not _donegates(item.get("verifier")):
            continue
        detail = item.get("detail")
        shot = detail.get("screenshot") if isinstance(detail, dict) else None
        sha256 = shot.get("sha256") if isinstance(shot, dict) else None
        if isinstance(sha256, str):
            label = detail.get("check") if isinstance(detail, dict) else None
            found.append(Reference(str(label or item.get("check_type", "")), sha256))
    return found


def _donegates(verifier: object) -> bool:
    return (
        isinstance(verifier, dict)
        and str(verifier.get("id", "")).startswith("donegate/")
        and verifier.get("kind") in ("independent", "absent")
    )


def gather(
    receipts: Sequence[Receipt], state_dirs: Iterable[Path], budget: int = MAX_EMBEDDED_BYTES
) -> dict[str, Shot]:
    """The screenshots the receipts name that are found, by hash; the newest receipts' are
    embedded first, until ``budget`` bytes are."""
    dirs = list(dict.fromkeys(state_dirs))
    shots: dict[str, Shot] = {}
    newest = sorted(receipts, key=lambda r: (r.created_at, r.id), reverse=True)
    for receipt in newest:
        for ref in references(receipt.claim):
            if ref.sha256 in shots:
                continue
            found = find(ref.sha256, dirs)
            if found is None:
                continue
            path, png = found
            embed = len(png) <= budget
            budget -= len(png) if embed else 0
            shots[ref.sha256] = Shot(path, png if embed else None)
    return shots


def shown(claim: Mapping[str, Any], shots: Mapping[str, Shot]) -> Markup:
    """The screenshots of one receipt's page, or nothing when its evidence names none."""
    refs = references(claim)
    if not refs:
        return Markup()
    figures = [_figure(ref, shots.get(ref.sha256)) for ref in refs]
    return html("<h3>Screenshots</h3>{}", join(figures))


def _figure(ref: Reference, shot: Shot | None) -> Markup:
    if shot is None:
        return html(
            "<p class='screenshot-missing'>{}: screenshot {} was not found (it is kept in the "
            "state directory of the machine that ran the check, as {}).</p>",
            ref.check,
            ref.sha256,
            relative_name(ref.sha256),
        )
    if shot.png is None:
        return html(
            "<p class='screenshot-linked'>{}: <a href='{}'>screenshot {}</a> (not embedded: the "
            "report's budget for screenshots is spent).</p>",
            ref.check,
            shot.path.as_uri(),
            ref.sha256,
        )
    data = base64.b64encode(shot.png).decode("ascii")
    return html(
        "<figure class='screenshot'><img alt='{}' src='data:image/png;base64,{}'>"
        "<figcaption>{}: the page as the check saw it (sha256 {})</figcaption></figure>",
        f"screenshot: {ref.check}",
        data,
        ref.check,
        ref.sha256,
    )
