"""Who wrote what in a workspace: agents' writes, and what a person accepted since.

Protection measured against a session's own start is not enough: a test weakened in one session
is the baseline of the next. So every write donegate sees in a gated session is remembered here,
per workspace and across sessions, with the content the agent left. A path whose current content
is the content an agent wrote, and that no person has accepted since, is *tainted*: a check whose
judge reads it (a protected test, a runner file, ``donegate.toml``) does not count.

A person accepts content by running ``donegate accept``, or implicitly by changing the tree while
no agent works in it: changes that appear between sessions, or between a let-go stop and the next
prompt, are taken as the person's (and noted). Committing does not launder a write: agents commit.

Digests are the workspace snapshots' (git blob ids); ``None`` stands for "absent", so a deletion
is content too: a protected test that an agent deleted stays tainted until a person accepts it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path

from donegate.errors import InvalidInput
from donegate.workspace._files import write_atomic

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

FORMAT_VERSION = 1
Digest = str | None


class Authorship:
    """The record of one workspace. Load, change and save under the workspace's lock."""

    def __init__(
        self,
        agent: dict[str, dict[str, Any]] | None = None,
        accepted: dict[str, dict[str, Any]] | None = None,
    ) -> None:
        self.agent: dict[str, dict[str, Any]] = agent or {}
        self.accepted: dict[str, dict[str, Any]] = accepted or {}

    @classmethod
    def load(cls, path: Path) -> Authorship:
        """The record at ``path`` (empty when there is none); ``InvalidInput`` when damaged."""
        try:
            data = json.loads(path.read_bytes())
        except FileNotFoundError:
            return cls()
        except (OSError, ValueError) as exc:
            raise InvalidInput(f"cannot read the authorship record {path}: {exc}") from None
        if not isinstance(data, dict) or data.get("version") != FORMAT_VERSION:
            raise InvalidInput(f"{path}: not a donegate authorship record")
        agent, accepted = data.get("agent"), data.get("accepted")
        if not _records(agent) or not _records(accepted):
            raise InvalidInput(f"{path}: not a donegate authorship record")
        return cls(agent, accepted)

    def save(self, path: Path) -> None:
        """Write the record atomically."""
        data = {"version": FORMAT_VERSION, "agent": self.agent, "accepted": self.accepted}
        # ensure_ascii: a file name that is not UTF-8 (a lone surrogate here) survives as \\udcXX.
        write_atomic(path, json.dumps(data, sort_keys=True).encode("ascii"))

    def is_accepted(self, path: str, digest: Digest) -> bool:
        """Whether a person accepted exactly this content of ``path``."""
        record = self.accepted.get(path)
        return record is not None and record.get("digest") == digest

    def agent_wrote(self, path: str, digest: Digest) -> bool:
        """Whether an agent's last write of ``path`` left exactly this content."""
        record = self.agent.get(path)
        return record is not None and record.get("digest") == digest

    def is_tainted(self, path: str, digest: Digest) -> bool:
        """Content an agent wrote that no person has accepted since."""
        return self.agent_wrote(path, digest) and not self.is_accepted(path, digest)

    def tainted(self, current: Mapping[str, str]) -> frozenset[str]:
        """The tainted paths, given the current digest of every path (absent: not a key)."""
        return frozenset(p for p in self.agent if self.is_tainted(p, current.get(p)))

    def record_agent(self, writes: Iterable[tuple[str, Digest]], session: str, at: str) -> None:
        """Remember what an agent left at each path (``None``: it deleted the file)."""
        for path, digest in writes:
            if not self.is_accepted(path, digest):
                self.agent[path] = {"digest": digest, "session": session, "at": at}

    def accept(self, path: str, digest: Digest, *, how: str, by: str, at: str) -> None:
        """Record that a person accepted this content of ``path``."""
        self.accepted[path] = {"digest": digest, "how": how, "by": by, "at": at}

    def revoke(self, since: str, how: str = "command") -> list[str]:
        """Withdraw acceptances of kind ``how`` made at or after ``since``; the paths."""
        gone = [p for p, r in self.accepted.items() if r.get("how") == how and r["at"] >= since]
        for path in gone:
            del self.accepted[path]
        return gone


def _records(value: object) -> bool:
    return isinstance(value, dict) and all(
        isinstance(k, str) and isinstance(v, dict) and isinstance(v.get("at", ""), str)
        for k, v in value.items()
    )
