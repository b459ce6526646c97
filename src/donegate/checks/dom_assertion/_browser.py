"""Which Chromium runs the check: the configured one, else the system's. Never a browser that
Playwright downloads: a check that finds none is absent, and says what to install."""

from __future__ import annotations

import importlib.util
import os
import shutil
from pathlib import Path

from donegate.checks.base import CheckContext

ON_PATH = ("chromium", "chromium-browser", "google-chrome")
INSTALL = (
    "install Chromium from the system's packages (apt-get install chromium) or set "
    "browser = '/path/to/chromium' in the check"
)


def missing_library() -> str | None:
    """Why the check cannot drive a browser from Python, or None when it can."""
    if importlib.util.find_spec("playwright") is None:
        return "Playwright is not installed: pip install 'donegate[browser]'"
    return None


def executable(configured: str | None, context: CheckContext) -> Path | str:
    """The browser's path, or why there is none to use."""
    if configured is None:
        for name in ON_PATH:
            found = shutil.which(name)
            if found is not None:
                return Path(found)
        return f"no Chromium on PATH (looked for {', '.join(ON_PATH)}): {INSTALL}"
    path = context.base_dir / Path(configured).expanduser()
    try:
        relative = path.resolve().relative_to(context.base_dir.resolve()).as_posix()
    except (OSError, ValueError):
        relative = None
    if relative is not None and relative in context.tainted:
        return f"the browser {configured} was written by the agent and no person accepted it"
    if not (path.is_file() and os.access(path, os.X_OK)):
        return f"the configured browser {path} is not an executable file: {INSTALL}"
    return path
