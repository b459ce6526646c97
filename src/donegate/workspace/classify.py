"""What kind of write a write is: ``source``, ``cosmetic``, ``test``, ``doc`` or ``config``.

The order of the questions is the order of :func:`classify`: tests first (a test edited to pass
is the commonest cheat, so it is never hidden as anything milder), then configuration, then
documentation, then whether a source edit is only cosmetic. Anything unsure is ``source``.

Some files change how tests are collected or how Python starts (``conftest.py``,
``sitecustomize.py``, ``*.pth``): :func:`flags` names them so that the gate can report them
whatever their kind.
"""

from __future__ import annotations

from donegate.globs import matches_any
from donegate.record import Record
from donegate.workspace.runnerfiles import RUNNER_FILES
from donegate.workspace.writes import Write

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Literal

    WriteKind = Literal["source", "cosmetic", "test", "doc", "config"]
else:
    WriteKind = str  # a Literal for the type checker; its values are str at run time

# Kinds that a green check run must come after; cosmetic and doc writes do not reopen it.
NEEDS_VERIFYING: frozenset[WriteKind] = frozenset({"source", "test", "config"})

DEFAULT_TEST_GLOBS: tuple[str, ...] = (
    "tests/**",
    "test/**",
    "testing/**",
    "**/tests/**",
    "test_*.py",
    "*_test.py",
    "*_tests.py",
    "conftest.py",
    "*_test.go",
    "*.test.js",
    "*.test.ts",
    "*.test.jsx",
    "*.test.tsx",
    "*.spec.js",
    "*.spec.ts",
    "__tests__/",
)
# Markup written for people. Plain text is not here: programs read .txt files as data, and a
# data file written after a green run must reopen it (a team names its own in [gate] doc_paths).
DEFAULT_DOC_GLOBS: tuple[str, ...] = (
    "*.md",
    "*.markdown",
    "*.rst",
    "*.adoc",
    "*.asciidoc",
    "*.org",
    "LICENSE",
    "LICENSE.*",
    "COPYING",
    "AUTHORS",
    "NOTICE",
)
DEFAULT_CONFIG_GLOBS: tuple[str, ...] = (
    "*.toml",
    "*.ini",
    "*.cfg",
    "*.conf",
    "*.yaml",
    "*.yml",
    "*.json",
    "*.lock",
    "Makefile",
    "*.mk",
    "Dockerfile",
    "*.dockerfile",
    "requirements*.txt",
    "constraints*.txt",
    ".env",
    ".gitignore",
    ".gitattributes",
    ".editorconfig",
    ".pre-commit-config.yaml",
    "setup.py",
    "noxfile.py",
)
# Files that can make tests pass without the code under test changing (cheating pattern 2).
HOOK_FILES: tuple[str, ...] = RUNNER_FILES


class Rules(Record):
    """Path globs (see :mod:`donegate.globs`) for the path-decided kinds."""

    test_globs: tuple[str, ...] = DEFAULT_TEST_GLOBS
    doc_globs: tuple[str, ...] = DEFAULT_DOC_GLOBS
    config_globs: tuple[str, ...] = DEFAULT_CONFIG_GLOBS


class ClassifiedWrite(Record):
    """A write with its kind and any flags (``"test-hook"``: see :func:`flags`)."""

    write: Write
    kind: WriteKind
    flags: tuple[str, ...] = ()

    @property
    def needs_verifying(self) -> bool:
        """Whether this write reopens verification."""
        return self.kind in NEEDS_VERIFYING


DEFAULT_RULES = Rules()


def classify(
    write: Write, old_text: str | None, new_text: str | None, rules: Rules = DEFAULT_RULES
) -> WriteKind:
    """The kind of ``write``, given the file's text before and after (``None``: not known).

    1. A path (or a rename's old path) matching a test glob is ``test``.
    2. One matching a config glob is ``config`` (config can change what tests run).
    3. One matching a doc glob is ``doc``.
    4. A modification whose old and new texts differ only in comments and whitespace is
       ``cosmetic`` (a docstring is code: ``__doc__`` is read at runtime).
    5. Anything else, including a text we could not read, is ``source``.
    """
    paths = [write.path] if write.old_path is None else [write.path, write.old_path]
    by_path: tuple[tuple[WriteKind, tuple[str, ...]], ...] = (
        ("test", rules.test_globs),
        ("config", rules.config_globs),
        ("doc", rules.doc_globs),
    )
    for kind, globs in by_path:
        if any(matches_any(p, globs) for p in paths):
            return kind
    if write.change == "modified" and old_text is not None and new_text is not None:
        # Imported here: parsing (ast, pygments) is only needed when an edit must be compared.
        from donegate.workspace import cosmetic

        return "cosmetic" if cosmetic.equivalent(write.path, old_text, new_text) else "source"
    return "source"


def flags(write: Write) -> tuple[str, ...]:
    """Warnings about ``write`` beyond its kind.

    ``test-hook``: a file that steers the test runner (see
    :data:`~donegate.workspace.runnerfiles.RUNNER_FILES`). From the digest a snapshot recorded:
    ``symlink-outside`` (a symlink whose target is not otherwise seen: its content is in the
    digest), ``unverifiable`` (a symlinked directory too large to read through: the stop cannot
    verify) and ``special-file`` (a FIFO, socket or device, never opened).
    """
    paths = [write.path] if write.old_path is None else [write.path, write.old_path]
    found = ["test-hook"] if any(matches_any(p, RUNNER_FILES) for p in paths) else []
    digest = write.new_digest or ""
    for prefix, flag in _DIGEST_FLAGS:
        if digest.startswith(prefix):
            found.append(flag)
    return tuple(found)


_DIGEST_FLAGS = (
    ("link:", "symlink-outside"),
    ("unverifiable:", "unverifiable"),
    ("special:", "special-file"),
)
