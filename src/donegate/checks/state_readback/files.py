"""A local JSON or TOML file as the system of record: a missing file or key is "not there".

Only a regular file is read (a FIFO or a device could block or never end), and at most
``max_body_bytes`` of it.
"""

from __future__ import annotations

import json
import os
import stat
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING

from donegate.checks.state_readback._base import ReadError, Records, records_at

if TYPE_CHECKING:
    from donegate.checks.state_readback._settings import StateReadbackSettings


def file_path(source: str, base_dir: Path) -> Path:
    """The file a ``file:`` (or bare path) source names, relative to ``base_dir``."""
    return base_dir / source.removeprefix("file:")


def read(settings: StateReadbackSettings, base_dir: Path) -> Records:
    """The record(s) at ``settings.path`` in the file."""
    path = file_path(settings.source, base_dir)
    try:
        data = _read_regular(path, settings.max_body_bytes)
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise ReadError(f"cannot read {path}: {exc.strerror}") from None
    try:
        document: object = (
            tomllib.loads(data.decode()) if path.suffix == ".toml" else json.loads(data)
        )
    except (ValueError, UnicodeDecodeError) as exc:
        raise ReadError(f"{path} is not valid {path.suffix[1:].upper()}: {exc}") from None
    return records_at(document, settings.path)


def _read_regular(path: Path, max_bytes: int) -> bytes:
    # O_NONBLOCK: opening a FIFO with no writer would otherwise wait forever.
    descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    with os.fdopen(descriptor, "rb") as handle:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            raise ReadError(f"{path} is not a regular file")
        data = handle.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise ReadError(f"{path} is longer than max_body_bytes ({max_bytes})")
    return data
