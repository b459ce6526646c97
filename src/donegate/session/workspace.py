"""The workspace a session works in, as the stop path sees it.

Its root is pinned at the session's first hook call: a later payload whose ``cwd`` resolves
elsewhere (a nested repository, a submodule, ``core.worktree`` pointed at a decoy) is judged
against the pinned root, and the difference is on the record.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path

from donegate import gitlisting
from donegate.errors import InvalidInput
from donegate.session.authorship import Authorship, Digest
from donegate.session.event import HookEvent
from donegate.session.layout import Layout, locked, move_aside, parent_session
from donegate.session.receipt import repairing
from donegate.session.settings import (
    CONFIG_FILE,
    Settings,
    current_text,
    head_text,
    load_pin,
    read_settings,
    save_pin,
)
from donegate.timefmt import rfc3339
from donegate.workspace import ClassifiedWrite, Reported, Snapshot, WorkspaceState, Write, diff
from donegate.workspace._files import NotRegular, is_pseudo, read_capped, write_atomic
from donegate.workspace.blobs import TEXT_LIMIT
from donegate.workspace.snapshot import blob_id, utc_now

SENT_BACK = "sent-back.txt"

# A person's act: run from an agent's shell (the journal of its tool calls shows it), it counts
# for nothing. Matches `donegate accept`, `python -m donegate accept`, `.venv/bin/donegate accept`.
MAX_PROMPTS = 5
MAX_PROMPT_CHARS = 8000
MAX_DIFF_CHARS = 60_000
_ACCEPT_COMMAND = re.compile(r"donegate\b.{0,200}?\baccept\b", re.DOTALL)


def workspace_root(cwd: Path) -> Path:
    """The repository's top level when ``cwd`` is in one, else ``cwd`` itself."""
    return gitlisting.toplevel(cwd) or cwd.resolve()


def project(root: Path) -> Path:
    """``root``, if it can be a project's workspace; raise InvalidInput if it cannot.

    The whole file system (``/``) and the kernel's own (``/proc``, ``/sys``, ``/dev``) are
    not projects: walking them never ends, and reading their files blocks or never ends.
    """
    if root == Path(root.anchor) or is_pseudo(root):
        raise InvalidInput(
            f"{root} is not a project directory: donegate does not read it as a workspace"
        )
    return root


def pinned_root(layout: Layout, event: HookEvent, notes: list[str]) -> Path:
    """The session's workspace root: pinned at its first call, noted when a payload differs."""
    path = layout.root_pin(event.session_id)
    parent = parent_session(event.session_id)
    pinned = _pin(path)
    if pinned is None:
        inherited = layout.root_pin(parent) if parent is not None else None
        if inherited is not None and inherited.exists():
            write_atomic(path, inherited.read_bytes())  # a subagent works where its parent does
            return pinned_root(layout, event, notes)
        root = project(workspace_root(event.cwd))
        write_atomic(path, str(root).encode("utf-8", "surrogateescape"))
        return root
    project(pinned)
    if resolved_elsewhere(event.cwd, pinned):
        notes.append(
            f"donegate: this hook call's cwd ({event.cwd}) is not in the workspace the session "
            f"started in; it was judged against {pinned}."
        )
    return pinned


def receipt_root(layout: Layout, event: HookEvent) -> Path:
    """Where a stop's receipt is recorded before anything is written or locked.

    The root :func:`pinned_root` will give (the session's pin, else its parent's, else where
    the first call pins it); the payload's ``cwd`` when that is refused as a workspace, so
    that the refusal too is on the record.
    """
    parent = parent_session(event.session_id)
    for session in (event.session_id, parent) if parent else (event.session_id,):
        pinned = _pin(layout.root_pin(session))
        if pinned is not None:
            return pinned
    try:
        return project(workspace_root(event.cwd))
    except (InvalidInput, OSError):
        return event.cwd


def _pin(path: Path) -> Path | None:
    try:
        return Path(path.read_bytes().decode("utf-8", "surrogateescape"))
    except FileNotFoundError:
        return None


def resolved_elsewhere(cwd: Path, root: Path) -> bool:
    """Whether ``cwd`` lies outside ``root``, or in another repository nested inside it."""
    try:
        here = cwd.resolve()
    except OSError:
        return True
    if here != root and root not in here.parents:
        return True
    return workspace_root(cwd) != root


class Workspace:
    """One session's view of its pinned workspace: settings, writes, verified snapshots."""

    def __init__(self, layout: Layout, event: HookEvent, root: Path, notes: list[str]) -> None:
        self.layout = layout
        self.event = event
        self.root = root
        self.notes = notes
        self._state: WorkspaceState | None = None
        self._current: Snapshot | None = None
        self.tainted: frozenset[str] = frozenset()
        self._revoked = False

    @classmethod
    def open(cls, layout: Layout, event: HookEvent) -> Workspace:
        """The workspace of ``event``'s session, its root pinned at the first call."""
        notes: list[str] = []
        root = pinned_root(layout, event, notes)
        _seen(layout, root, event)
        return cls(layout, event, root, notes)

    def settings(self) -> Settings:
        """The configuration this session is judged by: pinned at its first call."""
        path = self.layout.config_pin(self.root, self.event.session_id)
        self._inherit(path.name, "baseline.json", "baseline.fingerprint")
        pinned = load_pin(path)
        if pinned is None:
            pinned = save_pin(path, self._acceptable(self._first_pin()))
        notes: list[str] = []
        current = current_text(self.root)
        if pinned.text != current:
            notes.append(self._config_note(current))
        settings = read_settings(self.root, pinned, tuple(notes))
        # Protected paths are seen even where ignore rules would hide them, and so is the
        # environment of the interpreter the checks run with.
        self._state = WorkspaceState(
            self.layout.state_dir,
            self.root,
            self.event.session_id,
            ignore=settings.ignore,
            watch=settings.protect,
            interpreters=settings.interpreters,
            on_unusable=self._unusable_record,
        )
        return settings

    def _unusable_record(self, path: Path, why: str) -> None:
        """A damaged stat record is moved aside and reported, never passed over in silence."""
        moved = move_aside(self.layout, path)
        where = f"moved to {moved}" if moved is not None else "left where it was"
        self.notes.append(
            f"donegate: this workspace's stat record {path.name} could not be used ({why}); "
            f"it was {where}, and every file was read again."
        )

    def _inherit(self, *names: str) -> None:
        """A subagent's session starts from its parent's pinned files, where it has none."""
        parent = parent_session(self.event.session_id)
        if parent is None:
            return
        mine = self.layout.session(self.root, self.event.session_id)
        theirs = self.layout.session(self.root, parent)
        for name in names:
            if not (mine / name).exists() and (theirs / name).exists():
                write_atomic(mine / name, (theirs / name).read_bytes())

    def _config_note(self, current: str | None) -> str:
        digest = None if current is None else self.digest(current.encode("utf-8"))
        if self.authorship().is_tainted(CONFIG_FILE, digest):
            return (
                f"donegate: {CONFIG_FILE} was written by an agent and no person has accepted it "
                "(`donegate accept donegate.toml`); this session is judged by the last accepted "
                "configuration."
            )
        return (
            f"donegate: {CONFIG_FILE} was changed during this session; this stop was judged by "
            "the configuration the session started with."
        )

    def _acceptable(self, text: str | None) -> str | None:
        """``text``, unless an agent wrote it and no person accepted it: then the last accepted.

        Pinning per session is not enough: a loosened file written in one session would be
        pinned by the next.
        """
        digest = None if text is None else self.digest(text.encode("utf-8"))
        accepted = self.layout.accepted_config(self.root)
        if not self.authorship().is_tainted(CONFIG_FILE, digest):
            write_atomic(accepted, json.dumps({"text": text}).encode())
            return text
        try:
            fallback = json.loads(accepted.read_bytes()).get("text")
        except (OSError, ValueError, AttributeError):
            fallback = None
        return fallback if isinstance(fallback, str) else None

    def digest(self, content: bytes) -> str:
        """``content``'s digest as this workspace's snapshots compute it."""
        from donegate.workspace._git import object_format

        return blob_id(object_format(self.root) or "sha1", content)

    def authorship(self) -> Authorship:
        """Who wrote what in this workspace (a damaged record is moved aside, and noted)."""
        path = self.layout.authorship(self.root)
        return repairing(self.layout, path, lambda: Authorship.load(path), self.notes)

    def _first_pin(self) -> str | None:
        # A session that began before donegate was installed (its first call is not its start)
        # is judged by HEAD's file when git has one: the agent may already have edited the tree.
        if self.event.kind != "baseline" and gitlisting.has_head(self.root):
            return head_text(self.root)
        return current_text(self.root)

    @property
    def state(self) -> WorkspaceState:
        if self._state is None:
            self.settings()
        assert self._state is not None
        return self._state

    def writes(self, settings: Settings) -> list[ClassifiedWrite]:
        """The agent's writes since the session's last verified snapshot (else its baseline).

        Content a person accepted is not the agent's write; everything else is remembered as
        the agent's, across sessions, and :attr:`tainted` lists what is still the agent's.
        """
        self._current = current = self.state.snapshot()
        writes = self.state.classified_since_verified(settings.rules, current)
        with locked(self.layout.workspace_lock(self.root)):
            record = self.authorship()
            self._refuse_agent_acceptance(record)
            self._told_of_donegate_calls()
            before = (len(record.agent), len(record.accepted))
            for w in writes:
                if self._metadata_only(w, record):
                    record.accept(
                        w.write.path,
                        w.write.new_digest,
                        how="metadata_only",
                        by="donegate",
                        at=rfc3339(utc_now()),
                    )
            kept = [w for w in writes if not record.is_accepted(w.write.path, w.write.new_digest)]
            new = [c for c in _contents(kept) if not record.agent_wrote(*c)]
            record.record_agent(new, self.event.session_id, rfc3339(utc_now()))
            if new or before != (len(record.agent), len(record.accepted)) or self._revoked:
                record.save(self.layout.authorship(self.root))
        # Only the paths an agent wrote can be tainted: their digests, not all ten thousand.
        entries = current.entries
        self.tainted = record.tainted({p: entries[p].digest for p in record.agent if p in entries})
        return kept

    def _refuse_agent_acceptance(self, record: Authorship) -> None:
        """An agent that ran ``donegate accept`` in its shell accepted nothing: revoke, report."""
        # The journal is read first: the baseline (a whole snapshot) only when it is needed.
        ran = [r for r in self.state.journal.entries() if r.command]
        if not any(_ACCEPT_COMMAND.search(r.command or "") for r in ran):
            return
        since = self.state.baseline().taken_at
        if not any(_ACCEPT_COMMAND.search(r.command or "") for r in ran if r.at >= since):
            return
        revoked = record.revoke(rfc3339(since))
        self._revoked = bool(revoked)
        self.notes.append(
            "donegate: the agent ran `donegate accept` from its own shell; accepting is a "
            "person's act, so it counts for nothing"
            + (f" (withdrawn: {', '.join(sorted(revoked))})." if revoked else ".")
        )

    def _told_of_donegate_calls(self) -> None:
        """The agent's own calls of donegate this session (:mod:`donegate.session.boxed`)."""
        from donegate.session import boxed

        self.notes.extend(boxed.notes(self.layout.session(self.root, self.event.session_id)))

    @property
    def current(self) -> Snapshot:
        """This stop's snapshot (taken by :meth:`writes`)."""
        assert self._current is not None
        return self._current

    def remember_sent_back(self, reason: str) -> None:
        """Keep the reason a stop sent the agent back with: some hosts hand it to the agent as
        the next prompt (Gemini CLI's ``BeforeAgent``), which is then no person's word."""
        path = self.layout.session(self.root, self.event.session_id) / SENT_BACK
        write_atomic(path, reason.encode())

    def is_sent_back(self, prompt: str) -> bool:
        """Whether ``prompt`` is the reason the last block gave (the host's, not the person's)."""
        path = self.layout.session(self.root, self.event.session_id) / SENT_BACK
        try:
            reason = path.read_bytes().decode("utf-8", "replace")
        except OSError:
            return False
        return bool(reason.strip()) and reason.strip() in prompt

    def remember_prompt(self, prompt: str) -> None:
        """Keep the person's latest prompts: the task a judge is shown."""
        path = self.layout.session(self.root, self.event.session_id) / "prompts.json"
        try:
            prompts = json.loads(path.read_bytes())
        except (OSError, ValueError):
            prompts = []
        kept = [p for p in prompts if isinstance(p, str)][-(MAX_PROMPTS - 1) :]
        write_atomic(path, json.dumps([*kept, prompt[:MAX_PROMPT_CHARS]]).encode())

    def task(self) -> str | None:
        """The prompts of this session, oldest first, as one text (None: none recorded)."""
        path = self.layout.session(self.root, self.event.session_id) / "prompts.json"
        try:
            prompts = json.loads(path.read_bytes())
        except (OSError, ValueError):
            return None
        texts = [p for p in prompts if isinstance(p, str)] if isinstance(prompts, list) else []
        return "\n\n".join(texts) or None

    def diff_text(self, writes: Sequence[ClassifiedWrite]) -> str:
        """A unified diff of ``writes`` (old texts from the blob store), cut at a bound."""
        import difflib

        parts: list[str] = []
        for w in writes:
            old = self.state.blobs.text(w.write.old_digest) if w.write.old_digest else ""
            new = _text_now(self.root / w.write.path)
            if old is None or new is None:
                parts.append(f"--- {w.write.path}: {w.write.change} (content not shown)\n")
                continue
            a, b = old.splitlines(keepends=True), new.splitlines(keepends=True)
            parts.extend(difflib.unified_diff(a, b, f"a/{w.write.path}", f"b/{w.write.path}"))
        text = "".join(parts)
        return text if len(text) <= MAX_DIFF_CHARS else text[:MAX_DIFF_CHARS] + "\n[diff cut]\n"

    def baseline(self) -> Snapshot:
        """The session's baseline, the tree as it is now if it has none yet (see
        :meth:`look`)."""
        return self.look()[0]

    def look(self) -> tuple[Snapshot, list[str]]:
        """The session's baseline, and the paths changed since any session last looked while no
        turn of the agent was open (taken as the person's, below).

        What changed since any session last looked, while this session's agent was not at work,
        was changed by the person: it is taken as theirs (accepted), and so never counts as an
        agent's write. While the agent's turn is open (a prompt came, and no stop let the agent
        go since: the person interrupted it, or its background work runs on), what changed is
        the agent's, and the next stop judges it.
        """
        with locked(self.layout.workspace_lock(self.root)):
            previous = self.state.last_observed()
            base = self.state.ensure_baseline()
            now = self.state.snapshot() if previous is not None else None
            changed: list[str] = []
            if previous is not None and now is not None and not self.turn_open():
                changed = self._accept_person_changes(previous, now)
        return base, changed

    def turn_open(self) -> bool:
        """Whether the agent's turn is open: a prompt came and no stop has let the agent go."""
        return self.layout.turn(self.root, self.event.session_id).exists()

    def open_turn(self) -> None:
        """A person's prompt: the agent is at work until a stop lets it go."""
        path = self.layout.turn(self.root, self.event.session_id)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch()

    def close_turn(self) -> None:
        """A stop let the agent go, with no work of its running on."""
        self.layout.turn(self.root, self.event.session_id).unlink(missing_ok=True)

    def _accept_person_changes(self, previous: Snapshot, now: Snapshot) -> list[str]:
        writes = diff(previous, now)
        changed = _contents_of_writes(writes)
        if changed:
            record = self.authorship()
            at, by = rfc3339(utc_now()), person()
            for path, digest in changed:
                record.accept(path, digest, how="between_turns", by=by, at=at)
            record.save(self.layout.authorship(self.root))
        return [w.path for w in writes]

    def _metadata_only(self, w: ClassifiedWrite, record: Authorship) -> bool:
        """Whether ``w`` changed only the metadata of a pyproject.toml whose content before was
        the person's (a text the agent wrote and no one accepted proves nothing)."""
        write = w.write
        if write.path.rpartition("/")[2] != "pyproject.toml" or write.change != "modified":
            return False
        if write.new_digest is None or record.is_tainted(write.path, write.old_digest):
            return False
        old = self.state.blobs.text(write.old_digest)
        try:  # the bytes the snapshot hashed, not what the file may hold since
            data = read_capped(self.root / write.path, TEXT_LIMIT)
        except (OSError, NotRegular):
            return False
        if old is None or data is None or self.digest(data) != write.new_digest:
            return False
        from donegate.session import metadata  # tomllib: only for a pyproject.toml written

        try:
            return metadata.metadata_only(old, data.decode("utf-8"))
        except UnicodeDecodeError:
            return False

    def worked_this_turn(self) -> bool:
        """Whether the host reported a tool call (a write or a command) since the person's last
        prompt: two stats, no reading. Without a prompt on record, whether it reported any since
        the last verified snapshot."""
        try:
            opened = self.layout.turn(self.root, self.event.session_id).stat().st_mtime_ns
        except OSError:
            return bool(self.reported())
        try:
            return self.state.journal.path.stat().st_mtime_ns >= opened
        except OSError:
            return False

    def reported(self) -> list[Reported]:
        """What the host's tool hooks reported since the writes being verified began."""
        return self.state.journal.entries(since=self.state.reference().taken_at)

    def has_verified(self) -> bool:
        return self.state.has_verified()

    def mark_verified(self) -> None:
        """The snapshot of this stop verified: later stops count writes from it."""
        assert self._current is not None
        self.state.mark_verified(self._current)


def _text_now(path: Path) -> str | None:
    """The text of the file at ``path`` to show in a diff (a FIFO is never opened)."""
    try:
        content = read_capped(path, TEXT_LIMIT)
        return None if content is None else content.decode("utf-8")
    except (OSError, NotRegular, UnicodeDecodeError):
        return None


def _seen(layout: Layout, root: Path, event: HookEvent) -> None:
    """Record that ``event``'s host called this workspace's hooks (``donegate doctor`` reads it)."""
    record = {"event": event.host_event, "kind": event.kind, "at": rfc3339(utc_now())}
    write_atomic(layout.seen(root, event.host), json.dumps(record).encode())


def _contents(writes: Sequence[ClassifiedWrite]) -> list[tuple[str, Digest]]:
    return _contents_of_writes([w.write for w in writes])


def _contents_of_writes(writes: Sequence[Write]) -> list[tuple[str, Digest]]:
    """``(path, content digest)`` for each path a write left: a rename also empties its source."""
    out: list[tuple[str, Digest]] = []
    for write in writes:
        out.append((write.path, write.new_digest))
        if write.old_path is not None:
            out.append((write.old_path, None))
    return out


def person() -> str:
    """Who the person at this machine is, for the record."""
    import getpass  # only when a person's change is recorded: a stop that changed nothing skips it

    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "unknown"
