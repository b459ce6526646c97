"""``--enforce``: the exit code follows the applied policy's ``on_unverified``.

``block`` (the default) gives the verdict's own code. ``warn`` gives 0 and a warning on stderr;
``record`` gives 0 silently. Under ``warn`` and ``record`` a refuted claim is treated like an
unverified one: those modes exist so that a team can watch what comes back before it gates.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from donegate.claim import Verdict
from donegate.exitcodes import ExitCode, for_state


@dataclass(frozen=True, slots=True)
class Enforced:
    """The exit code to use, and a warning to print on stderr (or None)."""

    code: ExitCode
    warning: str | None = None


def enforce(verdict: Verdict, *, enabled: bool = True) -> Enforced:
    """The exit code for ``verdict`` under its applied policy (or the verdict's own when off)."""
    code = for_state(verdict.state)
    if not enabled or verdict.state == "verified":
        return Enforced(code)
    applied = verdict.applied_policy
    mode = applied.on_unverified if applied is not None else "block"
    if mode == "warn":
        reason = f": {verdict.reason}" if verdict.reason else ""
        return Enforced(ExitCode.OK, f"warning: claim {verdict.state}{reason} (on_unverified=warn)")
    if mode == "record":
        return Enforced(ExitCode.OK)
    return Enforced(code)


def exit_code(verdict: Verdict, *, enabled: bool) -> int:
    """:func:`enforce`, printing its warning (if any) on stderr: what ``--enforce`` does."""
    outcome = enforce(verdict, enabled=enabled)
    if outcome.warning is not None:
        print(f"donegate: {outcome.warning}", file=sys.stderr)
    return int(outcome.code)
