"""``donegate doctor``: is this repository's gate really in place, and has it ever fired?

Users of every stop-hook tool report hooks that silently never run: a path mistyped in the
settings, a Codex hook nobody trusted, a host that reads another file. Each finding here says what
is wrong and the command that fixes it.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from donegate import reach
from donegate.errors import InvalidInput
from donegate.hooks import confinement
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
        gates = TRUST_GATES[host](self, events) if host in TRUST_GATES else []
        found.extend(gates)
        found.append(self.confined(host))
        if host == "claude-code":
            found.append(self.key_hidden())
        if host == "gemini-cli":
            found.extend(self.gemini_sandbox_files())
        found.append(self.fired(host, [g for g in gates if not g.ok]))
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

    def codex_trust(self, events: list[str]) -> list[Finding]:
        """Codex runs a project's hooks only in a trusted project, and only hooks a person
        trusted (``/hooks``); both are kept in ``$CODEX_HOME/config.toml``."""
        config = confinement.codex_home(os.environ) / "config.toml"
        try:
            user = tomllib.loads(config.read_text(encoding="utf-8")) if config.exists() else {}
        except (OSError, tomllib.TOMLDecodeError) as exc:
            return [Finding(False, f"codex: cannot read {config}: {exc}", f"fix {config}")]
        project = Finding(True, f"codex: the project {self.root} is trusted in {config}")
        if not confinement.codex_trusts_project(user, self.root):
            project = Finding(
                False,
                f"codex: the project {self.root} is not trusted in {config}: Codex loads "
                "neither its hooks nor its .codex/config.toml",
                f"open Codex in {self.root} and trust the project (codex exec: --trust)",
            )
        return [project, self._codex_hooks_trusted(user, config, events)]

    def _codex_hooks_trusted(
        self, user: dict[str, Any], config: Path, events: list[str]
    ) -> Finding:
        hooks_file = (self.root / installer.HOSTS["codex"].settings).resolve()
        state = _table(_table(user, "hooks"), "state")
        seen: dict[str, list[str]] = {"untrusted": [], "modified": [], "disabled": []}
        for event, key, digest in _codex_handlers(hooks_file, events):
            entry = _table(state, key)
            if entry.get("enabled") is False:
                seen["disabled"].append(event)
            elif not isinstance(entry.get("trusted_hash"), str):
                seen["untrusted"].append(event)
            elif entry["trusted_hash"] != digest:
                seen["modified"].append(event)
        return _codex_trust_finding(seen, config)

    def copilot_trust(self, events: list[str]) -> list[Finding]:
        """Copilot CLI loads a repository's hooks only in a folder the person trusted."""
        config = confinement.copilot_home(os.environ) / "config.json"
        if os.environ.get("COPILOT_ALLOW_ALL") == "true":
            return [Finding(True, "copilot: COPILOT_ALLOW_ALL=true trusts every folder")]
        try:
            data = _copilot_config(config.read_text(encoding="utf-8")) if config.exists() else {}
        except (OSError, ValueError) as exc:
            return [Finding(False, f"copilot: cannot read {config}: {exc}", f"fix {config}")]
        here = self.root.resolve()
        for folder in _copilot_trusted(data):
            if here.is_relative_to(Path(folder).resolve()):
                return [Finding(True, f"copilot: {folder} is a trusted folder in {config}")]
        return [
            Finding(
                False,
                f"copilot: {self.root} is not a trusted folder in {config}: Copilot CLI "
                "silently loads no repository hooks here",
                f"start copilot in {self.root} and trust the folder for future sessions "
                f"(or add it to trustedFolders in {config})",
            )
        ]

    def gemini_trust(self, events: list[str]) -> list[Finding]:
        """Gemini CLI exits 55 in an untrusted folder, and loads no project settings there."""
        try:
            trusted = confinement.gemini_trusts(self.root, os.environ)
        except (OSError, ValueError) as exc:
            return [Finding(False, f"gemini-cli: cannot read its trusted folders: {exc}")]
        if trusted:
            return [Finding(True, f"gemini-cli: {self.root} is a trusted folder")]
        rules = confinement.gemini_dir(os.environ) / "trustedFolders.json"
        how = "marked DO_NOT_TRUST" if trusted is False else "not a trusted folder"
        # Seen with 0.61: --skip-trust, which its exit-55 message offers, starts the session
        # without the project's settings: the agent works, and no hook of donegate's runs.
        return [
            Finding(
                False,
                f"gemini-cli: {self.root} is {how} in {rules}: Gemini CLI exits 55 here, and "
                "with --skip-trust runs without the project's settings: no donegate hook, no "
                "tool sandbox",
                f"run gemini in {self.root} and trust the folder "
                f'(or set "{self.root}": "TRUST_FOLDER" in {rules}; headless: '
                "GEMINI_CLI_TRUST_WORKSPACE=true, never --skip-trust)",
            )
        ]

    def gemini_sandbox_files(self) -> list[Finding]:
        """Gemini CLI's tool sandbox makes an empty .gitignore and .geminiignore at its first
        command where they are missing: a stop would count them as the agent's writes."""
        if confinement.sandbox_of("gemini-cli", self.root, os.environ) is None:
            return []
        missing = [n for n in installer.GEMINI_SANDBOX_FILES if not (self.root / n).exists()]
        if not missing:
            return [Finding(True, "gemini-cli: the files its tool sandbox would make are here")]
        what = (
            f"gemini-cli: no {' or '.join(missing)}: Gemini CLI's tool sandbox makes them at "
            "the agent's first command, and a stop counts them as the agent's writes"
        )
        return [Finding(False, what, "donegate init gemini-cli (makes them, empty)")]

    def confined(self, host: str) -> Finding:
        """The host's own sandbox keeps the agent's commands out of donegate's state."""
        sandbox = confinement.sandbox_of(host, self.root, os.environ)
        state = self.layout.state_dir
        if sandbox is None:
            what = f"{host}: nothing known confines the agent: its commands can rewrite donegate"
            return Finding(False, what, CONFINE_FIX[host])
        if sandbox.reaches(state):
            what = f"{host}: {sandbox.text}, but it lets the agent write donegate's state {state}"
            return Finding(False, what, STATE_FIX)
        return Finding(True, f"{host}: the agent is confined: {sandbox.text}")

    def key_hidden(self) -> Finding:
        """Claude Code's sandbox reads the whole machine: not donegate's signing key, with which
        the agent would sign evidence of its own making as donegate's."""
        try:
            readable = confinement.claude_readable_keys(
                self.root, os.environ, self.layout.state_dir
            )
        except (OSError, ValueError) as exc:  # a settings file that cannot be read
            return Finding(False, f"claude-code: its settings cannot be read: {exc}", None)
        if readable:
            what = f"claude-code: the agent can read donegate's signing key: no {readable[0]}"
            return Finding(False, what, "donegate init claude-code (denies reading it)")
        return Finding(True, "claude-code: donegate's signing key is denied to the agent")

    def fired(self, host: str, gates: list[Finding] | None = None) -> Finding:
        """Whether the hooks fired; when not, whether they cannot (a gate above) or have not yet."""
        seen = self.layout.seen(self.root.resolve(), host)
        try:
            record = json.loads(seen.read_bytes())
        except (OSError, ValueError):
            if gates:
                return Finding(
                    False, f"{host}: its hooks cannot fire here (see above)", gates[0].fix
                )
            return Finding(
                False,
                f"{host}: has not fired yet: its hooks have never fired in this repository",
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


def _copilot_config(text: str) -> Any:
    """Copilot CLI's config.json: JSON under whole-line ``//`` comments, which it writes on top
    of the file (seen in 1.0.102)."""
    lines = [line for line in text.splitlines() if not line.lstrip().startswith("//")]
    return json.loads("\n".join(lines) or "{}")


def _copilot_trusted(data: Any) -> list[str]:
    """The folders trusted in Copilot CLI's config.json: ``trustedFolders`` (1.0.102 writes it,
    and moves ``trusted_folders`` there), ``trusted_folders`` (older versions)."""
    if not isinstance(data, dict):
        return []
    found = [data.get("trustedFolders"), data.get("trusted_folders")]
    return [
        f for folders in found if isinstance(folders, list) for f in folders if isinstance(f, str)
    ]


def _snake(event: str) -> str:
    """Codex's name for an event in its trust keys: ``SubagentStop`` is ``subagent_stop``."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", event).lower()


def _table(data: object, key: str) -> dict[str, Any]:
    value = data.get(key) if isinstance(data, dict) else None
    return value if isinstance(value, dict) else {}


def _codex_handlers(hooks_file: Path, events: list[str]) -> list[tuple[str, str, str]]:
    """donegate's handlers in Codex's hooks file: (event, Codex's trust key, Codex's hash)."""
    try:
        hooks = _table(json.loads(hooks_file.read_text(encoding="utf-8")), "hooks")
    except (OSError, ValueError):
        return [(event, "", "") for event in events]
    found = []
    for event in events:
        groups = hooks.get(event)
        for g, group in enumerate(groups if isinstance(groups, list) else []):
            handlers = group.get("hooks") if isinstance(group, dict) else None
            for h, handler in enumerate(handlers if isinstance(handlers, list) else []):
                if isinstance(handler, dict) and installer.is_ours(handler.get("command"), "codex"):
                    key = f"{hooks_file}:{_snake(event)}:{g}:{h}"
                    found.append(
                        (event, key, codex_hook_hash(event, group.get("matcher"), handler))
                    )
    return found


def codex_hook_hash(event: str, matcher: object, handler: dict[str, Any]) -> str:
    """The hash Codex records when a person trusts a command hook, of the hook as Codex
    normalizes it (codex-rs ``command_hook_hash``): a sha256 of the sorted, compact JSON of its
    event, matcher and handler, the timeout defaulting to 600 s. A hook edited after it was
    trusted (a new ``init`` from another interpreter) no longer has it, and Codex skips it."""
    import hashlib

    timeout = handler.get("timeout")
    normalized: dict[str, Any] = {
        "type": "command",
        "command": handler.get("command"),
        "timeout": max(timeout, 1) if isinstance(timeout, int) else 600,
        "async": handler.get("async") is True,
    }
    if isinstance(handler.get("statusMessage"), str):
        normalized["statusMessage"] = handler["statusMessage"]
    identity: dict[str, Any] = {"event_name": _snake(event), "hooks": [normalized]}
    if isinstance(matcher, str) and matcher.strip() and event not in _CODEX_UNMATCHED:
        identity["matcher"] = matcher
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


# The events whose matcher Codex ignores, and so leaves out of the hash.
_CODEX_UNMATCHED = frozenset({"UserPromptSubmit", "Stop"})


def _codex_trust_finding(seen: dict[str, list[str]], config: Path) -> Finding:
    trust = "open Codex in this repository, run /hooks, and trust donegate's hooks"
    if seen["untrusted"]:
        return Finding(
            False,
            f"codex: no trust recorded in {config} for donegate's "
            f"{', '.join(seen['untrusted'])} hooks (Codex skips untrusted hooks)",
            trust,
        )
    if seen["modified"]:
        return Finding(
            False,
            f"codex: donegate's {', '.join(seen['modified'])} hooks changed since they were "
            f"trusted in {config} (Codex skips a changed hook until it is trusted again)",
            trust + " again",
        )
    if seen["disabled"]:
        return Finding(
            False,
            f"codex: donegate's {', '.join(seen['disabled'])} hooks are disabled in {config}",
            "open Codex in this repository, run /hooks, and enable donegate's hooks",
        )
    return Finding(True, "codex: donegate's hooks are trusted (again after any new init)")


TRUST_GATES: dict[str, Callable[[Doctor, list[str]], list[Finding]]] = {
    "codex": Doctor.codex_trust,
    "copilot": Doctor.copilot_trust,
    "gemini-cli": Doctor.gemini_trust,
}
CONFINE_FIX = {
    "claude-code": "donegate init claude-code (its sandbox, no unsandboxed fallback; on Linux "
    "Claude Code needs bubblewrap and socat)",
    "codex": "donegate init codex (sandbox_mode = workspace-write), in a project Codex trusts",
    "gemini-cli": "donegate init gemini-cli (security.toolSandboxing), in a folder Gemini trusts",
    "copilot": "run /sandbox enable in Copilot CLI, and put donegate's state directory in "
    "sandbox.userPolicy.filesystem.deniedPaths of ~/.copilot/settings.json",
    "cursor": "none from donegate: Cursor keeps its sandbox in the editor, in no file donegate "
    "can write or read",
}
STATE_FIX = (
    "set DONEGATE_STATE_DIR to a directory outside the workspace, /tmp and the sandbox's "
    "writable roots (the default, ~/.local/state/donegate, is)"
)


def report(findings: list[Finding], say: Callable[[str], None]) -> bool:
    """Print each finding with its fix; whether everything holds."""
    for finding in findings:
        mark = "ok " if finding.ok else "NO "
        say(f"{mark} {finding.what}")
        if not finding.ok and finding.fix:
            say(f"      fix: {finding.fix}")
    return all(f.ok for f in findings)
