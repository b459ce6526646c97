"""A tree that moved after its verified stop: said to the person, and marked on the receipt.

A verified receipt describes the tree as the stop hashed it. A process the agent left running
can put the bug back once the receipt is written, while no turn of the agent is open, and the
next prompt would take the change as the person's. donegate cannot tell the person's hand from
such a job's, so it does not guess: at the next hook call that looks at the workspace, the
changes are named to the person, and the newest receipt of the workspace, if it said
"verified", is marked as no longer describing the tree (its verdict stays what it was).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from donegate.ledger import Ledger
from donegate.timefmt import rfc3339
from donegate.workspace.snapshot import utc_now

FILES_KEPT = 50
FILES_SHOWN = 5


def note(state_dir: Path, root: Path, changed: Sequence[str]) -> str | None:
    """Mark the workspace's newest receipt as drifted if it is verified; what the person is
    told (None when there was no verified receipt to contradict)."""
    if not changed:
        return None
    with Ledger(state_dir) as ledger:
        receipt = ledger.latest(root)
        if receipt is None or receipt.verdict != "verified":
            return None
        drift = {
            "at": rfc3339(utc_now()),
            "files": list(changed[:FILES_KEPT]),
            "count": len(changed),
        }
        if not ledger.mark_drifted(receipt.id, drift):
            return None
    shown = ", ".join(changed[:FILES_SHOWN]) + (
        f" and {len(changed) - FILES_SHOWN} more" if len(changed) > FILES_SHOWN else ""
    )
    return (
        f"donegate: {shown} changed after the stop that verified receipt {receipt.id}, while "
        "no turn of the agent was running. If you did not change them, something the agent "
        f"left running did. Receipt {receipt.id} no longer describes the tree; the next stop "
        "judges only what the agent writes from now on."
    )
