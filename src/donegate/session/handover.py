"""What changed while no turn of the agent ran, named to the person it is now credited to.

A change made between turns is taken as the person's: that is what lets a person edit a test and
ask the agent to make it pass without running anything. A process the agent left running can make
such a change too (weaken a test once a stop has let the agent go), and donegate cannot tell its
hand from the person's. So the person is told, at the prompt or session start that credits the
change to them, which of the files that judge the agent changed: tests, files the team protects,
runner configuration, ``donegate.toml`` and the hosts' hook settings. Source files are not
listed: a change there is judged at the next stop anyway, whoever made it.
"""

from __future__ import annotations

from collections.abc import Sequence

from donegate.globs import matches_any
from donegate.session.settings import Settings
from donegate.workspace.runnerfiles import JUDGE_FILES, RUNNER_FILES

FILES_SHOWN = 5


def judging(settings: Settings, changed: Sequence[str]) -> list[str]:
    """The paths of ``changed`` that judge the agent's work."""
    globs = (*settings.rules.test_globs, *settings.protect, *RUNNER_FILES, *JUDGE_FILES)
    return [path for path in changed if matches_any(path, globs)]


def note(settings: Settings, changed: Sequence[str]) -> str | None:
    """What the person is told of the judging files credited to them, if any changed."""
    files = judging(settings, changed)
    if not files:
        return None
    shown = ", ".join(files[:FILES_SHOWN]) + (
        f" and {len(files) - FILES_SHOWN} more" if len(files) > FILES_SHOWN else ""
    )
    return (
        f"donegate: {shown} changed while no turn of the agent was running, and now count as "
        "yours (the agent's work is judged against them). If you did not change them, something "
        "the agent left running did: `git diff` shows the change, and the agent's next stop is "
        "judged against what you put back."
    )
