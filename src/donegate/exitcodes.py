"""Exit codes: a documented contract, decided here and nowhere else.

===  ==========================================================
 0   verified (``verify``, ``collect``); allow (``gate decide``)
 1   refuted (``verify``, ``collect``); veto (``gate decide``)
 2   usage error: unknown option, missing argument
 3   unverified: evidence missing, stale, self-attested only
 4   invalid input: the claim, policy, config or facts were rejected
 5   internal error: donegate failed; no verdict was printed
141  output closed: the reader of standard output went away (| head)
===  ==========================================================

141 is 128 + SIGPIPE, what a shell reports for ``cat`` when ``head`` stops reading: the output
stops where it was cut, nothing more is said, and the code claims no verdict (an answer not
read may have been any), nor a failure of donegate's own.
"""

from __future__ import annotations

from enum import IntEnum
from typing import Literal


class ExitCode(IntEnum):
    OK = 0
    VERIFIED = 0
    ALLOW = 0
    REFUTED = 1
    VETO = 1
    USAGE = 2
    UNVERIFIED = 3
    INVALID_INPUT = 4
    INTERNAL = 5
    OUTPUT_CLOSED = 141


VerdictState = Literal["verified", "unverified", "refuted"]

_BY_STATE: dict[str, ExitCode] = {
    "verified": ExitCode.VERIFIED,
    "refuted": ExitCode.REFUTED,
    "unverified": ExitCode.UNVERIFIED,
}


def for_state(state: VerdictState) -> ExitCode:
    """The exit code of a verdict state; anything unknown is unverified (fail closed)."""
    return _BY_STATE.get(state, ExitCode.UNVERIFIED)


HELP_TABLE = (
    "Exit codes: 0 verified, 1 refuted, 3 unverified, 4 invalid input, 2 usage error, "
    "5 internal error (no verdict printed)."
)
