"""Where donegate keeps session state and receipts: never in the agent's working tree.

Precedence: an explicit directory (``--state-dir``), else ``$DONEGATE_STATE_DIR``, else
``$XDG_STATE_HOME/donegate``, else ``~/.local/state/donegate``.

An agent's sandbox keeps the directory out of its reach: run from inside it, the commands that
record (``donegate hook``, ``donegate accept``) cannot write it. :func:`writable` says so in words
that end with :data:`NOT_RECORDED`, which the host's report of the agent's shell call carries to
the next hook call outside the box. A sandbox may instead hide the directory, giving the command
a ``/tmp`` or a home of its own (Gemini CLI's does): there the command makes a new one, which
vanishes with the sandbox, and says so (:func:`made_here`, ending with :data:`NEW_STATE`).
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

from donegate.errors import InvalidInput

ENV_VAR = "DONEGATE_STATE_DIR"
NOT_RECORDED = "donegate: not recorded"
"""The mark of a recording command that could not write the state directory (see the docstring)."""
NEW_STATE = "donegate: new state directory"
"""The mark of a recording command that made the state directory (see the docstring)."""
_UNWRITABLE = (errno.EROFS, errno.EACCES, errno.EPERM)


class Unwritable(InvalidInput):
    """The state directory exists, or would, but cannot be written from here: inside an agent's
    sandbox, it lies outside the places the sandbox lets a command write."""

    def __init__(self, path: Path, why: str) -> None:
        super().__init__(
            f"donegate's state directory {path} cannot be written here ({why}): nothing was "
            "recorded. Run from inside an agent's sandbox, donegate hook and donegate accept "
            f"record nothing; accepting is the person's act, outside it ({NOT_RECORDED})."
        )


def resolve(explicit: str | Path | None = None) -> Path:
    """The state directory to use (not created)."""
    if explicit:
        return Path(explicit).expanduser()
    from_env = os.environ.get(ENV_VAR)
    if from_env:
        return Path(from_env).expanduser()
    xdg = os.environ.get("XDG_STATE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".local" / "state"
    return base / "donegate"


def ensure(explicit: str | Path | None = None) -> Path:
    """The state directory, created (private to the user) if it does not exist.

    A directory that cannot be made or is not one (a file on the way, no permission, a read-only
    or full file system) is :class:`InvalidInput` naming the path and the cause.
    """
    path = resolve(explicit)
    try:
        path.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError as exc:
        if exc.errno in _UNWRITABLE:
            raise Unwritable(path, _why(exc)) from None
        raise InvalidInput(
            f"state directory {path} cannot be used: {exc.strerror or exc}"
        ) from None
    except ValueError as exc:  # a NUL in the path
        raise InvalidInput(f"state directory {path!r} cannot be used: {exc}") from None
    if not path.is_dir():
        raise InvalidInput(f"state directory {path} cannot be used: not a directory")
    return path


def writable(explicit: str | Path | None = None) -> Path:
    """The state directory, created, for a command that records in it: :class:`Unwritable` when
    no file can be made in it from here.

    Tried by making one, not asked of ``access(2)``: a sandbox may refuse a write that the mount
    and the permissions allow (Landlock, seccomp).
    """
    path = ensure(explicit)
    probe = path / f".writable-{os.getpid()}"
    try:
        os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except FileExistsError:  # a probe of a killed process of the same pid: it could be made
        pass
    except OSError as exc:
        raise Unwritable(path, _why(exc)) from None
    os.unlink(probe)
    return path


def absent(explicit: str | Path | None = None) -> bool:
    """Whether the state directory is missing: a recording command about to make it says so."""
    return not os.path.lexists(resolve(explicit))


def made_here(path: Path) -> str:
    """What a recording command that made the state directory at ``path`` says."""
    return (
        f"donegate made its state directory {path}, where there was none: a first run, or a run "
        "inside an agent's sandbox that hides the real one, whose records vanish with the "
        f"sandbox ({NEW_STATE})."
    )


# What stops the write, in words no host reads as its own sandbox's refusal. Gemini CLI reads
# "read-only file system", "permission denied" or "operation not permitted" in a failed shell
# call's output as its sandbox refusing the path named, asks the person to let the agent's
# commands write there (donegate's state, here), and a headless run ends on the question,
# without its stop hook.
_CAUSES = {
    errno.EROFS: "its file system is mounted read-only from here",
    errno.EACCES: "its permissions do not let this process write it",
    errno.EPERM: "a rule of this process's confinement refuses the write",
}


def _why(exc: OSError) -> str:
    return _CAUSES.get(exc.errno or 0) or exc.strerror or str(exc)
