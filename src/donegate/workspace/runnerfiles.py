"""The files that can change what a check runs, said once for the workspace and the checks.

Deliberately light (no imports): the hook path and ``checks.test_run`` both read these lists.
Patterns are gitignore-like (see :mod:`donegate.workspace.patterns`); the ``**/name/**`` shape is
used for directories because both pattern matchers of donegate read it the same way.
"""

from __future__ import annotations

# Files that steer a test runner or the interpreter it runs in: whoever writes one can make a
# run pass without the code under test changing. A write to one is flagged ``test-hook``, and a
# ``test_run`` check over such a write does not count.
RUNNER_FILES: tuple[str, ...] = (
    # pytest and Python start-up
    "conftest.py",
    "pytest.ini",
    ".pytest.ini",
    "tox.ini",
    "setup.cfg",
    "pyproject.toml",
    "sitecustomize.py",
    "usercustomize.py",
    "*.pth",
    # modules that shadow the runner when found first on the import path
    "pytest.py",
    "**/_pytest/**",
    "**/pytest/**",
    "**/pluggy/**",
    # other runners' configuration
    "package.json",
    "vitest.config.*",
    "vite.config.*",
    "jest.config.*",
    "Cargo.toml",
    ".cargo/config",
    ".cargo/config.toml",
    "go.mod",
    "go.work",
)

# The judge's own settings: the team's donegate.toml and the hosts' hook settings, which decide
# whether donegate runs at all. An agent that writes one has edited its judge; until a person
# accepts the content, a test run does not count. Files a host writes itself during a session
# (Claude Code's settings.local.json when a person allows a tool) are left out: that write is
# not the agent's, and it cannot take the project's hooks away.
JUDGE_FILES: tuple[str, ...] = (
    "/donegate.toml",
    "/.claude/settings.json",
    "/.codex/hooks.json",
    "/.gemini/settings.json",
    "/.cursor/hooks.json",
    "/.github/hooks/*.json",
)

# The hosts' other settings that decide which hooks run (Claude Code's and Copilot CLI's local
# settings, Codex's project config, Copilot CLI's repository settings): the hosts and people
# write them for their own ends, so a write is judged by what it says (``session.hooksoff``),
# and no ignore rule may hide one.
HOST_SETTINGS: tuple[str, ...] = (
    "/.claude/settings.local.json",
    "/.codex/config.toml",
    "/.github/copilot/settings.json",
    "/.github/copilot/settings.local.json",
)

# Code an interpreter can load: seen whatever an ignore rule says (see ``WATCHED``).
IMPORTABLE: tuple[str, ...] = ("*.py", "*.pyw", "*.pyc", "*.so", "*.pyd")

# What no ignore rule may hide from a snapshot: runner files, the hosts' settings and importable
# code. The default ignores (``venv/``, ``build/``...) still keep untracked directories of that
# name out of the walk; the interpreter environment is digested on its own.
WATCHED: tuple[str, ...] = (*RUNNER_FILES, *JUDGE_FILES, *HOST_SETTINGS, *IMPORTABLE)
