"""Fuzz every entry point: any input ends as a verdict, a clear error (exit 2 or 4) or, for a
hook, the host's fail-open answer. Never a traceback, never exit 5.

The in-process properties run thousands of mutants cheaply; the subprocess tests then feed a
modest number through the real command (one ``verify --jsonl`` process takes hundreds of lines).
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from donegate import jsontext
from donegate.claim import parse_claim
from donegate.errors import InvalidInput
from donegate.gate import Gate, GateStore, parse_options
from donegate.gate.facts import parse_facts
from donegate.hooks import ADAPTERS, adapter
from donegate.instant import Instant
from donegate.verdict import VerifyOptions, decide
from tests.claims import claim_doc
from tests.hostile import RAW_VALUES, mutants

CASES = Path(__file__).parent / "conformance" / "cases"
HOOK_FIXTURES = Path(__file__).parent / "hooks" / "fixtures"
NOW = Instant.parse("2026-08-27T18:04:10Z")
GATE_REQUEST: dict[str, Any] = {
    "facts": {
        "consecutive_failed_after_write": 1,
        "writes": [{"path": "src/a.py", "diff": "+x", "kind": "source"}],
        "verify": [{"ok": False, "findings": "E1", "command": "pytest"}],
        "requires_write": True,
    },
    "options": {"max_vetoes": 3, "max_strict_vetoes": 5, "escalation_threshold": 2},
}


def real_claims() -> list[Any]:
    docs = [claim_doc()]
    for case in sorted(CASES.iterdir()):
        try:
            docs.append(json.loads((case / "claim.json").read_text()))
        except (OSError, ValueError, RecursionError):
            continue  # a case whose document is itself broken JSON
    return docs[:12]


def hook_payloads(host: str) -> list[Any]:
    """The payloads captured from ``host``'s real program (``fixtures/HOST/``, or its newest
    version folder there), else its newest hand-made folder (``fixtures/HOST-VERSION/``)."""
    real = HOOK_FIXTURES / host
    if real.is_dir():
        versions = sorted(d for d in real.iterdir() if d.is_dir())
        folder = versions[-1] if versions else real
    else:
        folder = [d for d in sorted(HOOK_FIXTURES.iterdir()) if d.name.startswith(host + "-")][-1]
    # Copilot's own config.json (with its comment lines) sits beside its payloads.
    files = [p for p in sorted(folder.glob("*.json")) if p.name != "config.json"]
    payloads = [json.loads(p.read_text()) for p in files]
    assert payloads, f"no payloads for {host} in {folder}"
    return payloads


# --- in process: many mutants, cheaply ------------------------------------------------------


def test_claims_parse_or_are_refused_and_always_decide() -> None:
    for doc in real_claims():
        for raw in mutants(doc, 120, seed=len(json.dumps(doc))):
            try:
                claim = parse_claim(raw)
            except InvalidInput:
                continue
            verdict = decide(claim, VerifyOptions(now=NOW))
            verdict.model_dump_json()


def test_gate_requests_decide_or_are_refused(tmp_path: Path) -> None:
    store = GateStore(tmp_path / "gate.sqlite3")
    for index, raw in enumerate(mutants(GATE_REQUEST, 400, seed=7)):
        try:
            request = jsontext.loads(raw, what="stdin")
            if not isinstance(request, dict):
                raise InvalidInput("not an object")
            gate = Gate(parse_options(request.get("options")), store=store)
            gate.decide(f"s{index}", request.get("facts"))
        except InvalidInput:
            continue
    store.close()


@pytest.mark.parametrize("host", sorted(ADAPTERS))
def test_hook_payloads_parse_or_are_refused(host: str) -> None:
    parse = adapter(host).parse
    for payload in hook_payloads(host):
        for raw in mutants(payload, 80, seed=len(host)):
            try:
                event = parse(jsontext.loads(raw, what="payload"))
            except InvalidInput:
                continue
            assert jsontext.clean_text(event.session_id)
            assert jsontext.clean_text(str(event.cwd))


@settings(max_examples=100)
@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
        lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner),
    )
)
def test_any_json_value_as_facts_is_parsed_or_refused(value: Any) -> None:
    try:
        parse_facts(value)
        parse_options(value)
    except InvalidInput:
        pass


def test_json_text_is_read_or_refused() -> None:
    for raw in [*RAW_VALUES, "[" * 300 + "]" * 300]:
        with contextlib.suppress(InvalidInput):
            jsontext.loads(raw, what="x")
    with pytest.raises(InvalidInput, match="nested more than"):
        jsontext.loads("[" * 100_000 + "]" * 100_000, what="x")
    with pytest.raises(InvalidInput, match="nested more than"):
        jsontext.loads("[" * 300 + "]" * 300, what="x")


def test_the_standard_parser_alone_would_have_crashed() -> None:
    """The control: what jsontext.loads guards against is a RecursionError, not a ValueError."""
    with pytest.raises(RecursionError):
        json.loads("[" * 100_000 + "]" * 100_000)


# --- real processes -------------------------------------------------------------------------


def donegate(
    args: list[str], stdin: bytes = b"", cwd: Path | None = None
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "donegate", *args],
        input=stdin,
        capture_output=True,
        cwd=cwd,
        env={**os.environ, "PYTHONUTF8": "0"},
        timeout=120,
        check=False,
    )


def assert_clean(result: subprocess.CompletedProcess[bytes], allowed: set[int]) -> None:
    assert b"Traceback" not in result.stderr, result.stderr.decode(errors="replace")[-2000:]
    assert result.returncode in allowed, (result.returncode, result.stderr[-2000:])


def test_verify_jsonl_answers_every_line(tmp_path: Path) -> None:
    lines = [m for doc in real_claims() for m in mutants(doc, 40, seed=3)]
    lines = [line.replace(b"\n", b" ").replace(b"\r", b" ") for line in lines]
    lines = [line for line in lines if line.strip()]
    batch = tmp_path / "claims.jsonl"
    batch.write_bytes(b"\n".join(lines) + b"\n")
    result = donegate(["verify", "--jsonl", str(batch), "--now", NOW.text])
    assert_clean(result, {4})
    answers = [json.loads(line) for line in result.stdout.splitlines()]
    assert [a["line"] for a in answers] == list(range(1, len(lines) + 1))
    invalid = [a for a in answers if a.get("state") == "invalid"]
    assert invalid, "the mutants include invalid documents"
    assert all(set(a) == {"line", "state", "path", "error"} for a in invalid)
    assert all("verdict" in a for a in answers if a.get("state") != "invalid")


def test_verify_file_and_stdin_end_cleanly(tmp_path: Path) -> None:
    docs = mutants(claim_doc(), 4, seed=11)

    def one(index: int) -> subprocess.CompletedProcess[bytes]:
        if index % 2:
            return donegate(["verify", "-", "--now", NOW.text], stdin=docs[index])
        path = tmp_path / f"c{index}.json"
        path.write_bytes(docs[index])
        return donegate(["verify", str(path), "--json", "--now", NOW.text])

    with ThreadPoolExecutor(4) as pool:
        for result in pool.map(one, range(len(docs))):
            assert_clean(result, {0, 1, 3, 4})


BAD_OPTIONS = [
    ["verify", "--max-skew", "nan", "x.json"],
    ["verify", "--max-skew", "-nan", "x.json"],
    ["verify", "--max-skew", "NaN", "x.json"],
    ["verify", "--max-skew", "inf", "x.json"],
    ["verify", "--max-skew", "1e400", "x.json"],
    ["verify", "--max-skew", "-1", "x.json"],
    ["verify", "--now", "2026-02-30T00:00:00Z", "x.json"],
    ["verify", "--now", "\udcff", "x.json"],
    ["receipts", "--limit", "99999999999999999999"],
    ["receipts", "--limit", "0"],
    ["receipts", "show", "99999999999999999999"],
    ["gate", "decide", "--session", "\udcff"],
    ["gate", "events", "--session", "a\udcffb"],
    ["gate", "counts", "--session", " "],
    ["collect", "--task-id", "t", "--mutation", "nocolon"],
]


def test_options_out_of_range_are_usage_errors(tmp_path: Path) -> None:
    (tmp_path / "x.json").write_text(json.dumps(claim_doc()))
    state = ["--state-dir", str(tmp_path / "st")]

    def one(args: list[str]) -> subprocess.CompletedProcess[bytes]:
        extra = state if args[0] in ("receipts", "gate") else []
        return donegate([*args, *extra], stdin=b"{}", cwd=tmp_path)

    with ThreadPoolExecutor(4) as pool:
        for args, result in zip(BAD_OPTIONS, pool.map(one, BAD_OPTIONS), strict=True):
            assert_clean(result, {2})
            assert b"Error" in result.stderr, args


def test_nan_skew_was_accepted_before(tmp_path: Path) -> None:
    """The control: click's own float range takes "nan" (every comparison with NaN is false)."""
    import click

    nan: Any = "nan"
    assert str(click.FloatRange(min=0).convert(nan, None, None)) == "nan"


def test_bad_places_and_inputs_are_invalid_input(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    policy = tmp_path / "policy.json"
    policy.write_text('{"max_age_s": ' + "9" * 30 + ', "requires": [' * 1 + "]}")
    deep_policy = tmp_path / "deep.json"
    deep_policy.write_text("[" * 5000 + "]" * 5000)
    (tmp_path / "x.json").write_text(json.dumps(claim_doc()))
    cases: list[tuple[list[str], bytes, set[int]]] = [
        (["gate", "decide", "--session", "s", "--state-dir", str(blocker / "sub")], b"{}", {4}),
        (["gate", "events", "--session", "s", "--state-dir", str(blocker / "sub")], b"", {4}),
        (["receipts", "--state-dir", str(blocker / "sub")], b"", {4}),
        (["gate", "decide", "--session", "s", "--state-dir", "st"], b"[" * 10**5, {4}),
        (["gate", "decide", "--session", "s", "--state-dir", "st"], b"\xff\xfe", {4}),
        (["gate", "decide", "--session", "s", "--state-dir", "st"], b'{"facts": NaN}', {4}),
        (["verify", "--policy", str(policy), "x.json", "--now", NOW.text], b"", {0}),
        (["verify", "--policy", str(deep_policy), "x.json"], b"", {4}),
        (["init", "claude-code", "--root", str(blocker / "sub")], b"", {2, 4}),
        (["collect", "--config", str(tmp_path), "--task-id", "t"], b"", {2, 4}),
        (["collect", "--config", str(deep_policy), "--task-id", "\udcff"], b"", {2, 4}),
        (["schema"], b"", {0}),
    ]

    def one(case: tuple[list[str], bytes, set[int]]) -> subprocess.CompletedProcess[bytes]:
        return donegate(case[0], stdin=case[1], cwd=tmp_path)

    with ThreadPoolExecutor(4) as pool:
        for case, result in zip(cases, pool.map(one, cases), strict=True):
            assert_clean(result, case[2])


def test_gate_decide_on_mutants(tmp_path: Path) -> None:
    requests = mutants(GATE_REQUEST, 10, seed=5)
    requests += [b"[" * 10**5, b"", b"\xed\xa0\x80", json.dumps(GATE_REQUEST).encode()]

    def one(raw: bytes) -> subprocess.CompletedProcess[bytes]:
        args = ["gate", "decide", "--session", "fuzz", "--state-dir", str(tmp_path), "--json"]
        return donegate(args, stdin=raw)

    with ThreadPoolExecutor(4) as pool:
        for result in pool.map(one, requests):
            assert_clean(result, {0, 1, 4})
            if result.returncode in (0, 1):
                json.loads(result.stdout)


@pytest.mark.parametrize("host", sorted(ADAPTERS))
def test_hooks_fail_open_on_any_payload(host: str, tmp_path: Path) -> None:
    payloads = []
    for fixture in hook_payloads(host)[:3]:
        payload = {**fixture, "cwd": str(tmp_path), "workspace_roots": [str(tmp_path)]}
        payloads += mutants(payload, 8, seed=13)
    payloads += [b"[" * 10**5, b"\xff", b'{"session_id": 1, "cwd": 5}']
    payloads.append(
        b'{"session_id": "s", "conversation_id": "s", "cwd": ["x"], "workspace_roots": 7}'
    )
    state = tmp_path / "state"

    def one(raw: bytes) -> subprocess.CompletedProcess[bytes]:
        return donegate(["hook", host, "--state-dir", str(state)], stdin=raw, cwd=tmp_path)

    with ThreadPoolExecutor(4) as pool:
        for result in pool.map(one, payloads):
            assert_clean(result, {0})
            if result.stdout.strip():
                json.loads(result.stdout)


# --- a 128 MB batch: every line answered, memory bounded ------------------------------------

# The batch streams: its peak (some 26 MB above the bare imports) does not grow with it. Held
# whole, the batch alone would be 32 MB over the bound.
BATCH_MB = 128
BATCH_PEAK_MB = 96  # above the bare imports

_PEAK_TO_FILE = (
    "import resource, subprocess, sys\n"
    "with open(sys.argv[1], 'wb') as out:\n"
    "    done = subprocess.run(sys.argv[2:], stdout=out, stderr=subprocess.PIPE)\n"
    "print(done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    "sys.stderr.write(done.stderr.decode(errors='replace')[-2000:])\n"
)


def peak_mb(out: Path, args: list[str]) -> tuple[int, float, str]:
    """Run ``args`` in a fresh child writing to ``out``: exit code, peak RSS in MB, stderr."""
    done = subprocess.run(
        [sys.executable, "-c", _PEAK_TO_FILE, str(out), *args],
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    code, kilobytes = done.stdout.split()
    return int(code), int(kilobytes) / 1024, done.stderr


def batch_block() -> list[bytes]:
    """Valid claims, their hostile mutants, a large claim and a deep one, one per line."""
    lines = [json.dumps(doc).encode() for doc in real_claims()]
    lines += [m for doc in real_claims() for m in mutants(doc, 40, seed=5)]
    many = [dict(claim_doc()["evidence"][0], target=f"t{i}") for i in range(4000)]
    lines.append(json.dumps(claim_doc(evidence=many)).encode())  # about 1 MB on one line
    lines.append(b'{"spec_version": "0.1", "x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}")
    return [line.replace(b"\n", b" ").replace(b"\r", b" ") for line in lines if line.strip()]


def test_a_128_mb_batch_is_answered_line_by_line_in_bounded_memory(tmp_path: Path) -> None:
    block = b"\n".join(batch_block()) + b"\n"
    lines_per_block = block.count(b"\n")
    batch, answers = tmp_path / "batch.jsonl", tmp_path / "answers.jsonl"
    repeats = BATCH_MB * 1024 * 1024 // len(block) + 1
    with batch.open("wb") as out:
        for _ in range(repeats):
            out.write(block)
    bare = peak_mb(tmp_path / "bare.out", [sys.executable, "-c", "import donegate.cli.app"])[1]
    args = [sys.executable, "-m", "donegate", "verify", "--jsonl", str(batch), "--now", NOW.text]
    code, peak, stderr = peak_mb(answers, args)
    assert code == 4, stderr  # the mutants include invalid lines: exit 4, never 5
    assert "Traceback" not in stderr
    numbers = 0
    with answers.open("rb") as answered:
        for numbers, line in enumerate(answered, start=1):
            assert json.loads(line)["line"] == numbers
    assert numbers == lines_per_block * repeats, "every line answered, in order"
    print(f"{batch.stat().st_size / 1e6:.0f} MB batch: peak {peak - bare:.0f} MB above imports")
    assert peak - bare <= BATCH_PEAK_MB
