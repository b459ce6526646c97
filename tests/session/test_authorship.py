"""Who wrote what: taint is content an agent left that no person accepted since."""

from __future__ import annotations

from pathlib import Path

import pytest

from donegate.errors import InvalidInput
from donegate.session.authorship import Authorship


def test_content_an_agent_wrote_is_tainted_until_a_person_accepts_it(tmp_path: Path) -> None:
    record = Authorship()
    record.record_agent([("tests/t.py", "d1"), ("gone.py", None)], "s1", "2026-01-01T00:00:00Z")
    assert record.tainted({"tests/t.py": "d1"}) == {"tests/t.py", "gone.py"}
    record.accept("tests/t.py", "d1", how="command", by="ann", at="2026-01-01T00:01:00Z")
    assert record.tainted({"tests/t.py": "d1"}) == {"gone.py"}
    # Other content at the path is not the agent's (a person changed it since).
    assert record.tainted({"tests/t.py": "d1", "gone.py": "d9"}) == frozenset()


def test_an_accepted_content_written_again_is_not_recorded_as_the_agents() -> None:
    record = Authorship()
    record.accept("a.py", "d1", how="between_turns", by="ann", at="2026-01-01T00:00:00Z")
    record.record_agent([("a.py", "d1")], "s1", "2026-01-01T00:01:00Z")
    assert not record.agent_wrote("a.py", "d1")


def test_revoking_withdraws_only_the_sessions_command_acceptances() -> None:
    record = Authorship()
    record.accept("a.py", "d1", how="command", by="ann", at="2026-01-01T00:00:00Z")
    record.accept("b.py", "d2", how="command", by="ann", at="2026-01-02T00:00:00Z")
    record.accept("c.py", "d3", how="between_turns", by="ann", at="2026-01-02T00:00:00Z")
    assert record.revoke("2026-01-01T12:00:00Z") == ["b.py"]
    assert set(record.accepted) == {"a.py", "c.py"}


def test_the_record_round_trips_names_that_are_not_utf8(tmp_path: Path) -> None:
    name = b"caf\xe9.py".decode("utf-8", "surrogateescape")
    record = Authorship()
    record.record_agent([(name, "d1")], "s1", "2026-01-01T00:00:00Z")
    record.save(tmp_path / "a.json")
    assert Authorship.load(tmp_path / "a.json").agent_wrote(name, "d1")


@pytest.mark.parametrize("text", [b"{", b"[]", b'{"version": 1, "agent": [], "accepted": {}}'])
def test_a_damaged_record_is_an_error_not_an_empty_one(tmp_path: Path, text: bytes) -> None:
    (tmp_path / "a.json").write_bytes(text)
    with pytest.raises(InvalidInput):
        Authorship.load(tmp_path / "a.json")
