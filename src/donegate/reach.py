"""Whether donegate itself lies inside a workspace, where the agent could rewrite its judge.

Everything donegate decides assumes the agent cannot edit donegate: its code, the interpreter
environment it runs in (a ``.pth`` file there runs before donegate does), its state. A project's
own virtualenv is inside the workspace and the agent installs into it at will, so a donegate
installed there can be rewritten by the very agent it judges, and no check of its own can tell
(the rewritten code would simply skip it). This is a matter of installation: :func:`inside`
finds it, ``init`` and ``doctor`` say so, and every stop tells the person until it is fixed.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

FIX = (
    "install donegate outside the repository (pipx install donegate, or uv tool install "
    "donegate), then run `donegate init HOST` again"
)


def inside(root: Path, state_dir: Path | None = None, program: str | None = None) -> list[str]:
    """What of donegate lies inside ``root``: its code, its environment, its state, ``program``."""
    places = {
        "its code": Path(__file__).parent,
        "its Python environment": Path(sys.prefix),
        "its state directory": state_dir,
        "its hook command": Path(program) if program else None,
    }
    top = root.resolve()
    found: list[str] = []
    for what, where in places.items():
        if where is not None and where.resolve().is_relative_to(top):
            found.append(f"{what} ({where})")
    return found


def warning(root: Path, state_dir: Path | None = None, program: str | None = None) -> str | None:
    """One line for the person when donegate lies inside ``root``; None when it does not."""
    found = inside(root, state_dir, program)
    if not found:
        return None
    return (
        f"donegate: the agent can rewrite its own judge here: {'; '.join(found)} "
        f"inside {root}; {FIX}."
    )


def command_risks(command: str, root: Path) -> list[str]:
    """How an installed hook ``command`` could run code of the agent's instead of donegate's."""
    try:
        words = shlex.split(command.removesuffix("|| true"))
    except ValueError:
        return ["it cannot be read as a command line"]
    if not words:
        return ["it is empty"]
    program, risks = words[0], []
    if "/" not in program and program not in RUNNERS:
        risks.append(f"{program} is looked up on PATH at every call, where the agent may put one")
    elif "/" in program and Path(program).expanduser().resolve().is_relative_to(root.resolve()):
        risks.append(f"{program} lies inside the repository")
    if "-m" in words and not {"-E", "-P"} <= set(words[: words.index("-m")]):
        risks.append("python -m without -E -P imports from the agent's tree or PYTHONPATH first")
    return risks


RUNNERS = ("uvx", "pipx")  # a throw-away install named by version (init writes these on purpose)
