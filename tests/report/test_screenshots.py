"""Screenshots on receipt pages: found by hash, embedded only while the bytes still match, and
every string around them escaped like the rest of the report."""

from __future__ import annotations

import base64
import struct
import zlib
from pathlib import Path
from typing import Any

from donegate.checks.dom_assertion.screenshots import keep
from donegate.ledger import Receipt
from donegate.report.build import render
from donegate.report.screenshots import gather, references, shown

HOSTILE = "<script>window.__pwned=1</script>"


def _png(width: int = 3, height: int = 2) -> bytes:
    """A real, tiny PNG (grey pixels)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    rows = b"".join(b"\x00" + b"\x80" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


def _item(sha256: str, *, verifier: str = "donegate/0.1.0", kind: str = "independent") -> Any:
    return {
        "check_type": "x-dom_assertion",
        "target": "http://127.0.0.1/settings #name",
        "expected": {"text": "a"},
        "at": "2026-08-27T18:04:09Z",
        "covers": [],
        "verifier": {"id": verifier, "kind": kind},
        "detail": {"check": f"page {HOSTILE}", "screenshot": {"sha256": sha256}},
    }


def _receipt(rid: int, *items: Any) -> Receipt:
    return Receipt(
        id=rid,
        session_id="s",
        host="claude-code",
        workspace="/srv/web",
        created_at=f"2026-08-27T18:0{rid}:00.000000Z",
        verdict="verified",
        decision="allow",
        reason=None,
        claim={"spec_version": "0.1", "evidence": list(items)},
        decision_doc={},
    )


def test_only_donegates_own_evidence_is_looked_at() -> None:
    claim = {
        "evidence": [
            _item("a" * 64),
            _item("b" * 64, kind="absent"),
            _item("c" * 64, kind="self_attested"),  # what a forged donegate id becomes
            _item("d" * 64, verifier="agent/1"),
            {"check_type": "test_run", "detail": "not a table"},
            "not an item",
        ]
    }
    assert [r.sha256 for r in references(claim)] == ["a" * 64, "b" * 64]


def test_a_kept_screenshot_is_embedded_and_its_label_escaped(tmp_path: Path) -> None:
    png = _png()
    sha256 = str(keep(png, tmp_path)["sha256"])
    receipt = _receipt(1, _item(sha256))
    markup = shown(receipt.claim, gather([receipt], [tmp_path]))
    assert f"src='data:image/png;base64,{base64.b64encode(png).decode()}'" in markup
    assert HOSTILE not in markup
    assert "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in markup


def test_a_replaced_file_or_a_hostile_name_is_not_shown(tmp_path: Path) -> None:
    sha256 = str(keep(_png(), tmp_path)["sha256"])
    (tmp_path / "screenshots" / f"{sha256}.png").write_bytes(_png(5, 5))  # not what was seen
    receipt = _receipt(1, _item(sha256), _item(f"../../{HOSTILE}"))
    markup = shown(receipt.claim, gather([receipt], [tmp_path]))
    assert "<img" not in markup
    assert markup.count("was not found") == 2
    assert HOSTILE not in markup


def test_past_the_budget_a_screenshot_is_linked_not_embedded(tmp_path: Path) -> None:
    newer, older = _png(4, 4), _png(6, 6)
    new_sha, old_sha = (str(keep(p, tmp_path)["sha256"]) for p in (newer, older))
    receipts = [_receipt(1, _item(old_sha)), _receipt(2, _item(new_sha))]
    shots = gather(receipts, [tmp_path], budget=len(newer) + len(older) - 1)
    assert shots[new_sha].png == newer  # the newest receipt's comes first
    assert shots[old_sha].png is None
    linked = shown(receipts[0].claim, shots)
    assert "<img" not in linked
    assert f"href='{(tmp_path / 'screenshots' / f'{old_sha}.png').as_uri()}'" in linked


def test_the_receipt_page_holds_the_screenshot(tmp_path: Path) -> None:
    png = _png()
    sha256 = str(keep(png, tmp_path)["sha256"])
    page, _ = render([_receipt(1, _item(sha256))], None, "ledger", state_dirs=[tmp_path])
    start = page.index("<section class='receipt' id='receipt-1'>")
    section = page[start : page.index("</section>", start)]
    assert "<h3>Screenshots</h3><figure class='screenshot'><img alt=" in section
    assert base64.b64encode(png).decode() in section
    without, _ = render([_receipt(1, _item(sha256))], None, "ledger")  # nowhere to look
    assert "<img" not in without
    assert "was not found" in without
