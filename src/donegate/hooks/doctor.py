"""``donegate doctor``: is this repository's gate really in place, and has it ever fired?

Users of every stop-hook tool report hooks that silently never run: a path mistyped in the
settings, a Codex hook nobody trusted, a host that reads another file. Each finding here says what
is wrong and the command that fixes it.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from pathlib import Path

from donegate import reach
from donegate.errors import InvalidInput
from donegate.hooks import install as installer
from donegate.record import Record
from donegate.session.layout import Layout
from donegate.session.settings import CONFIG_FILE


class Finding(Record):
    """One thing checked: whether it holds, what was seen, and how to fix it when it does not."""

    ok: bool
    what: str
    fix: str | None = None


class Doctor:
    """The checks for the repository at ``root``, with donegate's state in ``state_dir``."""

    def __init__(self, root: Path, state_dir: Path, *, run_checks: bool = True) -> None:
        self.root = root
        self.layout = Layout(state_dir)
        self.run_checks = run_checks

    def findings(self) -> list[Finding]:
        """Every check, in the order a person would fix them."""
        found = [self.state_dir(), self.judge()]
        hosts = [h for h in installer.HOSTS if (self.root / installer.HOSTS[h].settings).exists()]
        if not any(installer.installed(self.root, h) for h in hosts):
            found.append(
                Finding(False, "no host's hooks are installed here", "donegate init claude-code")
            )
        for host in hosts:
            found.extend(self.host(host))
        found.extend(self.config())
        return found

    def state_dir(self) -> Finding:
        where = self.layout.state_dir
        try:
            where.mkdir(parents=True, exist_ok=True, mode=0o700)
            with tempfile.NamedTemporaryFile(dir=where):
                pass
        except OSError as exc:
            fix = f"make {where} writable, or set DONEGATE_STATE_DIR to a writable directory"
            return Finding(False, f"state directory {where} is not writable: {exc}", fix)
        return Finding(True, f"state directory {where} is writable")

    def judge(self) -> Finding:
        """donegate's own code, environment and state must lie outside the agent's reach."""
        exposed = reach.inside(self.root, self.layout.state_dir)
        if exposed:
            what = f"the agent can rewrite its own judge: {'; '.join(exposed)} inside {self.root}"
            return Finding(False, what, reach.FIX)
        return Finding(True, "donegate's code, environment and state lie outside the repository")

    def host(self, host: str) -> list[Finding]:
        spec = installer.HOSTS[host]
        events = installer.installed(self.root, host)
        if not events:
            return []
        missing = [e for e in spec.events if e not in events]
        found = [
            Finding(
                not missing,
                f"{host}: hooks in {spec.settings}"
                + (f", missing {', '.join(missing)}" if missing else ""),
                f"donegate init {host}" if missing else None,
            )
        ]
        found.append(self.command(host))
        if host == "codex":
            found.append(self.codex_trust())
        found.append(self.fired(host))
        return found

    def command(self, host: str) -> Finding:
        """The installed hook command runs this donegate, and nothing the agent can put first."""
        risks = [
            risk
            for command in installer.installed_commands(self.root, host)
            for risk in reach.command_risks(command, self.root)
        ]
        if risks:
            what = f"{host}: the hook command may run the agent's code: {'; '.join(risks)}"
            return Finding(False, what, f"donegate init {host}")
        return Finding(True, f"{host}: the hook command names its interpreter, isolated")

    def codex_trust(self) -> Finding:
        """Codex runs a project's hooks only once a person trusted them in ``/hooks``."""
        hooks_file = str((self.root / installer.HOSTS["codex"].settings).resolve())
        for config in (Path.home() / ".codex" / "config.toml", self.root / ".codex/config.toml"):
            try:
                text = config.read_text(encoding="utf-8")
            except OSError:
                continue
            if "trusted_hash" in text and hooks_file in text:
                return Finding(True, "codex: donegate's hooks are trusted")
        return Finding(
            False,
            "codex: no trust recorded for .codex/hooks.json (Codex skips untrusted hooks)",
            "open Codex in this repository, run /hooks, and trust donegate's hooks",
        )

    def fired(self, host: str) -> Finding:
        seen = self.layout.seen(self.root.resolve(), host)
        try:
            record = json.loads(seen.read_bytes())
        except (OSError, ValueError):
            return Finding(
                False,
                f"{host}: its hooks have never fired in this repository",
                f"run one {host} agent turn here, then `donegate doctor` again",
            )
        return Finding(True, f"{host}: last hook call {record.get('event')} at {record.get('at')}")

    def config(self) -> list[Finding]:
        path = self.root / CONFIG_FILE
        if not path.exists():
            return [Finding(False, f"no {CONFIG_FILE}: nothing is checked", "donegate init HOST")]
        from donegate.config import load_config

        try:
            config = load_config(path)
        except InvalidInput as exc:
            return [Finding(False, f"{CONFIG_FILE} is invalid: {exc}", f"edit {path}")]
        found = [Finding(True, f"{CONFIG_FILE} is valid ({len(config.checks)} checks)")]
        found.append(self.accepted(path))
        if self.run_checks and config.checks:
            found.append(self.checks_run(config))
        return found

    def accepted(self, path: Path) -> Finding:
        from donegate.session.accept import Acceptance

        try:
            candidates = Acceptance(self.layout.state_dir, self.root).candidates([])
        except (InvalidInput, OSError) as exc:
            return Finding(
                False,
                f"cannot tell whether {CONFIG_FILE} is a person's: {exc}",
                "fix the state directory (see above)",
            )
        if any(c.path == CONFIG_FILE for c in candidates):
            return Finding(
                False,
                f"{CONFIG_FILE} holds content an agent wrote that no person accepted",
                f"review it, then: donegate accept {CONFIG_FILE}",
            )
        return Finding(True, f"{CONFIG_FILE} is a person's (accepted)")

    def checks_run(self, config: object) -> Finding:
        """Run the configured checks once, as a stop would, and say whether each observed."""
        from donegate.claim import parse_claim
        from donegate.collect import collect_evidence
        from donegate.config import Config

        assert isinstance(config, Config)
        claim = parse_claim(
            {
                "spec_version": "0.1",
                "task": {"id": "doctor"},
                "claimed_outcome": "doctor",
                "mutations": [],
            }
        )
        evidence = collect_evidence(claim, config)
        blind = [e for e in evidence if e.verifier.kind != "independent"]
        if not blind:
            return Finding(True, f"all {len(evidence)} configured checks ran and observed")
        why = "; ".join(
            f"{e.check_type} {e.target}: {getattr(e, 'detail', {}).get('why_not_counted')}"
            for e in blind
        )
        return Finding(
            False, f"checks that could not observe: {why}", f"fix the checks in {CONFIG_FILE}"
        )


def report(findings: list[Finding], say: Callable[[str], None]) -> bool:
    """Print each finding with its fix; whether everything holds."""
    for finding in findings:
        mark = "ok " if finding.ok else "NO "
        say(f"{mark} {finding.what}")
        if not finding.ok and finding.fix:
            say(f"      fix: {finding.fix}")
    return all(f.ok for f in findings)
