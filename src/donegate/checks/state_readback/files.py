"""A local JSON or TOML file as the system of record: a missing file or key is "not there"."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING

from donegate.checks.state_readback._base import ReadError, Records, records_at

if TYPE_CHECKING:
    from donegate.checks.state_readback import StateReadbackSettings


def file_path(source: str, base_dir: Path) -> Path:
    """The file a ``file:`` (or bare path) source names, relative to ``base_dir``."""
    return base_dir / source.removeprefix("file:")


def read(settings: StateReadbackSettings, base_dir: Path) -> Records:
    """The record(s) at ``settings.path`` in the file."""
    path = file_path(settings.source, base_dir)
    try:
        data = path.read_bytes()
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
