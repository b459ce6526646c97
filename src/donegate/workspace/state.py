"""A session's view of one workspace: its baseline, its last verified snapshot, its journal.

Layout in the state directory (outside the working tree, so the agent cannot edit its record)::

    workspaces/<workspace id>/root               the workspace path, for people
    workspaces/<workspace id>/latest.snap        the newest snapshot: the hashing cache
    workspaces/<workspace id>/shims.json         what each interpreter shim answered, and when
    workspaces/<workspace id>/sessions/<session>/baseline.json
    workspaces/<workspace id>/sessions/<session>/verified.snap   (verified.json before)
    workspaces/<workspace id>/sessions/<session>/journal.jsonl
    workspaces/<workspace id>/sessions/<session>/environment-{baseline,verified}.json
    blobs/<digest[:2]>/<digest[2:]>              old texts, shared by all workspaces

``latest.snap`` is donegate's own stat record of every file, in a compact binary form
(:meth:`~donegate.workspace.snapshot.Snapshot.to_record`) read at every stop. One that cannot
be read is no record: every file is then read and hashed again, never taken as unchanged.
``verified.snap`` is the verified snapshot in the same form: written after each verified run
and read back at the next stop, where JSON cost a 10,000-file tree some 25 ms each way. One that
cannot be read is an error, as a damaged ``verified.json`` is: the stop fails and says so, never
counting writes from another reference.

The workspace id is a hash of the resolved path. A session without a baseline (it began before
donegate was installed, or the host sent no start event) gets one the first time it is asked
for: ``HEAD``'s tree in a git repository, so that the agent's uncommitted and untracked files
are all writes; outside git, an empty tree, so that every file counts as a write (nothing
outside git says what the tree was before). Once pinned, it stays, so a commit made by the agent
later does not hide its writes.

The interpreter environments (:mod:`donegate.workspace.interpreter`) are digested beside each
baseline and verified snapshot; a change there comes out as a synthetic write of kind
``config`` flagged ``interpreter``. A test command's interpreter whose environment could not be
found (a shim that did not answer) is listed in :attr:`WorkspaceState.unresolved`.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Sequence
from pathlib import Path

from donegate.errors import InvalidInput
from donegate.gitlisting import has_head, resolved
from donegate.workspace import interpreter
from donegate.workspace._files import NotRegular, read_capped, write_atomic
from donegate.workspace._hashes import blake2b
from donegate.workspace.blobs import TEXT_LIMIT, BlobStore
from donegate.workspace.classify import ClassifiedWrite, Rules, classify, flags
from donegate.workspace.journal import FILE_NAME as JOURNAL_FILE
from donegate.workspace.journal import Journal
from donegate.workspace.snapshot import Clock, Snapshot, blob_id, utc_now
from donegate.workspace.writes import Write, diff

RECORD_FILE = "latest.snap"
SHIMS_FILE = "shims.json"
VERIFIED = "verified.snap"  # a session's verified snapshot, as a stat record
_SAFE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")


def workspace_id(root: str | Path) -> str:
    """A stable id for the workspace at ``root``: a hash of its resolved path."""
    return blake2b(str(resolved(root)).encode(), digest_size=12).hexdigest()


def _session_dir_name(session_id: str) -> str:
    if _SAFE_ID.fullmatch(session_id):
        return session_id
    return "h-" + blake2b(session_id.encode(), digest_size=12).hexdigest()


def session_dir(state_dir: str | Path, root: str | Path, session_id: str) -> Path:
    """Where one session's state for the workspace at ``root`` lives (not created)."""
    workspaces = resolved(state_dir) / "workspaces" / workspace_id(root)
    return workspaces / "sessions" / _session_dir_name(session_id)


class WorkspaceState:
    """Snapshots and writes of the workspace at ``root`` for one session of one agent."""

    def __init__(
        self,
        state_dir: str | Path,
        root: str | Path,
        session_id: str,
        *,
        ignore: Sequence[str] = (),
        clock: Clock = utc_now,
        watch: Sequence[str] = (),
        interpreters: Sequence[str | Path] = (),
        on_unusable: Callable[[Path, str], None] | None = None,
    ) -> None:
        self.state_dir = resolved(state_dir)
        self.root = resolved(root)
        self.session_id = session_id
        self.clock = clock
        self.ignore = tuple(ignore)
        self.watch = tuple(watch)  # globs no ignore rule may hide (``protect``)
        self.exclude = _inside(self.state_dir, self.root)
        self.interpreters = tuple(interpreters)  # the test command's, beside .venv/ and venv/
        self._dir = self.state_dir / "workspaces" / workspace_id(self.root)
        self._session = session_dir(self.state_dir, self.root, session_id)
        self.blobs = BlobStore(self.state_dir / "blobs", self.root)
        self.journal = Journal(self._session / JOURNAL_FILE)
        # Told of a stat record that cannot be used (its path, why): the person should hear of it.
        self.on_unusable = on_unusable
        # The test command's interpreters whose environment the last digest could not find.
        self.unresolved: tuple[tuple[str, str], ...] = ()  # (program, why)
        self._judged: tuple[str, interpreter.Digest] | None = None  # (tree, digest) last seen
        # Snapshots read back, by path, with the file's stat then: a stop reads its reference
        # more than once, and each reading of a 10,000-file tree's costs some 20 ms.
        self._read: dict[Path, tuple[tuple[int, ...], Snapshot]] = {}
        self._recorded: tuple[Snapshot, bytes] | None = None  # the last snapshot's record, made

    def snapshot(self) -> Snapshot:
        """Observe the tree now, reusing the newest snapshot's digests, and cache the result."""
        latest = self._dir / RECORD_FILE
        snap = Snapshot.take(
            self.root,
            self.last_observed,  # donegate's own stat record of every file
            ignore=self.ignore,
            keep=self.blobs.keep,
            clock=self.clock,
            watch=self.watch,
            exclude=self.exclude,
        )
        # Unchanged and nothing read: the record still holds. A file read again (racily clean
        # then) gets its record renewed once it can be trusted, or it would be read at every
        # stop from then on; while it cannot, saving would change nothing.
        renew = snap.renewable or not latest.exists()
        if renew or self._fingerprint(latest) != snap.fingerprint:
            record = snap.to_record()
            self._save(latest, snap, record)
            self._recorded = (snap, record)
        if not (self._dir / "root").exists():
            write_atomic(self._dir / "root", str(self.root).encode())
        return snap

    def last_observed(self) -> Snapshot | None:
        """The newest snapshot any session took of this workspace (before this one's).

        A record that cannot be used is no record (every file is read again) and is reported to
        :attr:`on_unusable`, before the new record replaces it.
        """
        path = self._dir / RECORD_FILE
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return self._load(self._dir / "latest.json")  # an earlier donegate's record
        except OSError as exc:
            self._unusable(path, f"unreadable: {exc.strerror or exc}")
            return None
        snap = Snapshot.from_record(data)
        if snap is None:
            self._unusable(path, "damaged, or of a format this donegate does not read")
        return snap

    def _unusable(self, path: Path, why: str) -> None:
        if self.on_unusable is not None:
            self.on_unusable(path, why)

    def take_baseline(self) -> Snapshot:
        """Observe the tree now and make it this session's baseline."""
        snap = self.snapshot()
        self._save(self._session / "baseline.json", snap)
        self._save_environment("baseline", self.environment(snap.fingerprint))
        return snap

    def environment(self, tree: str | None = None) -> interpreter.Digest:
        """The interpreter environments' digest now (see :mod:`donegate.workspace.interpreter`).

        ``tree`` is the fingerprint of the tree's snapshot now: a shim's answer is kept under it
        (None: the shim is asked again). Sets :attr:`unresolved`.
        """
        resolver = interpreter.Resolver(self.root, self._dir / SHIMS_FILE, tree)
        found = interpreter.environments(self.root, self.interpreters, resolver=resolver)
        self.unresolved = tuple(resolver.unresolved)
        return interpreter.digest(self.root, found)

    def ensure_baseline(self) -> Snapshot:
        """This session's baseline; the tree as it is now if it has none yet."""
        stored = self._load(self._session / "baseline.json")
        return stored if stored is not None else self.take_baseline()

    def baseline(self) -> Snapshot:
        """This session's baseline; pins ``HEAD`` (or an empty tree) if it has none yet."""
        stored = self._load(self._session / "baseline.json")
        if stored is not None:
            return stored
        pinned = Snapshot.from_head(
            self.root, ignore=(*self.ignore, *self.exclude), watch=self.watch
        )
        if not pinned.entries and not has_head(self.root):
            pinned = Snapshot.empty(self.root, pinned.algorithm)
        self._save(self._session / "baseline.json", pinned)
        if self._load_environment("baseline") is None:
            self._save_environment("baseline", self.environment())  # the earliest we can know
        return pinned

    def verified(self) -> Snapshot | None:
        """The last snapshot marked verified in this session, if any."""
        record, earlier = self._session / VERIFIED, self._session / "verified.json"
        snapshot = self._load(record, record=True)
        # An earlier donegate's JSON: the reference where it is the newer of the two (that
        # donegate ran again after this one, and never removes the record).
        if snapshot is None or _newer(earlier, record):
            return self._load(earlier)
        return snapshot

    def mark_verified(self, snapshot: Snapshot) -> None:
        """Record ``snapshot`` as verified: later, only writes since it need verifying."""
        made = self._recorded
        record = made[1] if made is not None and made[0] is snapshot else snapshot.to_record()
        self._save(self._session / VERIFIED, snapshot, record)
        (self._session / "verified.json").unlink(missing_ok=True)
        # The environments as the writes being verified saw them, not as they are after the
        # checks ran: a change made during the run is a write of the next stop.
        judged = self._judged
        if judged is None or judged[0] != snapshot.fingerprint:
            judged = (snapshot.fingerprint, self.environment(snapshot.fingerprint))
        self._save_environment("verified", judged[1])

    def reference(self) -> Snapshot:
        """What writes are counted from: the last verified snapshot, else the baseline."""
        return self.verified() or self.baseline()

    def has_verified(self) -> bool:
        """Whether a snapshot of this session was ever marked verified."""
        return (self._session / VERIFIED).exists() or (self._session / "verified.json").exists()

    def writes_since_verified(self, current: Snapshot | None = None) -> list[Write]:
        """The writes from :meth:`reference` to ``current`` (default: a snapshot taken now)."""
        current = current or self.snapshot()
        environment = self._environment_writes(current)
        # The common stop changed nothing: comparing fingerprints spares loading the reference.
        name = VERIFIED if self.has_verified() else "baseline.json"  # one fingerprint file
        if self._fingerprint(self._session / name) == current.fingerprint:
            return environment
        return diff(self.reference(), current) + environment

    def _environment_writes(self, current: Snapshot) -> list[Write]:
        """The interpreter environments' changes since the reference, as synthetic writes."""
        before = self._load_environment("verified") if self.has_verified() else None
        before = before if before is not None else self._load_environment("baseline")
        now = self.environment(current.fingerprint)
        self._judged = (current.fingerprint, now)
        if before is None:  # a session from before environments were digested: from now on
            self._save_environment("baseline", now)
            return []
        return interpreter.changes(before, now, current.taken_at)

    def classified_since_verified(
        self, rules: Rules | None = None, current: Snapshot | None = None
    ) -> list[ClassifiedWrite]:
        """:meth:`writes_since_verified`, each with its kind and flags."""
        current = current or self.snapshot()
        return self.classify_writes(self.writes_since_verified(current), current, rules)

    def classify_writes(
        self, writes: Sequence[Write], current: Snapshot, rules: Rules | None = None
    ) -> list[ClassifiedWrite]:
        """Classify ``writes`` (observed in ``current``) with old texts from the blob store."""
        rules = rules or Rules()
        out: list[ClassifiedWrite] = []
        for write in writes:
            if interpreter.is_synthetic(write.path):
                out.append(ClassifiedWrite(write, "config", ("interpreter",)))
                continue
            old = self.blobs.text(write.old_digest) if write.change == "modified" else None
            new = self._current_text(write, current) if old is not None else None
            kind = classify(write, old, new, rules)
            out.append(ClassifiedWrite(write, kind, flags(write)))
        return out

    def _current_text(self, write: Write, current: Snapshot) -> str | None:
        """The file's text now, only if it is still the content the snapshot saw.

        Never a FIFO's or a device's (never opened), nor one past :data:`TEXT_LIMIT`.
        """
        try:
            content = read_capped(self.root / write.path, TEXT_LIMIT)
        except (OSError, NotRegular):
            return None
        if content is None:
            return None
        if blob_id(current.algorithm, content) != write.new_digest:
            return None  # changed again since the snapshot: not provably cosmetic
        try:
            return content.decode("utf-8")
        except UnicodeDecodeError:
            return None

    def _load(self, path: Path, *, record: bool = False) -> Snapshot | None:
        """The snapshot saved at ``path`` (JSON, or a stat record), None if there is none; read
        once for as long as the file stays as it was."""
        try:
            with path.open("rb") as f:
                st = os.fstat(f.fileno())
                seen = (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
                known = self._read.get(path)
                if known is not None and known[0] == seen:
                    return known[1]
                data = f.read()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise InvalidInput(f"cannot read workspace state {path}: {exc}") from None
        snapshot = _from_record(path, data) if record else _from_json(path, data)
        self._read[path] = (seen, snapshot)
        return snapshot

    def _save(self, path: Path, snapshot: Snapshot, data: bytes | None = None) -> None:
        # The fingerprint goes first and comes back last: a crash in between leaves none,
        # never one that describes another snapshot than the one beside it.
        fingerprint = path.with_suffix(".fingerprint")
        fingerprint.unlink(missing_ok=True)
        write_atomic(path, snapshot.dumps().encode() if data is None else data)
        write_atomic(fingerprint, snapshot.fingerprint.encode())

    def _save_environment(self, name: str, items: interpreter.Digest) -> None:
        data = json.dumps(items, sort_keys=True, separators=(",", ":"))
        write_atomic(self._session / f"environment-{name}.json", data.encode())

    def _load_environment(self, name: str) -> interpreter.Digest | None:
        path = self._session / f"environment-{name}.json"
        try:
            data = json.loads(path.read_bytes())
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            raise InvalidInput(f"cannot read workspace state {path}: {exc}") from None
        if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
            raise InvalidInput(f"not an environment digest: {path}")
        return {str(k): v for k, v in data.items()}

    def _fingerprint(self, path: Path) -> str | None:
        try:
            return path.with_suffix(".fingerprint").read_text()
        except (OSError, UnicodeDecodeError):
            return None


def _newer(path: Path, than: Path) -> bool:
    try:
        return path.stat().st_mtime_ns > than.stat().st_mtime_ns
    except FileNotFoundError:
        return False


def _from_json(path: Path, data: bytes) -> Snapshot:
    try:
        parsed = json.loads(data)
    except ValueError as exc:
        raise InvalidInput(f"cannot read workspace state {path}: {exc}") from None
    return Snapshot.from_json(parsed)


def _from_record(path: Path, data: bytes) -> Snapshot:
    snapshot = Snapshot.from_record(data)
    if snapshot is None:
        raise InvalidInput(f"cannot read workspace state {path}: damaged, or of another format")
    return snapshot


def _inside(state_dir: Path, root: Path) -> tuple[str, ...]:
    """An ignore pattern for the state directory when it lies inside the workspace."""
    try:
        rel = state_dir.relative_to(root)
    except ValueError:
        return ()
    return (f"/{rel.as_posix()}/",) if rel.parts else ()
