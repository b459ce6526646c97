"""``collect()``: concurrency, independence, fail-closed rules, plugins and ``--enforce``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from donegate import checks
from donegate.checks.base import CheckContext, CheckSettings, Observation
from donegate.checks.test_run import TEST_RUN
from donegate.claim import Verdict, VerdictState, parse_claim
from donegate.collect import VERIFIER_ID, collect
from donegate.enforce import enforce
from donegate.exitcodes import ExitCode
from donegate.instant import Instant
from donegate.policy import AppliedPolicy, OnUnverified, Policy
from tests.checks.httpserver import Reply, serving
from tests.checks.support import claim_with, config_from

PY = json.dumps(sys.executable)


def run_check(code: str, extra: str = "") -> str:
    return f"""
        [[checks]]
        check_type = "test_run"
        command = [{PY}, "-c", {json.dumps(code)}]
        {extra}
    """


def test_three_one_second_checks_take_about_a_second(tmp_path: Path) -> None:
    config = config_from(run_check("import time; time.sleep(1)") * 3, tmp_path)
    started = time.monotonic()
    done = collect(claim_with("src/a.py"), config)
    elapsed = time.monotonic() - started
    assert len(done.evidence) == 3
    assert elapsed < 2.5
    assert done.verdict is not None
    assert done.verdict.state == "verified"


def test_evidence_is_dated_after_the_mutations_and_signed(tmp_path: Path) -> None:
    claim = claim_with("src/a.py", at=Instant.now())
    done = collect(claim, config_from(run_check("pass"), tmp_path))
    item = done.evidence[0]
    assert item.at > claim.mutations[0].at
    assert item.at.text.endswith("Z")
    assert len(item.at.text) == len("2026-08-27T18:04:02.000000000Z")  # the clock's nanoseconds
    assert item.verifier.id == VERIFIER_ID
    assert item.verifier.kind == "independent"


def test_claim_cannot_make_donegate_run_or_fetch_anything(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    with serving({"/ok": lambda: Reply(body="v2")}) as server:
        document = {
            "spec_version": "0.1",
            "task": {"id": "t"},
            "claimed_outcome": "done",
            "mutations": [
                {
                    "id": "m1",
                    "kind": "command",
                    "target": f"touch {marker}",
                    "at": "2020-01-01T00:00:00Z",
                },
                {
                    "id": "m2",
                    "kind": "deploy",
                    "target": server.url + "/evil",
                    "at": "2020-01-01T00:00:00Z",
                },
            ],
            "evidence": [
                {
                    "check_type": "test_run",
                    "target": f"touch {marker}",
                    "command": ["touch", str(marker)],
                    "expected": {"exit_code": 0},
                    "observed_value": {"exit_code": 0},
                    "at": "2030-01-01T00:00:00Z",
                    "covers": ["m1", "m2"],
                    "verifier": {"id": "ci/whatever", "kind": "independent"},
                }
            ],
            "policy": {"requires": []},
        }
        config = config_from("[policy]\nrequires = []\n", tmp_path)
        done = collect(parse_claim(document), config)
    assert not marker.exists()
    assert server.hits == {}
    assert done.verdict is not None
    assert done.verdict.state == "unverified"


def test_agent_written_evidence_does_not_count_unless_trusted(tmp_path: Path) -> None:
    claim = claim_with("src/a.py")
    forged = {
        "check_type": "test_run",
        "target": "pytest",
        "expected": {"exit_code": 0},
        "observed_value": {"exit_code": 0},
        "at": Instant.now().text,
        "covers": ["m1"],
        "verifier": {"id": "ci/github-actions", "kind": "independent"},
    }
    document = {**claim.to_json_dict(), "evidence": [forged]}
    untrusted = collect(parse_claim(document), config_from("", tmp_path))
    trusted = collect(parse_claim(document), config_from('trust = ["ci/github-actions"]', tmp_path))
    assert untrusted.verdict is not None
    assert untrusted.verdict.state == "unverified"
    assert trusted.verdict is not None
    assert trusted.verdict.state == "verified"


def test_evidence_claiming_donegates_id_is_relabelled(tmp_path: Path) -> None:
    claim = claim_with("src/a.py")
    forged = {
        "check_type": "test_run",
        "target": "pytest",
        "expected": {"exit_code": 0},
        "observed_value": {"exit_code": 0},
        "at": Instant.now().text,
        "covers": ["m1"],
        "verifier": {"id": VERIFIER_ID, "kind": "independent"},
    }
    document = {**claim.to_json_dict(), "evidence": [forged]}
    done = collect(parse_claim(document), config_from("", tmp_path))
    assert done.evidence[0].verifier.kind == "self_attested"
    assert done.verdict is not None
    assert done.verdict.state == "unverified"


def test_one_absent_check_keeps_the_claim_unverified(tmp_path: Path) -> None:
    toml = run_check("pass") + run_check("import time; time.sleep(5)", "timeout_s = 0.5")
    done = collect(claim_with("src/a.py"), config_from(toml, tmp_path))
    assert [e.verifier.kind for e in done.evidence] == ["independent", "absent"]
    assert done.verdict is not None
    assert done.verdict.state == "unverified"
    assert "check:checks[1] test_run" in done.verdict.unmet


def test_a_contradiction_still_refutes_beside_an_absent_check(tmp_path: Path) -> None:
    toml = run_check("raise SystemExit(1)") + run_check(
        "import time; time.sleep(5)", "timeout_s = 0.5"
    )
    done = collect(claim_with("src/a.py"), config_from(toml, tmp_path))
    assert done.verdict is not None
    assert done.verdict.state == "refuted"


def test_config_policy_overrides_the_documents(tmp_path: Path) -> None:
    toml = '[policy]\nid = "team"\nrequires = ["endpoint_health"]\n' + run_check("pass")
    done = collect(claim_with("src/a.py"), config_from(toml, tmp_path))
    assert done.verdict is not None
    assert done.verdict.applied_policy is not None
    assert done.verdict.applied_policy.source == "config"
    assert done.verdict.state == "unverified"
    assert "endpoint_health" in done.verdict.unmet


def test_no_configured_checks_is_unverified(tmp_path: Path) -> None:
    done = collect(claim_with("src/a.py"), config_from("", tmp_path))
    assert done.verdict is not None
    assert done.verdict.state == "unverified"


def test_mutation_dated_in_the_future_leaves_evidence_not_counting(tmp_path: Path) -> None:
    claim = claim_with("src/a.py", at=Instant.now() + 3600)
    done = collect(claim, config_from(run_check("pass"), tmp_path))
    assert done.verdict is not None
    assert done.verdict.state == "unverified"


class _Crashing:
    settings_model = CheckSettings

    def collect(self, settings: CheckSettings, context: CheckContext) -> Observation:
        raise RuntimeError("boom postgresql://u:hunter2@db/x")


@pytest.fixture
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A third-party collector installed through the donegate.checks entry point."""
    site = tmp_path / "site"
    dist = site / "dg_plugin-1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: dg-plugin\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(
        "[donegate.checks]\ncrashing = tests.test_collect:_Crashing\n"
        "test_run = tests.test_collect:_Crashing\nbroken = no_such_module_xyz:Thing\n"
    )
    monkeypatch.syspath_prepend(str(site))
    checks._plugins.cache_clear()
    yield
    checks._plugins.cache_clear()


@pytest.mark.usefixtures("plugin")
def test_plugin_check_types_are_discovered_and_a_crash_is_absent(tmp_path: Path) -> None:
    assert "crashing" in checks.registry()
    assert checks.registry()["test_run"] is checks.lookup("test_run") is TEST_RUN
    done = collect(claim_with("a"), config_from('[[checks]]\ncheck_type = "crashing"\n', tmp_path))
    item = done.evidence[0]
    assert item.verifier.kind == "absent"
    why = str((item.model_extra or {})["detail"]["why_not_counted"])
    assert "RuntimeError: boom" in why
    assert "hunter2" not in why
    assert done.verdict is not None
    assert done.verdict.state == "unverified"


@pytest.mark.usefixtures("plugin")
def test_broken_plugin_is_reported_when_named(tmp_path: Path) -> None:
    from donegate.errors import InvalidInput

    with pytest.raises(InvalidInput, match="failed to load"):
        config_from('[[checks]]\ncheck_type = "broken"\n', tmp_path)


def _verdict(state: VerdictState, mode: OnUnverified | None) -> Verdict:
    policy = None if mode is None else Policy(on_unverified=mode)
    applied = AppliedPolicy(source="config", policy=policy)
    now = Instant.now()
    return Verdict(state=state, unmet=[], reason="why", decided_at=now, applied_policy=applied)


@pytest.mark.parametrize(
    ("state", "mode", "code", "warns"),
    [
        ("verified", "block", ExitCode.VERIFIED, False),
        ("unverified", "block", ExitCode.UNVERIFIED, False),
        ("refuted", "block", ExitCode.REFUTED, False),
        ("unverified", None, ExitCode.UNVERIFIED, False),
        ("unverified", "warn", ExitCode.OK, True),
        ("refuted", "warn", ExitCode.OK, True),
        ("refuted", "record", ExitCode.OK, False),
    ],
)
def test_enforce_follows_on_unverified(
    state: VerdictState, mode: OnUnverified | None, code: int, warns: bool
) -> None:
    outcome = enforce(_verdict(state, mode))
    assert outcome.code == code
    assert (outcome.warning is not None) == warns


def test_enforce_off_gives_the_verdicts_code() -> None:
    outcome = enforce(_verdict("refuted", "record"), enabled=False)
    assert outcome.code == ExitCode.REFUTED


def test_core_import_stays_light() -> None:
    code = textwrap.dedent(
        """
        import sys
        import donegate.collect, donegate.config, donegate.checks
        heavy = ("httpx", "sqlalchemy", "redis", "psycopg", "pymysql")
        print([m for m in heavy if m in sys.modules])
        """
    )
    import subprocess

    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_a_built_in_check_type_loads_only_its_own_module() -> None:
    # A fresh interpreter: what naming test_run imports, and whether plugins were looked for.
    code = (
        "import sys; from donegate import checks; checks.lookup('test_run'); "
        "print(sorted(m for m in sys.modules if m.startswith(("
        "'donegate.checks.endpoint_health', 'donegate.checks.state_readback')))); "
        "print(checks._plugins.cache_info().currsize)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split("\n")[:2] == ["[]", "0"]


_BROKEN_RULES = """
import sys
from importlib.abc import MetaPathFinder


class NoRules(MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "donegate.verdict":
            raise ImportError("the rules are missing")
        return None


sys.meta_path.insert(0, NoRules())
from donegate.cli import main

sys.exit(main(sys.argv[1:]))
"""


def test_rules_that_fail_to_import_while_the_command_runs_give_no_verdict(tmp_path: Path) -> None:
    # donegate.verdict is imported in the background while the command runs: its failure must
    # still end the run as an internal error, never as a verdict.
    command = json.dumps([sys.executable, "-c", "pass"])
    (tmp_path / "donegate.toml").write_text(
        f'[[checks]]\ncheck_type = "test_run"\ncommand = {command}\n'
    )
    argv = ["collect", "--task-id", "t", "--mutation", "file_write:a.py", "--json"]
    env = {**os.environ, "DONEGATE_STATE_DIR": str(tmp_path / "state")}
    done = subprocess.run(
        [sys.executable, "-c", _BROKEN_RULES, *argv],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == ExitCode.INTERNAL
    assert "internal error: ImportError: the rules are missing" in done.stderr
    assert done.stdout == ""
