"""Old file contents, kept by digest in the state directory (never in the working tree).

Classifying a modification as cosmetic needs the file's old text. Text files up to
:data:`~donegate.workspace.snapshot.KEEP_LIMIT` are kept here when a snapshot first reads them,
unless git's index already holds the same blob; :meth:`BlobStore.text` then looks here first and
in the repository's object database second.
"""

from __future__ import annotations

from pathlib import Path

from donegate.workspace import _git
from donegate.workspace._files import NotRegular, read_capped, write_atomic
from donegate.workspace.snapshot import blob_id

_BINARY_SNIFF = 8192
# Texts larger than this are never loaded to be compared: a write to such a file is never
# cosmetic (it is classified by its path alone), and its diff is not shown. Parsing a text
# costs several times its size; a hook's memory stays bounded whatever the agent writes.
TEXT_LIMIT = 1024 * 1024


def is_text(content: bytes) -> bool:
    """Whether ``content`` looks like text: no NUL byte near the start, valid UTF-8."""
    if b"\0" in content[:_BINARY_SNIFF]:
        return False
    try:
        content.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


class BlobStore:
    """A content-addressed directory of old texts, with git as a second source."""

    def __init__(self, directory: Path, repo: Path | None = None) -> None:
        self.directory = directory
        self.repo = repo

    def _path(self, digest: str) -> Path:
        return self.directory / digest[:2] / digest[2:]

    def keep(self, digest: str, content: bytes) -> None:
        """Store ``content`` under ``digest`` if it is text and not stored yet."""
        path = self._path(digest)
        if is_text(content) and not path.exists():
            write_atomic(path, content)

    def text(self, digest: str | None) -> str | None:
        """The text stored under ``digest``, from here or from git; ``None`` if unknown.

        ``None`` too for a text larger than :data:`TEXT_LIMIT`.
        """
        if digest is None or digest.startswith("unreadable:"):
            return None
        try:
            content = read_capped(self._path(digest), TEXT_LIMIT)
        except (OSError, NotRegular):
            content = _git.blob(self.repo, digest, TEXT_LIMIT) if self.repo is not None else None
        if content is None or not is_text(content) or not _digest_matches(digest, content):
            return None
        return content.decode("utf-8")


def _digest_matches(digest: str, content: bytes) -> bool:
    # A damaged store entry must not pass for the old text (and make an edit look cosmetic).
    fmt = "sha256" if len(digest) == 64 else "sha1"
    return blob_id(fmt, content) == digest
