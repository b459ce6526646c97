"""The numbers of the report, counted from a list of receipts (no drawing, no HTML here)."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from donegate.ledger import Damaged, Receipt
from donegate.report.corrupt import Corrupt, sort_out
from donegate.report.findings import Finding, check_seconds, findings

VERDICTS = ("verified", "unverified", "refuted", "none")
CLAIMED = ("verified", "unverified", "refuted")
UNKNOWN = "(unrecorded)"


@dataclass
class Group:
    """The stops of one repository, machine, agent or session."""

    name: str
    stops: int = 0
    verdicts: Counter[str] = field(default_factory=Counter)
    vetoes: int = 0
    would_block: int = 0
    check_s: float = 0.0
    last_receipt: int = 0

    @property
    def not_verified(self) -> int:
        """Claims of done that were not verified."""
        return self.verdicts["unverified"] + self.verdicts["refuted"]


@dataclass
class WouldBlock:
    """What ``on_unverified = "block"`` would have done where the gate vetoed but let go."""

    stops: int = 0
    sessions: set[str] = field(default_factory=set)
    verified_later: set[str] = field(default_factory=set)
    by_mode: Counter[str] = field(default_factory=Counter)


@dataclass
class Summary:
    """Everything the report shows, counted once."""

    receipts: list[Receipt]
    per_day: dict[str, Counter[str]]
    decisions_per_day: dict[str, Counter[str]]
    claims: int
    not_verified: int
    would_block: WouldBlock
    findings: list[Finding]
    by_workspace: list[Group]
    by_machine: list[Group]
    by_agent: list[Group]
    by_session: list[Group]
    check_s: dict[str, float]
    corrupt: list[Corrupt]

    @property
    def share_not_verified(self) -> float:
        """The share of "done" claims (a stop with writes to verify) that were not verified."""
        return self.not_verified / self.claims if self.claims else 0.0

    def top_findings(self, limit: int = 15) -> list[tuple[str, str, int, list[int]]]:
        """The most frequent (kind, subject) findings: count and the receipts they come from."""
        where: defaultdict[tuple[str, str], list[int]] = defaultdict(list)
        for f in self.findings:
            where[(f.kind, f.subject)].append(f.receipt_id)
        ranked = sorted(where.items(), key=lambda item: (-len(item[1]), item[0]))
        return [(k, s, len(ids), ids) for (k, s), ids in ranked[:limit]]


def summarise(receipts: Sequence[Receipt], damaged: Sequence[Damaged] = ()) -> Summary:
    """Count ``receipts`` (any order); pending ones (stops still running) are left out.

    Corrupt receipts, and the ``damaged`` rows the ledger could not read, are not counted but
    listed (:mod:`.corrupt`).
    """
    good, corrupt = sort_out((r for r in receipts if r.reason != "pending"), damaged)
    done = sorted(good, key=_when)
    per_day: defaultdict[str, Counter[str]] = defaultdict(Counter)
    decisions: defaultdict[str, Counter[str]] = defaultdict(Counter)
    for r in done:
        per_day[r.created_at[:10]][r.verdict] += 1
        decisions[r.created_at[:10]][_decision_label(r)] += 1
    claims = [r for r in done if r.verdict in CLAIMED]
    spent: Counter[str] = Counter()
    per_receipt: dict[int, float] = {}
    for r in done:  # read once: the evidence of 100,000 receipts is most of the work
        seconds = check_seconds(r)
        spent.update(seconds)
        per_receipt[r.id] = sum(seconds.values())
    return Summary(
        receipts=done,
        per_day=dict(sorted(per_day.items())),
        decisions_per_day=dict(sorted(decisions.items())),
        claims=len(claims),
        not_verified=sum(r.verdict != "verified" for r in claims),
        would_block=_would_block(done),
        findings=[f for r in done for f in findings(r)],
        by_workspace=_groups(done, per_receipt, lambda r: r.workspace),
        by_machine=_groups(done, per_receipt, lambda r: r.machine or UNKNOWN),
        by_agent=_groups(done, per_receipt, lambda r: r.host),
        by_session=_groups(done, per_receipt, lambda r: r.session_id),
        check_s=dict(spent.most_common()),
        corrupt=corrupt,
    )


def gate_vetoed(receipt: Receipt) -> bool:
    """The gate said veto (whatever the host was then told)."""
    gate = receipt.decision_doc.get("gate")
    return receipt.decision == "veto" or (isinstance(gate, dict) and gate.get("confirm") is False)


def would_block(receipt: Receipt) -> bool:
    """A stop the gate vetoed that was let go (record/warn): ``block`` would have sent it back."""
    return receipt.decision == "allow" and gate_vetoed(receipt)


def mode_of(receipt: Receipt) -> str:
    """The ``on_unverified`` the stop was recorded under, when the receipt says."""
    mode = receipt.decision_doc.get("on_unverified")
    return mode if isinstance(mode, str) else UNKNOWN


def _decision_label(receipt: Receipt) -> str:
    if receipt.decision == "veto":
        return "sent back"
    return "let go, gate vetoed" if would_block(receipt) else "let go"


def _would_block(done: Sequence[Receipt]) -> WouldBlock:
    result = WouldBlock()
    first_block: dict[str, str] = {}
    for r in done:  # oldest first
        if would_block(r):
            result.stops += 1
            result.by_mode[mode_of(r)] += 1
            result.sessions.add(r.session_id)
            first_block.setdefault(r.session_id, r.created_at)
        elif r.verdict == "verified" and r.created_at > first_block.get(r.session_id, "~"):
            result.verified_later.add(r.session_id)
    return result


def _groups(
    done: Sequence[Receipt], spent: dict[int, float], key: Callable[[Receipt], str]
) -> list[Group]:
    groups: dict[str, Group] = {}
    for r in done:
        name = key(r)
        group = groups.get(name) or groups.setdefault(name, Group(name))
        group.stops += 1
        group.verdicts[r.verdict] += 1
        group.vetoes += r.decision == "veto"
        group.would_block += would_block(r)
        group.check_s += spent[r.id]
        group.last_receipt = max(group.last_receipt, r.id)
    return sorted(groups.values(), key=lambda g: (-g.not_verified, -g.stops, g.name))


def _when(receipt: Receipt) -> tuple[str, int]:
    return receipt.created_at, receipt.id


def as_json(summary: Summary) -> dict[str, Any]:
    """The headline numbers as JSON (for scripts, and for the tests' expectations)."""
    wb = summary.would_block
    return {
        "stops": len(summary.receipts),
        "claims": summary.claims,
        "not_verified": summary.not_verified,
        "corrupt": len(summary.corrupt),
        "would_block": {
            "stops": wb.stops,
            "sessions": len(wb.sessions),
            "verified_later": len(wb.verified_later),
        },
    }
