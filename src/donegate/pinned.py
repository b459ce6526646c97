"""The configuration a session is judged by: ``donegate.toml`` as it was when the session began.

The file lives in the agent's working tree, so the agent can edit it: loosen a policy, swap the
test command for ``true``, ignore the files it wrote. A session is therefore judged by the copy
pinned when it started (its first hook call), kept in the state directory; an edit made during
the session is a write like any other, and is reported, but judges nothing until a new session.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, NamedTuple

from donegate.errors import InvalidInput
from donegate.gitlisting import has_head, run
from donegate.workspace.state import session_dir

CONFIG_FILE = "donegate.toml"
_PIN = "config.json"


class PinnedConfig(NamedTuple):
    """The pinned text (None: there was no ``donegate.toml``) and whether the tree's differs.

    ``parsed`` is the text's TOML as data when it was valid and JSON can hold it, kept beside the
    text so that a stop, which happens far more often than a session start, need not parse TOML.
    """

    text: str | None
    changed: bool
    parsed: dict[str, Any] | None = None


def pin(state_dir: Path, root: Path, session_id: str) -> None:
    """At a session's start: remember ``donegate.toml`` as it is now, unless already pinned."""
    path = session_dir(state_dir, root, session_id) / _PIN
    if not path.exists():
        _write(path, _current(root))


def pinned(state_dir: Path, root: Path, session_id: str) -> PinnedConfig:
    """The configuration this session is judged by, pinning one now if it has none.

    A session that began before donegate was installed is pinned to ``HEAD``'s file when git has
    one, else to the working tree's as it is at this first stop.
    """
    path = session_dir(state_dir, root, session_id) / _PIN
    current = _current(root)
    if path.exists():
        text, parsed = _read(path)
    else:
        text = _at_head(root) if has_head(root) else current
        parsed = _write(path, text)
    return PinnedConfig(text, text != current, parsed)


def _current(root: Path) -> str | None:
    try:
        return (root / CONFIG_FILE).read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"cannot read {root / CONFIG_FILE}: {exc}") from None


def _at_head(root: Path) -> str | None:
    out = run(root, "show", f"HEAD:{CONFIG_FILE}")
    return None if out is None else out.decode("utf-8", "replace")


def _read(path: Path) -> tuple[str | None, dict[str, Any] | None]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InvalidInput(
            f"cannot read the session's pinned configuration {path}: {exc}"
        ) from None
    text = data.get("text") if isinstance(data, dict) else None
    parsed = data.get("parsed") if isinstance(data, dict) else None
    if (text is not None and not isinstance(text, str)) or not isinstance(parsed, dict | None):
        raise InvalidInput(f"{path}: not a pinned configuration")
    return text, parsed


def _write(path: Path, text: str | None) -> dict[str, Any] | None:
    parsed = _parsed(text)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps({"text": text, "parsed": parsed}), encoding="utf-8")
    tmp.replace(path)
    return parsed


def _parsed(text: str | None) -> dict[str, Any] | None:
    # An invalid file is pinned as text only: every stop then reports the error, with its line.
    if text is None:
        return None
    import tomllib

    try:
        parsed = tomllib.loads(text)
        json.dumps(parsed)  # TOML dates and times have no JSON form: keep the text only
    except (tomllib.TOMLDecodeError, TypeError, ValueError):
        return None
    return parsed
