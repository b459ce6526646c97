"""The checks' own sandbox: a test command run where the agent's leftovers cannot reach it.

The code under test is the agent's. Run as the same user, it could read a file the agent left
outside the tree (in ``/tmp``, in the user's site-packages), write into the real workspace or
donegate's state while the judge runs, or ask a server what the answer is. On Linux with
bubblewrap, a run sees the whole file system read-only but for its own places (the copy it runs
in, its scratch directory, what the team names), a ``/tmp`` and ``/dev/shm`` of its own, build
caches of its own, its own process and network namespaces (no network unless the team names it),
and Python without the user's site-packages.

The caches are the run's own, empty at its start and gone at its end. A cache the run could
write (go's, pip's, under ``~/.cache``) is one where the code under test plants an entry that a
later run reads as the toolchain's own work; one it reads that the agent can write, outside any
run, is the same plant made sooner. So ``~/.cache`` is read-only like the rest of the home, and
the variables that name a cache point into the run's private ``/tmp``, whoever set them. The
price is Go's: a run compiles its packages again each time (measured on Go 1.19, whose standard
library comes prebuilt, `go test` of an edited package went from 0.5 s to 2.9 s, and from 0.9 s
to 7.2 s for one that tests an HTTP server; Go 1.20+ also builds the standard library into the
cache). Go needs its cache writable (a read-only one fails as soon as it misses an entry), so a
cache kept for speed would need a step of donegate's that fills it without running the code
under test, and a copy per run.

Whether the machine can do this is asked once per process, by running donegate's own ``true``
in such a sandbox: never by reading what the command printed, which the code under test writes.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal

from donegate.record import Record

Mode = Literal["auto", "required", "off"]
MODES: tuple[Mode, ...] = ("auto", "required", "off")
BY = "bubblewrap"
_PROBE_TIMEOUT_S = 10.0
# The run's own caches, in its private /tmp; each variable, and where under them it points.
PRIVATE_CACHE = "/tmp/.cache"
_CACHES = {"XDG_CACHE_HOME": "", "GOCACHE": "go-build", "PIP_CACHE_DIR": "pip"}


class Isolation(Record):
    """How a run is to be isolated: ``mode`` (``auto`` isolates where the machine can,
    ``required`` counts no run that is not, ``off`` never isolates), ``network`` (keep the
    machine's network), ``writable`` (more places the run may write, absolute: the
    configuration rejects a relative one, which would be read from wherever the hook runs)."""

    mode: Mode = "auto"
    network: bool = False
    writable: tuple[str, ...] = ()


class Outcome(Record):
    """What isolation a run gets: ``argv`` to start, and ``by`` (the sandbox) or ``why_not``."""

    argv: list[str]
    by: str | None = None
    why_not: str | None = None


def wrap(
    argv: Sequence[str],
    isolation: Isolation,
    writable: Sequence[Path],
    visible: Sequence[Path],
    env: Mapping[str, str],
    cwd: Path,
) -> Outcome:
    """``argv`` as it runs under ``isolation``: writing only to ``writable`` (and its private
    ``/tmp``), seeing of the real ``/tmp`` only ``writable`` and ``visible`` (and where the
    command and this Python live). ``why_not`` when it runs unisolated (``auto`` on a machine
    that cannot, ``off``, or a command that is not there to start). A ``required`` isolation the
    machine cannot give is an Outcome with no argv."""
    if isolation.mode == "off":
        return Outcome(list(argv), why_not="isolation is off in the configuration")
    found = program(argv[0], env.get("PATH"), cwd) if argv else None
    if found is None:  # it cannot start either way: the plain start says why, as ever
        return Outcome(list(argv), why_not="the command was not found")
    bwrap = bubblewrap()
    why_not = _cannot(bwrap)
    if bwrap is None or why_not is not None:
        why = why_not or "bubblewrap (bwrap) is not installed"
        return Outcome([] if isolation.mode == "required" else list(argv), why_not=why)
    places = [*writable, *map(Path, isolation.writable)]
    seen = [*visible, *_homes(found), *map(Path, {sys.prefix, sys.base_prefix})]
    sandbox = _sandbox(bwrap, places, seen, network=isolation.network)
    return Outcome([*sandbox, "--", *argv], by=BY)


def environment(env: dict[str, str]) -> None:
    """What a command run isolated is told of its place: its ``/tmp``, caches of its own in it,
    and no user site."""
    for name in ("TMPDIR", "TEMP", "TMP"):
        if name in env:
            env[name] = "/tmp"
    for name, under in _CACHES.items():
        env[name] = f"{PRIVATE_CACHE}/{under}".rstrip("/")
    # The user's site-packages: a .pth file there runs in every Python that starts.
    env["PYTHONNOUSERSITE"] = "1"


def _sandbox(
    bwrap: str, writable: Sequence[Path], visible: Sequence[Path], *, network: bool
) -> list[str]:
    argv = [bwrap, "--die-with-parent", "--unshare-pid", "--unshare-ipc", "--unshare-uts"]
    if not network:
        argv.append("--unshare-net")
    argv += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    argv += ["--tmpfs", "/tmp", "--tmpfs", "/dev/shm"]
    # Outside /tmp these are seen already; inside it, they are brought back, read-only. One
    # inside a writable place is seen through that place's bind (made after, over it).
    bound = _existing(writable)
    for place in _existing(visible):
        if _under(place, "/tmp") and not any(_under(place, w) for w in bound):
            argv += ["--ro-bind", place, place]
    for place in bound:
        argv += ["--bind", place, place]
    return argv


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def program(name: str, path_env: str | None, cwd: Path) -> str | None:
    """The file ``name`` starts (as ``execvp`` finds it), or None."""
    if os.sep in name:
        found = name if os.path.isabs(name) else os.path.join(cwd, name)
        return found if os.access(found, os.X_OK) and os.path.isfile(found) else None
    for folder in (path_env if path_env is not None else os.defpath).split(os.pathsep):
        candidate = os.path.join(folder or ".", name)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def _homes(program: str) -> list[Path]:
    """Where a program lives: its folder, before and after links, and the virtual environment
    it belongs to (its interpreter and packages)."""
    places = {Path(program).parent, Path(os.path.realpath(program)).parent}
    for folder in list(places):
        for above in (folder, *folder.parents):
            if (above / "pyvenv.cfg").is_file():
                places.add(above)
                break
    return sorted(places)


def _existing(places: Sequence[Path]) -> list[str]:
    """Each writable place once, resolved (bubblewrap binds a path, not a link), if it exists;
    a place inside another is bound after it, so neither hides the other."""
    found: set[str] = set()
    for place in places:
        try:
            resolved = os.path.realpath(place, strict=True)
        except OSError:
            continue
        if os.path.isdir(resolved):
            found.add(resolved)
    return sorted(found, key=lambda p: (p.count(os.sep), p))


def bubblewrap() -> str | None:
    """The ``bwrap`` program on ``PATH``, or None."""
    for folder in os.environ.get("PATH", os.defpath).split(os.pathsep):
        candidate = os.path.join(folder or ".", "bwrap")
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


# Probes started ahead of need (see probe_soon), and the answers, by the bwrap they ask.
_asked: dict[str, subprocess.Popen[bytes] | str] = {}
_answered: dict[str, str | None] = {}


def probe_soon() -> None:
    """Start asking whether the machine can make the sandbox, for a run about to start: the
    answer (some 10 ms of bubblewrap making namespaces) comes while the caller works on. Asked
    once per process: a process that decides many stops starts one probe, and waits for it."""
    bwrap = bubblewrap()
    if bwrap is not None and bwrap not in _asked and bwrap not in _answered:
        _asked[bwrap] = _start_probe(bwrap)


def _cannot(bwrap: str | None) -> str | None:
    """Why this machine cannot make the sandbox (None when it can): asked of bubblewrap itself,
    once per process, with a command of donegate's."""
    if bwrap is None:
        return None
    if bwrap not in _answered:
        _answered[bwrap] = _asked_now(bwrap)
    return _answered[bwrap]


def _asked_now(bwrap: str) -> str | None:
    probe = _asked.pop(bwrap, None) or _start_probe(bwrap)
    if isinstance(probe, str):
        return probe
    try:
        _, err = probe.communicate(timeout=_PROBE_TIMEOUT_S)
    except subprocess.TimeoutExpired as exc:
        probe.kill()
        probe.communicate()
        return f"bubblewrap could not be started: {exc}"
    if probe.returncode != 0:
        said = err.decode("utf-8", "replace").strip().splitlines()
        return "bubblewrap cannot make a sandbox here" + (f": {said[-1]}" if said else "")
    return None


def _start_probe(bwrap: str) -> subprocess.Popen[bytes] | str:
    """bubblewrap started on donegate's own ``true`` in the sandbox, or why it could not be."""
    true = next((p for p in ("/bin/true", "/usr/bin/true") if os.path.exists(p)), None)
    if true is None:
        return "no /bin/true to try the sandbox with"
    argv = [*_sandbox(bwrap, [], [], network=False), "--", true]
    try:
        return subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
    except OSError as exc:
        return f"bubblewrap could not be started: {exc}"
