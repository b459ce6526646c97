"""Screenshots kept with receipts: PNG files in the state directory, named by their SHA-256.

The evidence carries only the reference (``{"sha256", "file", "bytes"}``), so it stays small in
the ledger; whoever shows a screenshot finds it by the hash and checks that the bytes still hash
to it, so a file replaced since is never shown as what donegate saw.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import tempfile
from collections.abc import Iterable
from pathlib import Path

from pydantic import JsonValue

from donegate import statedir
from donegate.errors import InvalidInput

DIRECTORY = "screenshots"
MAX_BYTES = 8 * 1024 * 1024
"""The largest screenshot kept (a viewport of at most 3840 by 2160 pixels is far below it)."""
_SHA256 = re.compile(r"^[0-9a-f]{64}$")
_PNG = b"\x89PNG\r\n\x1a\n"


class NotKept(Exception):
    """The screenshot could not be stored; the message says why."""


def relative_name(sha256: str) -> str:
    """Where the screenshot with this hash lives, relative to the state directory."""
    return f"{DIRECTORY}/{sha256}.png"


def keep(png: bytes, state_dir: str | Path | None = None) -> dict[str, JsonValue]:
    """Store ``png`` in the state directory (see :func:`donegate.statedir.resolve`) and return
    its reference; :class:`NotKept` when it is not a PNG, too large, or cannot be written."""
    if not png.startswith(_PNG):
        raise NotKept("the browser's screenshot is not a PNG")
    if len(png) > MAX_BYTES:
        raise NotKept(f"the screenshot is {len(png)} bytes, over the {MAX_BYTES} kept")
    sha256 = hashlib.sha256(png).hexdigest()
    try:
        folder = statedir.ensure(state_dir) / DIRECTORY
        folder.mkdir(mode=0o700, exist_ok=True)
        _write(folder / f"{sha256}.png", png)
    except (OSError, ValueError) as exc:
        raise NotKept(f"cannot write it: {getattr(exc, 'strerror', None) or exc}") from None
    except InvalidInput as exc:  # the state directory cannot be used
        raise NotKept(exc.message) from None
    return {"sha256": sha256, "file": relative_name(sha256), "bytes": len(png)}


def _write(path: Path, data: bytes) -> None:
    # Whole or not at all: a reader never finds half a file under the final name.
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".screenshot-")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def find(sha256: str, state_dirs: Iterable[Path]) -> tuple[Path, bytes] | None:
    """The file of the screenshot with this hash, and its bytes, from the first state directory
    holding one whose content still hashes to it; None when none does."""
    if not _SHA256.match(sha256):
        return None
    for state_dir in state_dirs:
        path = state_dir / relative_name(sha256)
        try:
            if path.stat().st_size > MAX_BYTES:
                continue
            data = path.read_bytes()
        except (OSError, ValueError):
            continue
        if hashlib.sha256(data).hexdigest() == sha256:
            return path, data
    return None
