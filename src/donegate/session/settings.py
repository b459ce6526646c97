"""The configuration a session is judged by: ``donegate.toml`` as a person last accepted it.

The file lives in the agent's working tree, so the agent can edit it: loosen a policy, swap the
test command for ``true``, ignore the files it wrote. Two defences:

- a session is judged by the copy pinned at its first hook call, kept in the state directory: an
  edit made during the session is a write like any other, reported, and judges nothing;
- pinning alone is not enough, because a new session re-pins: a ``donegate.toml`` whose content
  an agent wrote, and that no person has accepted since (:mod:`.authorship`), is never pinned.
  The last accepted text is used instead, and the difference is on the record.

This is the one reader of ``donegate.toml`` on the hook path: no pydantic, TOML parsed once per
session and kept beside the pinned text.
"""

from __future__ import annotations

import json
from pathlib import Path

from donegate.errors import InvalidInput
from donegate.gate import GateOptions
from donegate.gate.table import HOOK_MAX_BLOCKS_IN_A_ROW, GateTable, parse_gate_tables
from donegate.gitlisting import run
from donegate.record import Record
from donegate.session.layout import Layout
from donegate.workspace import Rules
from donegate.workspace._files import NotRegular, read_capped, write_atomic

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Literal

CONFIG_FILE = "donegate.toml"
# A team's configuration is a page of text; the agent may put anything at its name (a FIFO,
# gigabytes), which is refused unread.
MAX_CONFIG_BYTES = 1024 * 1024
if TYPE_CHECKING:
    OnUnverified = Literal["block", "warn", "record"]
else:
    OnUnverified = str  # a Literal for the type checker; its values are str at run time
_MODES: dict[object, OnUnverified] = {"block": "block", "warn": "warn", "record": "record"}


class Settings(Record):
    """What ``donegate.toml`` says about stops, read without the collectors' models.

    ``notes`` say, for the record and the person, where the text judging this session differs
    from the tree's (edited during the session; written by an agent and not accepted).
    """

    root: Path
    config_text: str | None
    gate: GateTable
    rules: Rules
    on_unverified: OnUnverified
    has_checks: bool
    notes: tuple[str, ...] = ()
    protect: tuple[str, ...] = ()
    interpreters: tuple[str, ...] = ()
    satisfies: tuple[tuple[str, ...], ...] = ()
    # The [scan] table as written: parsed by the scanner when a stop has Python to scan, so a
    # stop without (the common one) does not import it.
    scan_table: object = None

    @property
    def ignore(self) -> tuple[str, ...]:
        return self.gate.ignore

    def gate_options(self) -> GateOptions:
        """Interactive hosts don't require a write, and stop blocking before their own cap."""
        return self.gate.gate_options(
            requires_write=False, max_blocks_in_a_row=HOOK_MAX_BLOCKS_IN_A_ROW
        )


class Pinned(Record):
    """A pinned text (None: there was no ``donegate.toml``) and its TOML, when valid."""

    text: str | None
    parsed: dict[str, Any] | None = None


def current_text(root: Path) -> str | None:
    """The tree's ``donegate.toml`` now (None: there is none)."""
    path = root / CONFIG_FILE
    try:
        data = read_capped(path.resolve(), MAX_CONFIG_BYTES)  # a link is read through
        if data is None:
            raise InvalidInput(f"cannot read {path}: larger than {MAX_CONFIG_BYTES} bytes")
        return data.decode("utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError, NotRegular) as exc:
        raise InvalidInput(f"cannot read {path}: {exc}") from None


def head_text(root: Path) -> str | None:
    """``HEAD``'s ``donegate.toml``, when git has a commit holding one."""
    out = run(root, "show", f"HEAD:{CONFIG_FILE}")
    return None if out is None else out.decode("utf-8", "replace")


def pin(layout: Layout, root: Path, session_id: str, text: str | None) -> Pinned:
    """Pin ``text`` as the session's configuration unless one is pinned already; the pin."""
    path = layout.config_pin(root, session_id)
    stored = load_pin(path)
    return stored if stored is not None else save_pin(path, text)


def load_pin(path: Path) -> Pinned | None:
    """A pinned configuration file (None: there is none); damaged ones are an error."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise InvalidInput(f"cannot read the pinned configuration {path}: {exc}") from None
    text = data.get("text") if isinstance(data, dict) else None
    parsed = data.get("parsed") if isinstance(data, dict) else None
    if (text is not None and not isinstance(text, str)) or not isinstance(parsed, dict | None):
        raise InvalidInput(f"{path}: not a pinned configuration")
    return Pinned(text, parsed)


def save_pin(path: Path, text: str | None) -> Pinned:
    """Store ``text`` (and its TOML) at ``path``."""
    parsed = _parsed(text)
    write_atomic(path, json.dumps({"text": text, "parsed": parsed}).encode())
    return Pinned(text, parsed)


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


def read_settings(root: Path, pinned: Pinned, notes: tuple[str, ...] = ()) -> Settings:
    """The stop-relevant parts of a pinned ``donegate.toml``."""
    path = root / CONFIG_FILE
    if pinned.text is None:
        return Settings(root, None, GateTable(), Rules(), "block", False, notes)
    try:
        raw = pinned.parsed if pinned.parsed is not None else _toml(pinned.text)
        table = parse_gate_tables(raw)
        mode = _on_unverified(raw.get("policy"))
    except InvalidInput as exc:
        raise InvalidInput(f"{path}: {exc}", exc.path) from None
    checks = raw.get("checks")
    runs = [c for c in checks if isinstance(c, dict)] if isinstance(checks, list) else []
    return Settings(
        root,
        pinned.text,
        table,
        _rules(table),
        mode,
        bool(checks),
        notes,
        protect=tuple(g for c in runs for g in _strings(c.get("protect"))),
        interpreters=tuple(i for c in runs if (i := _program(c.get("command")))),
        satisfies=tuple(tuple(_strings(c.get("satisfies"))) for c in runs),
        scan_table=raw.get("scan"),
    )


def _strings(value: object) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _program(command: object) -> str | None:
    """The program a check's command runs (its interpreter, whose environment is watched)."""
    if isinstance(command, list) and command and isinstance(command[0], str):
        return command[0]
    if isinstance(command, str) and command.split():
        return command.split()[0]
    return None


def _toml(text: str) -> dict[str, Any]:
    import tomllib  # only when no pinned parse exists: a stop rarely needs the TOML parser

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InvalidInput(f"not valid TOML: {exc}") from None


def _on_unverified(policy: object) -> OnUnverified:
    mode = policy.get("on_unverified", "block") if isinstance(policy, dict) else "block"
    if mode not in _MODES:
        raise InvalidInput("must be block, warn or record", path="policy.on_unverified")
    return _MODES[mode]


def _rules(table: GateTable) -> Rules:
    defaults = Rules()
    return Rules(
        test_globs=table.test_paths or defaults.test_globs,
        doc_globs=table.doc_paths or defaults.doc_globs,
        config_globs=defaults.config_globs,
    )
