"""``donegate.toml`` as plain data: its TOML read, and ``${NAME}`` expanded from the environment.

:mod:`donegate.config` validates what this returns. It is apart, and imports nothing of
pydantic, so that ``donegate collect`` can read the configuration before loading the models
(:mod:`donegate.cli.prestart`).
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from donegate.errors import InvalidInput

_VARIABLE = re.compile(r"\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def read_text(path: Path) -> str:
    """The configuration file's text; :class:`InvalidInput` when it cannot be read."""
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"cannot read configuration {path}: {exc}") from None


def expanded(text: str, environ: Mapping[str, str], source: str) -> tuple[dict[str, Any], set[str]]:
    """The TOML ``text`` with ``${NAME}`` replaced from ``environ``, and the values put in (the
    secrets to mask). ``[judge]`` is kept as written: it names its key's variable, which is read
    only when the judge is called."""
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InvalidInput(f"{source} is not valid TOML: {exc}") from None
    secrets: set[str] = set()
    judge = raw.pop("judge", None)
    done = _expand(raw, "", environ, secrets)
    if judge is not None:
        done["judge"] = judge
    return done, secrets


def _expand(value: Any, path: str, environ: Mapping[str, str], secrets: set[str]) -> Any:
    """``value`` with ``${NAME}`` replaced from ``environ``; expanded values go to ``secrets``."""
    if isinstance(value, dict):
        return {k: _expand(v, _join(path, k), environ, secrets) for k, v in value.items()}
    if isinstance(value, list):
        return [_expand(v, f"{path}[{i}]", environ, secrets) for i, v in enumerate(value)]
    if not isinstance(value, str):
        return value
    recorded = ".expected" in path  # evidence carries expectations; they are not secrets

    def substitute(match: re.Match[str]) -> str:
        name = match.group(1)
        if name is None:
            return "$"
        if name not in environ:
            raise InvalidInput(f"environment variable {name} is not set", path)
        if not recorded:
            secrets.add(environ[name])
        return environ[name]

    return _VARIABLE.sub(substitute, value)


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key
