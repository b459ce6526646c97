"""``donegate verify --jsonl`` in its plain form, answered without click, as real processes.

The plain form must answer exactly as the click command does, and anything else must go through
click, which reads and explains it. Each case runs both: the plain form, and the same batch with
an option only click reads (``--max-skew 5``, the default) so that click answers it.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from donegate.cli.batch import plain_args
from tests.claims import NOW
from tests.test_bulkjobs import batch_text

VERIFY = [sys.executable, "-m", "donegate", "verify"]


def run(
    *args: str, stdout: int | None = subprocess.PIPE, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [*VERIFY, *args], stdout=stdout, stderr=subprocess.PIPE, env=env, check=False
    )


def test_the_plain_form_answers_every_line_as_click_does(tmp_path: Path) -> None:
    path = tmp_path / "batch.jsonl"
    path.write_bytes(batch_text())
    plain = run("--jsonl", str(path), "--now", NOW, "--trust", "donegate/0.1.0")
    clicked = run(
        "--jsonl", str(path), "--now", NOW, "--trust", "donegate/0.1.0", "--max-skew", "5"
    )
    assert plain_args(["--jsonl", str(path), "--now", NOW, "--trust", "x"]) is not None
    assert plain_args(["--jsonl", str(path), "--max-skew", "5"]) is None  # click reads this one
    assert plain.returncode == clicked.returncode == 4  # the batch holds invalid lines
    assert plain.stdout == clicked.stdout
    assert plain.stdout.count(b"\n") == len([ln for ln in batch_text().split(b"\n") if ln.strip()])


def test_the_plain_form_never_loads_click(tmp_path: Path) -> None:
    path = tmp_path / "batch.jsonl"
    path.write_bytes(batch_text())
    probe = (
        "import sys; from donegate.cli import main; "
        f"code = main(['verify', '--jsonl', {str(path)!r}, '--now', {NOW!r}]); "
        "sys.stdout.flush(); print('click' in sys.modules, code, file=sys.stderr)"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, check=True)
    assert result.stderr.split() == [b"False", b"4"]


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--jsonl", "{path}", "--jobs", "0"], b"Invalid value for '--jobs'"),
        (["--jsonl", "{path}", "--now", "2026-08-27"], b"Invalid value for '--now'"),
        (["--jsonl", "{path}", "--now", NOW, "--now", "x"], b"Invalid value for '--now'"),
        (["--jsonl", "{path}", "--bogus", "1"], b"No such option '--bogus'"),
        (["--jsonl", "{path}", "claim.json"], b"give exactly one of CLAIM or --jsonl FILE"),
        (["--jsonl", "{path}", "--trust-key", "nope.pub"], b"Invalid value for '--trust-key'"),
    ],
)
def test_anything_else_goes_through_click(tmp_path: Path, args: list[str], says: bytes) -> None:
    path = tmp_path / "batch.jsonl"
    path.write_bytes(batch_text())
    assert plain_args([a.format(path=path) for a in args]) is None
    result = run(*(a.format(path=path) for a in args))
    assert result.returncode == 2
    assert says in result.stderr
    assert result.stdout == b""


def test_help_is_clicks(tmp_path: Path) -> None:
    result = run("--jsonl", "-", "--help")
    assert result.returncode == 0
    assert b"--jsonl FILE|-" in result.stdout


def test_an_unreadable_batch_is_said_as_before(tmp_path: Path) -> None:
    result = run("--jsonl", str(tmp_path / "missing.jsonl"), "--now", NOW)
    assert result.returncode == 4
    assert result.stderr.startswith(b"donegate: invalid input: cannot read ")
    assert b"No such file or directory" in result.stderr


@pytest.mark.parametrize("lines", [1, 90])
@pytest.mark.parametrize("unbuffered", ["1", ""])
def test_answers_that_cannot_be_written_are_an_error_not_a_silent_success(
    tmp_path: Path, lines: int, unbuffered: str
) -> None:
    # /dev/full refuses every write: the answers are lost, and the exit code must say so. One
    # answer stays in the output buffer until the end, where a failure could go unheard.
    path = tmp_path / "batch.jsonl"
    path.write_bytes(b"\n".join(batch_text().split(b"\n")[:lines]))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    if unbuffered:
        env["PYTHONUNBUFFERED"] = unbuffered
    for args in (["--now", NOW], ["--now", NOW, "--max-skew", "5"]):  # plain, then click's
        with open("/dev/full", "wb") as full:
            result = run("--jsonl", str(path), *args, stdout=full.fileno(), env=env)
        # click's path ends in the interpreter's own failed flush (120) after saying so (5).
        assert result.returncode in (5, 120), args
        assert b"No space left on device" in result.stderr


def test_a_slow_pipe_gets_each_answer_as_its_line_arrives(tmp_path: Path) -> None:
    # tail -f claims.log | donegate verify --jsonl -: an answer must not wait for the next line,
    # nor for the end of the input, however standard output is buffered.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    lines = [line for line in batch_text().split(b"\n") if line.strip()][:3]
    process = subprocess.Popen(
        [*VERIFY, "--jsonl", "-", "--now", NOW],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    assert process.stdin is not None
    assert process.stdout is not None
    try:
        for number, line in enumerate(lines, start=1):
            process.stdin.write(line + b"\n")
            process.stdin.flush()
            ready, _, _ = select.select([process.stdout], [], [], 60)
            assert ready, f"no answer to line {number} while the pipe stays open"
            assert json.loads(process.stdout.readline())["line"] == number
    finally:
        process.kill()
        process.wait()


def test_a_pipe_is_answered_as_the_same_file_is(tmp_path: Path) -> None:
    # A line of 3 MB, then megabytes more at once: workers answer what comes after that line.
    text = batch_text() + b"\n\n" + b"x" * 3_000_000 + b"\n" + (batch_text() + b"\n") * 30
    path = tmp_path / "batch.jsonl"
    path.write_bytes(text)
    by_name = run("--jsonl", str(path), "--now", NOW)
    piped = subprocess.run(
        [*VERIFY, "--jsonl", "-", "--now", NOW], input=text, capture_output=True, check=False
    )
    assert by_name.returncode == piped.returncode == 4
    assert piped.stdout == by_name.stdout
    assert by_name.stdout.count(b"\n") == len([ln for ln in text.split(b"\n") if ln.strip()])


def test_a_pipe_left_non_blocking_is_read_to_its_end(tmp_path: Path) -> None:
    # Some programs hand on a non-blocking descriptor: "no data yet" is not an error.
    lines = [line for line in batch_text().split(b"\n") if line.strip()]
    read_end, write_end = os.pipe()
    os.set_blocking(read_end, False)
    process = subprocess.Popen(
        [*VERIFY, "--jsonl", "-", "--now", NOW],
        stdin=read_end,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    os.close(read_end)
    with os.fdopen(write_end, "wb") as feed:
        for line in lines:
            feed.write(line + b"\n")
            feed.flush()
            time.sleep(0.002)  # the reader finds the pipe empty between lines
    out, err = process.communicate(timeout=120)
    assert process.returncode == 4, err  # some lines are invalid: 4, never 5
    assert out.count(b"\n") == len(lines)
