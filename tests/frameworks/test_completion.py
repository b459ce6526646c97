"""The framework gate with no framework: a plain Python agent's tools, its end, its receipts.

Each test drives the gate as an agent loop would, against a real SQLite file that a readback
reads; what the gate decides is compared with what the world holds.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest

from donegate import frameworks
from donegate.errors import InvalidInput
from donegate.frameworks import CompletionGate, NotVerified
from tests.frameworks.support import ACCOUNT, NEW, OLD, TASK, Accounts, readback_config, receipts


@pytest.fixture
def accounts(tmp_path: Path) -> Accounts:
    return Accounts.create(tmp_path)


def gate_for(
    tmp_path: Path,
    accounts: Accounts,
    *,
    requires_write: bool | None = None,
    strict: bool = False,
) -> CompletionGate:
    config = readback_config(tmp_path, accounts.url)
    return CompletionGate(
        config,
        agent="support-bot",
        task=TASK,
        state_dir=tmp_path / "state",
        requires_write=requires_write,
        strict=strict,
    )


def updater(gate: CompletionGate, accounts: Accounts) -> Callable[[int, str], str]:
    @gate.mutation(kind="state_write", target="accounts/{account_id}")
    def update_address(account_id: int, address: str) -> str:
        accounts.write(account_id, address)
        return "updated"

    return update_address


def test_a_true_done_verifies_at_once_with_one_receipt(tmp_path: Path, accounts: Accounts) -> None:
    gate = gate_for(tmp_path, accounts)
    updater(gate, accounts)(ACCOUNT, NEW)
    outcome = gate.check(f"Updated account {ACCOUNT}.")
    assert (outcome.allowed, outcome.verified, outcome.verdict) == (True, True, "verified")
    assert outcome.reason == "verified_after_write"
    [receipt] = receipts(tmp_path / "state")
    assert (receipt.id, receipt.verdict, receipt.decision) == (
        outcome.receipt_id,
        "verified",
        "allow",
    )
    assert receipt.host == "python"
    assert receipt.session_id == outcome.session_id
    [mutation] = receipt.claim["mutations"]
    assert (mutation["kind"], mutation["target"]) == ("state_write", f"accounts/{ACCOUNT}")


def test_a_wrong_value_is_sent_back_with_what_was_observed(
    tmp_path: Path, accounts: Accounts
) -> None:
    gate = gate_for(tmp_path, accounts)
    update = updater(gate, accounts)
    update(ACCOUNT, "9 New Str")  # the agent's typo
    first = gate.check("Done.")
    assert first.sent_back
    assert not first.verified
    assert first.verdict == "refuted"
    assert first.message is not None
    assert '"9 New Str"' in first.message
    assert f'"{NEW}"' in first.message
    update(ACCOUNT, NEW)
    second = gate.check("Fixed it.")
    assert second.verified
    assert second.attempt == 2
    assert [r.decision for r in receipts(tmp_path / "state")] == ["veto", "allow"]


def test_a_write_never_committed_is_sent_back(tmp_path: Path, accounts: Accounts) -> None:
    gate = gate_for(tmp_path, accounts)

    @gate.mutation(kind="state_write", target="accounts/{account_id}")
    def update_address(account_id: int, address: str) -> str:
        accounts.write(account_id, address, commit=False)  # the tool's bug: no commit
        return "updated"

    update_address(ACCOUNT, NEW)
    outcome = gate.check("Done.")
    assert outcome.sent_back
    assert outcome.verdict == "refuted"
    assert accounts.address() == OLD


def test_a_done_without_any_change_is_sent_back(tmp_path: Path, accounts: Accounts) -> None:
    gate = gate_for(tmp_path, accounts)
    outcome = gate.check("Done, the address is updated.")
    assert outcome.sent_back
    assert outcome.reason == "no_source_write"
    assert outcome.verdict == "none"
    assert outcome.message is not None
    assert "Nothing has been changed" in outcome.message


def test_a_task_that_needs_no_change_ends_unverified_without_one(
    tmp_path: Path, accounts: Accounts
) -> None:
    gate = gate_for(tmp_path, accounts, requires_write=False)
    outcome = gate.check("Account 4471 lives at 1 Old Road.")
    assert outcome.allowed
    assert not outcome.verified
    assert (outcome.reason, outcome.verdict) == ("no_workspace_write", "none")


def test_an_agent_that_never_fixes_it_is_let_go_not_verified(
    tmp_path: Path, accounts: Accounts
) -> None:
    gate = gate_for(tmp_path, accounts)
    updater(gate, accounts)(ACCOUNT, "somewhere else")
    outcomes = [gate.check("Done.") for _ in range(3)]
    assert [o.sent_back for o in outcomes] == [True, True, False]
    last = outcomes[-1]
    assert not last.verified
    assert last.reason == "strict_veto_cap_reached"
    assert last.notice is not None
    assert "NOT verified" in last.notice
    final = receipts(tmp_path / "state")[-1]
    assert (final.verdict, final.decision, final.reason) == (
        "refuted",
        "allow",
        "strict_veto_cap_reached",
    )


def test_strict_mode_raises_when_the_budget_is_spent(tmp_path: Path, accounts: Accounts) -> None:
    gate = gate_for(tmp_path, accounts, strict=True)
    updater(gate, accounts)(ACCOUNT, "somewhere else")
    assert gate.check("Done.").sent_back
    assert gate.check("Done.").sent_back
    with pytest.raises(NotVerified) as raised:
        gate.check("Done.")
    assert raised.value.outcome.reason == "strict_veto_cap_reached"
    assert receipts(tmp_path / "state")[-1].reason == "strict_veto_cap_reached"


def test_no_sendbacks_left_lets_a_veto_go_on_the_record(tmp_path: Path, accounts: Accounts) -> None:
    gate = gate_for(tmp_path, accounts)
    updater(gate, accounts)(ACCOUNT, "somewhere else")
    outcome = gate.check("Done.", sendbacks_left=0)
    assert outcome.allowed
    assert not outcome.verified
    assert (outcome.reason, outcome.converted_from) == (
        "blocks_in_a_row_cap_reached",
        "verification_after_write_red",
    )


def test_a_team_that_records_only_lets_the_run_go_and_says_so(
    tmp_path: Path, accounts: Accounts
) -> None:
    path = readback_config(tmp_path, accounts.url)
    path.write_text('[policy]\non_unverified = "record"\n' + path.read_text())
    gate = CompletionGate(path, agent="support-bot", state_dir=tmp_path / "state")
    updater(gate, accounts)(ACCOUNT, "somewhere else")
    outcome = gate.check("Done.")
    assert outcome.allowed
    assert not outcome.verified
    assert outcome.verdict == "refuted"
    [receipt] = receipts(tmp_path / "state")
    assert receipt.decision == "allow"
    assert receipt.decision_doc["gate"]["confirm"] is False


def test_a_tool_that_raised_is_recorded_as_attempted(tmp_path: Path, accounts: Accounts) -> None:
    gate = gate_for(tmp_path, accounts)

    @gate.mutation(kind="state_write", target="accounts/{account_id}")
    def update_address(account_id: int, address: str) -> str:
        accounts.write(account_id, address)
        raise TimeoutError("the response was lost after the commit")

    with pytest.raises(TimeoutError):
        update_address(ACCOUNT, "half done")
    [change] = gate.run.changes
    assert (change.target, change.error) == (f"accounts/{ACCOUNT}", "TimeoutError")
    outcome = gate.check("It failed, but the address is surely fine.")
    assert outcome.sent_back
    assert outcome.verdict == "refuted"
    mutation = receipts(tmp_path / "state")[-1].claim["mutations"][0]
    assert mutation["attempted"] is True
    assert mutation["error"] == "TimeoutError"


def test_an_async_tool_is_recorded_after_it_returned(tmp_path: Path, accounts: Accounts) -> None:
    gate = gate_for(tmp_path, accounts)
    seen: list[int] = []

    @gate.mutation(kind="state_write", target="accounts/{account_id}")
    async def update_address(account_id: int, address: str = NEW) -> str:
        seen.append(len(gate.run.changes))  # nothing is recorded while the tool runs
        accounts.write(account_id, address)
        return "updated"

    assert asyncio.run(update_address(account_id=ACCOUNT)) == "updated"
    assert seen == [0]
    assert [c.target for c in gate.run.changes] == [f"accounts/{ACCOUNT}"]
    assert gate.check("Done.").verified


def test_a_target_naming_no_argument_is_refused_when_wrapped(
    tmp_path: Path, accounts: Accounts
) -> None:
    gate = gate_for(tmp_path, accounts)
    with pytest.raises(InvalidInput, match="names 'account', which is not an argument"):

        @gate.mutation(kind="state_write", target="accounts/{account}")
        def update_address(account_id: int, address: str) -> None: ...


def test_concurrent_runs_keep_their_changes_apart(tmp_path: Path, accounts: Accounts) -> None:
    gate = gate_for(tmp_path, accounts)
    update = updater(gate, accounts)

    async def one(address: str | None) -> tuple[str, int]:
        run = gate.begin(TASK)
        await asyncio.sleep(0)
        if address is not None:
            update(ACCOUNT, address)
        await asyncio.sleep(0)
        return run.session_id, len(gate.run.changes)

    async def both() -> list[tuple[str, int]]:
        return list(await asyncio.gather(one(NEW), one(None)))

    (first, writes), (second, none) = asyncio.run(both())
    assert first != second
    assert (writes, none) == (1, 0)


def test_a_missing_config_never_verifies(tmp_path: Path, accounts: Accounts) -> None:
    gate = CompletionGate(
        tmp_path / "absent.toml", agent="support-bot", state_dir=tmp_path / "state"
    )
    updater(gate, accounts)(ACCOUNT, NEW)
    outcome = gate.check("Done.")
    assert outcome.allowed
    assert not outcome.verified
    assert outcome.reason == "config_invalid"
    assert outcome.notice is not None
    assert "absent.toml" in outcome.notice
    [receipt] = receipts(tmp_path / "state")
    assert (receipt.verdict, receipt.reason) == ("unverified", "config_invalid")


def test_an_invalid_config_never_verifies_and_strict_raises(
    tmp_path: Path, accounts: Accounts
) -> None:
    path = tmp_path / "donegate.toml"
    path.write_text("[gate]\nmax_vetoes = -1\n")
    gate = CompletionGate(path, agent="support-bot", state_dir=tmp_path / "state", strict=True)
    updater(gate, accounts)(ACCOUNT, NEW)
    with pytest.raises(NotVerified, match="max_vetoes"):
        gate.check("Done.")


def test_a_readback_that_cannot_read_never_verifies(tmp_path: Path, accounts: Accounts) -> None:
    gate = gate_for(tmp_path, Accounts(tmp_path / "missing" / "db.sqlite3"))
    updater(gate, accounts)(ACCOUNT, NEW)
    outcome = gate.check("Done.")
    assert outcome.sent_back
    assert outcome.verdict == "unverified"
    assert outcome.message is not None
    assert "could not confirm it" in outcome.message


def test_donegate_failing_on_the_way_lets_the_run_go_not_verified(
    tmp_path: Path, accounts: Accounts, monkeypatch: pytest.MonkeyPatch
) -> None:
    gate = gate_for(tmp_path, accounts)
    updater(gate, accounts)(ACCOUNT, NEW)

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("the collector's import failed")

    monkeypatch.setattr("donegate.collect.collect", broken)
    outcome = gate.check("Done.")
    assert outcome.allowed
    assert not outcome.verified
    assert outcome.reason == "donegate_error"
    assert receipts(tmp_path / "state")[-1].reason == "donegate_error"


def test_the_package_imports_no_framework() -> None:
    import subprocess
    import sys

    code = (
        "import sys, donegate.frameworks as f; f.CompletionGate; "
        "print(sorted(m for m in ('pydantic_ai', 'agents', 'langgraph', 'langchain_core') "
        "if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
    assert all(getattr(frameworks, name).__name__ == name for name in frameworks.__all__)
