"""A batch file answered by several processes comes out exactly as one process answers it."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from donegate import bulkjobs
from donegate.bulk import verify_lines
from donegate.bulkjobs import _ranges, jobs_for, numbered, verify_file
from donegate.instant import Instant
from donegate.rules import VerifyOptions
from tests.claims import NOW, claim_doc
from tests.hostile import mutants

OPTIONS = VerifyOptions(now=Instant.parse(NOW))


def batch_text() -> bytes:
    lines = [json.dumps(claim_doc(task={"id": f"t{i}"})).encode() for i in range(30)]
    lines += [m.replace(b"\n", b" ").replace(b"\r", b" ") for m in mutants(claim_doc(), 60, 9)]
    lines[5:5] = [b"", b"   ", b"\t"]  # blank lines are skipped but keep their numbers
    return b"\n".join(lines)  # and the last line has no newline


def one_process(path: Path) -> tuple[bytes, int]:
    out = io.BytesIO()
    with path.open("rb") as stream:
        invalid = verify_lines(numbered(stream), out, OPTIONS)
    return out.getvalue(), invalid


@pytest.mark.parametrize("jobs", [2, 3, 7, 200])
def test_any_number_of_processes_gives_the_same_answers(tmp_path: Path, jobs: int) -> None:
    path = tmp_path / "batch.jsonl"
    path.write_bytes(batch_text())
    expected, invalid = one_process(path)
    out = io.BytesIO()
    assert verify_file(path, out, OPTIONS, jobs) == invalid
    assert out.getvalue() == expected
    assert invalid > 0, "the mutants include invalid lines"
    numbers = [json.loads(line)["line"] for line in expected.splitlines()]
    assert numbers == sorted(numbers)
    assert 6 not in numbers  # a blank line: skipped, numbered all the same


def test_ranges_start_at_line_starts_and_cover_the_file(tmp_path: Path) -> None:
    path = tmp_path / "batch.jsonl"
    text = batch_text()
    path.write_bytes(text)
    for jobs in range(1, 40):
        ranges = _ranges(path, jobs)
        assert ranges[0].start == 0
        assert ranges[-1].end == len(text)
        for before, after in pairwise(ranges):
            assert before.end == after.start
            assert text[after.start - 1 : after.start] == b"\n"
            assert after.first_line == text[: after.start].count(b"\n") + 1


def test_small_files_and_stdin_use_one_process(tmp_path: Path) -> None:
    small = tmp_path / "small.jsonl"
    small.write_bytes(batch_text())
    assert jobs_for(small, None) == 1
    assert jobs_for(small, 3) == 3
    assert jobs_for(tmp_path / "missing.jsonl", None) == 1


def test_the_command_with_jobs_answers_as_without(tmp_path: Path) -> None:
    path = tmp_path / "batch.jsonl"
    path.write_bytes(batch_text())
    base = [sys.executable, "-m", "donegate", "verify", "--jsonl", str(path), "--now", NOW]
    single = subprocess.run(base, capture_output=True, check=False)
    several = subprocess.run([*base, "--jobs", "3"], capture_output=True, check=False)
    assert single.returncode == several.returncode == 4
    assert several.stdout == single.stdout
    misuse = subprocess.run([*base[:4], "x.json", "--jobs", "2"], capture_output=True, check=False)
    assert misuse.returncode == 2


def test_stdin_redirected_from_a_file_is_cut_like_the_file(tmp_path: Path) -> None:
    path = tmp_path / "batch.jsonl"
    path.write_bytes(batch_text())
    base = [sys.executable, "-m", "donegate", "verify", "--now", NOW, "--jsonl"]
    by_name = subprocess.run([*base, str(path)], capture_output=True, check=False)
    with path.open("rb") as redirected:
        cut = subprocess.run(
            [*base, "-", "--jobs", "3"], stdin=redirected, capture_output=True, check=False
        )
    piped = subprocess.run(
        [*base, "-", "--jobs", "3"], input=path.read_bytes(), capture_output=True, check=False
    )
    assert by_name.returncode == cut.returncode == piped.returncode == 4
    assert cut.stdout == piped.stdout == by_name.stdout


def test_only_a_whole_regular_file_on_stdin_is_taken_by_its_name(tmp_path: Path) -> None:
    path = tmp_path / "batch.jsonl"
    path.write_bytes(batch_text())
    probe = [
        sys.executable,
        "-c",
        "from donegate.cli.batch import stdin_file; print(stdin_file())",
    ]
    with path.open("rb") as whole:
        named = subprocess.run(probe, stdin=whole, capture_output=True, text=True, check=True)
    with path.open("rb") as started:
        started.readline()  # someone read a line already: the rest is not the whole file
        partial = subprocess.run(probe, stdin=started, capture_output=True, text=True, check=True)
    piped = subprocess.run(probe, input="{}", capture_output=True, text=True, check=True)
    assert named.stdout.strip() == str(path)
    assert partial.stdout.strip() == piped.stdout.strip() == "None"


def test_a_worker_that_dies_fails_the_batch_and_stops_the_others(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A child killed while answering its range (the kernel's OOM killer, a kill -9): its lines
    # have no answer, so the batch must fail, never come out short. The child is killed for real.
    path = tmp_path / "batch.jsonl"
    path.write_bytes(batch_text())
    parent = os.getpid()
    answer_range = bulkjobs._answer_range

    def dying(path: Path, where: Any, out: Any, options: VerifyOptions) -> int:
        if os.getpid() != parent and where.first_line > 40:
            os.kill(os.getpid(), signal.SIGKILL)
        return answer_range(path, where, out, options)

    monkeypatch.setattr(bulkjobs, "_answer_range", dying)
    with pytest.raises(bulkjobs.WorkerFailed, match=r"batch worker \d+ was killed by SIGKILL"):
        verify_file(path, io.BytesIO(), OPTIONS, 4)
    with pytest.raises(ChildProcessError):
        os.waitpid(-1, os.WNOHANG)  # every child was reaped: none left running or a zombie
