"""A realistic week of receipts: three repositories, three machines, two agents, every verdict.

The outcomes are scripted so that the expected numbers can be counted by hand (see EXPECTED):
each session is a row below, each letter one stop in order.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any, NamedTuple

from donegate.ledger import Ledger

API, WEB, INFRA = "/srv/repos/api", "/srv/repos/web", "/srv/repos/infra"


class Stop(NamedTuple):
    """One scripted stop: verdict letter and what its evidence found."""

    verdict: str  # V verified, U unverified, R refuted, N none, E donegate_error, I interrupted
    failing: tuple[str, ...] = ()
    why: str | None = None
    protected: str | None = None


class Session(NamedTuple):
    name: str
    workspace: str
    machine: str
    agent: str
    mode: str
    day: int
    stops: tuple[Stop, ...]


TIMEOUT = "timed out after 900 s; the process group was killed"
TAMPER = (
    "exit status 0, but the report lists 2 failed and 0 errors: something rewrote the exit status"
)
PROTECTED = "mutation m1 wrote 'tests/test_api.py', which matches the protected pattern 'tests/**'"

SESSIONS = (
    Session(
        "s01-alice-login",
        API,
        "dev-alice",
        "claude-code",
        "record",
        0,
        (Stop("U", ("tests/test_auth.py::test_login",)), Stop("V")),
    ),
    Session(
        "s02-alice-api",
        API,
        "dev-alice",
        "claude-code",
        "record",
        1,
        (Stop("R", why=PROTECTED, protected="tests/test_api.py"),),
    ),
    Session(
        "s03-bob-web",
        WEB,
        "dev-bob",
        "codex",
        "warn",
        1,
        (Stop("U", why=TIMEOUT), Stop("U", why=TIMEOUT), Stop("V")),
    ),
    Session("s04-bob-css", WEB, "dev-bob", "codex", "warn", 2, (Stop("V"),)),
    Session(
        "s05-ci-deploy",
        INFRA,
        "ci-runner-1",
        "claude-code",
        "block",
        2,
        (Stop("U", ("tests/test_deploy.py::test_rollout",)), Stop("V")),
    ),
    Session("s06-ci-docs", INFRA, "ci-runner-1", "claude-code", "record", 3, (Stop("N"),)),
    Session("s07-alice-exit", API, "dev-alice", "codex", "record", 3, (Stop("R", why=TAMPER),)),
    Session("s08-ci-web", WEB, "ci-runner-1", "claude-code", "record", 4, (Stop("V"), Stop("V"))),
    Session(
        "s09-bob-auth",
        API,
        "dev-bob",
        "claude-code",
        "warn",
        5,
        (
            Stop("U", ("tests/test_auth.py::test_login",)),
            Stop("U", ("tests/test_auth.py::test_login", "tests/test_auth.py::test_logout")),
        ),
    ),
    Session(
        "s10-alice-infra",
        INFRA,
        "dev-alice",
        "codex",
        "block",
        6,
        (Stop("R", why=PROTECTED, protected="tests/test_api.py"), Stop("E")),
    ),
    Session("s11-bob-late", WEB, "dev-bob", "claude-code", "record", 6, (Stop("I"),)),
)

EXPECTED: dict[str, Any] = {
    "stops": 18,
    "verdicts": {"verified": 6, "unverified": 8, "refuted": 3, "none": 1},
    "claims": 17,
    "not_verified": 11,
    "would_block": {"stops": 7, "sessions": 5, "verified_later": 2},
    "sent_back": 2,
    "corrupt": 0,
    "top_finding": ("failing test", "tests/test_auth.py::test_login", 3),
}


def fill(ledger: Ledger, now: datetime | None = None) -> list[int]:
    """Record the week (ending ``now``) and one older receipt outside it; the week's ids."""
    now = now or datetime.now(UTC)
    start = (now - timedelta(days=6)).replace(hour=8, minute=0, second=0, microsecond=0)
    ids: list[int] = []
    for session in SESSIONS:
        for i, stop in enumerate(session.stops):
            at = start + timedelta(days=session.day, minutes=35 * i + len(ids))
            ids.append(_record(ledger, session, stop, min(at, now - timedelta(minutes=1))))
    old = Session("s00-old", API, "dev-alice", "claude-code", "record", 0, ())
    _record(ledger, old, Stop("U", ("tests/test_old.py::test_gone",)), now - timedelta(days=10))
    return ids


def _record(ledger: Ledger, session: Session, stop: Stop, at: datetime) -> int:
    verdict, reason, vetoed = _outcome(stop)
    sent_back = vetoed and session.mode == "block"
    return ledger.record(
        session_id=session.name,
        host=session.agent,
        workspace=session.workspace,
        verdict=verdict,
        decision="veto" if sent_back else "allow",
        reason=reason,
        claim=_claim(stop, verdict, at) if stop.verdict in "VURE" else {},
        decision_doc=_decision_doc(session, stop, reason, vetoed, sent_back),
        created_at=at,
        machine=session.machine,
    )


def _outcome(stop: Stop) -> tuple[str, str, bool]:
    return {
        "V": ("verified", "verified_after_write", False),
        "U": ("unverified", "verification_after_write_red", True),
        "R": ("refuted", "verification_after_write_red", True),
        "N": ("none", "no_workspace_write", False),
        "E": ("unverified", "donegate_error", False),
        "I": ("unverified", "interrupted", False),
    }[stop.verdict]


def _claim(stop: Stop, verdict: str, at: datetime) -> dict[str, Any]:
    detail: dict[str, Any] = {"check": "tests", "elapsed_s": 42.5, "duration_s": 41.9}
    if stop.failing:
        detail["failing"] = list(stop.failing)
    if stop.why:
        detail["why_not_counted"] = stop.why
    if stop.protected:
        detail["protected_write"] = stop.protected
    stamp = at.isoformat().replace("+00:00", "Z")
    return {
        "spec_version": "0.1",
        "task": {"id": "stop"},
        "claimed_outcome": "Done: the change is in and the tests pass.",
        "mutations": [{"id": "m1", "kind": "file_write", "target": "src/app.py", "at": stamp}],
        "evidence": [
            {
                "check_type": "test_run",
                "target": "pytest -q",
                "expected": {"exit_code": 0},
                "at": stamp,
                "covers": ["m1"],
                "verifier": {"id": "donegate/collect", "kind": "independent"},
                "detail": detail,
            },
            {
                "check_type": "command",
                "target": "ruff check",
                "expected": {"exit_code": 0},
                "at": stamp,
                "covers": ["m1"],
                "verifier": {"id": "donegate/collect", "kind": "independent"},
                "detail": {"check": "lint", "elapsed_s": 1.5},
            },
        ],
        "verdict": {"state": verdict, "unmet": [], "reason": None, "decided_at": stamp},
    }


def _decision_doc(
    session: Session, stop: Stop, reason: str, vetoed: bool, sent_back: bool
) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "host_event": "Stop",
        "on_unverified": session.mode,
        "answer": {"decision": "block" if sent_back else "allow", "reason": None, "notice": None},
    }
    if stop.verdict in "EI":
        doc["gate"] = None
        doc["error"] = "OSError: disk full" if stop.verdict == "E" else None
        return doc
    doc["gate"] = {
        "confirm": not vetoed,
        "reason": reason,
        "trace": [
            {
                "rule": "no_workspace_write",
                "reason": "no_workspace_write",
                "fired": stop.verdict == "N",
            },
            {"rule": "verifier", "reason": reason, "fired": stop.verdict != "N"},
        ],
    }
    return doc


def one_stop(ledger: Ledger, detail: dict[str, Any], at: datetime | None = None) -> int:
    """One unverified stop outside the week's sessions, its evidence's detail as given: its id."""
    return ledger.record(
        session_id="s-extra",
        host="claude-code",
        workspace="/w",
        verdict="unverified",
        decision="allow",
        reason="verification_after_write_red",
        claim={"evidence": [{"check_type": "test_run", "detail": detail}]},
        created_at=at or datetime.now(UTC) - timedelta(hours=1),
    )
