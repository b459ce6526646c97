"""A stop's writes as a claim: one mutation per write, timed when donegate saw it.

Never by its mtime, which the agent controls. What the host's tool hooks reported rides along
for the record: which tools wrote a file and when they first said so, and the shell commands run
meanwhile. The claim models are imported here, only when a stop has something to verify.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from donegate.session.event import HookEvent
from donegate.timefmt import rfc3339
from donegate.workspace import ClassifiedWrite, Reported

if TYPE_CHECKING:
    from donegate.claim import Claim

MAX_COMMANDS_KEPT = 50
MAX_OUTCOME_CHARS = 4000


def build_claim(
    event: HookEvent, writes: Sequence[ClassifiedWrite], reported: Sequence[Reported]
) -> Claim:
    """The claim of a stop: its writes as mutations, the agent's last words as the outcome."""
    from donegate.claim import parse_claim

    mutations = records(writes, reported)
    commands = [r.command for r in reported if r.command][-MAX_COMMANDS_KEPT:]
    return parse_claim(
        {
            "spec_version": "0.1",
            "task": {"id": event.session_id, "requested_by": event.host},
            "claimed_outcome": (event.last_message or "(the agent said nothing)")[
                :MAX_OUTCOME_CHARS
            ],
            "mutations": mutations,
            **({"shell_commands": commands} if commands else {}),
        }
    )


def records(
    writes: Sequence[ClassifiedWrite], reported: Sequence[Reported] = ()
) -> list[dict[str, Any]]:
    """The claim's mutations, as plain data (the claim models not loaded): ids ``w1``, ``w2``..."""
    mutations: list[dict[str, Any]] = []
    for w in writes:
        mutations.extend(_mutations(len(mutations), w, reported))
    return mutations


def _mutations(
    count: int, w: ClassifiedWrite, reported: Sequence[Reported]
) -> list[dict[str, Any]]:
    """One mutation per path a write touched: a rename is also the deletion of its old path.

    Every collector then sees both paths as written, so moving a protected test out of the
    protected directory is a write to the protected path.
    """
    at = rfc3339(w.write.observed_at)
    mutation: dict[str, Any] = {
        "id": f"w{count + 1}",
        "kind": f"file_{w.write.change}",
        "target": w.write.path,
        "at": at,
        "write_kind": w.kind,
    }
    if w.flags:
        mutation["flags"] = list(w.flags)
    mine = [r for r in reported if r.path == w.write.path]
    if mine:
        mutation["reported_by"] = sorted({r.tool for r in mine})
        mutation["first_reported_at"] = rfc3339(min(r.at for r in mine))
    if w.write.old_path is None:
        return [mutation]
    mutation["renamed_from"] = w.write.old_path
    away = {
        "id": f"w{count + 2}",
        "kind": "file_deleted",
        "target": w.write.old_path,
        "at": at,
        "write_kind": w.kind,
        "renamed_to": w.write.path,
    }
    return [mutation, away]
