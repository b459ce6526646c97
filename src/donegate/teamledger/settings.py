"""Where the team ledger is: ``$DONEGATE_LEDGER_URL``, else the user's own configuration file.

The file is ``$XDG_CONFIG_HOME/donegate/config.toml`` (``~/.config/donegate/config.toml``)::

    [ledger]
    url = "${DONEGATE_LEDGER_URL}"
    schema = "donegate"

``${NAME}`` is replaced by that environment variable. Nothing in a repository is read: an agent
must not be able to point its receipts somewhere else.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from donegate.errors import InvalidInput
from donegate.record import Record

DEFAULT_SCHEMA = "donegate"
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_SCHEMA_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")


class TeamSettings(Record):
    """The team ledger's URL and the PostgreSQL schema its tables live in."""

    url: str
    schema: str = DEFAULT_SCHEMA


def config_file() -> Path:
    """The user-level configuration file (which may not exist)."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "donegate" / "config.toml"


def team_settings(url: str | None = None, schema: str | None = None) -> TeamSettings | None:
    """The team ledger configured (``url`` given wins), or None when there is none."""
    table = _ledger_table(config_file())
    url = url or os.environ.get("DONEGATE_LEDGER_URL") or _expand(table.get("url"))
    if not url:
        return None
    chosen = schema or os.environ.get("DONEGATE_LEDGER_SCHEMA") or table.get("schema")
    return TeamSettings(url, check_schema(str(chosen or DEFAULT_SCHEMA)))


def check_schema(name: str) -> str:
    """``name`` if it is a plain lower-case SQL identifier (it is written into statements)."""
    if not _SCHEMA_NAME.match(name):
        raise InvalidInput(f"ledger schema must match {_SCHEMA_NAME.pattern}, got {name!r}")
    return name


def _ledger_table(path: Path) -> dict[str, object]:
    if not path.exists():  # the common case after a stop: no parser loaded on the hook path
        return {}
    import tomllib

    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise InvalidInput(f"{path}: {exc}") from None
    table = data.get("ledger", {})
    if not isinstance(table, dict):
        raise InvalidInput(f"{path}: [ledger] must be a table")
    return table


def _expand(value: object) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise InvalidInput(f"{config_file()}: ledger.url must be a string")
    return _VARIABLE.sub(lambda m: os.environ.get(m.group(1), ""), value)
