"""False hits of the scan on honest changes: real projects' commit histories.

Run: ``.venv/bin/python benchmarks/scan_false_hits.py --repo GITDIR [--commits N] [--show]``.

``GITDIR`` is any git directory (bare, or a work tree's). For each of the last N non-merge
commits that change ``.py`` files, the scan runs as a stop would after that commit: the written
files are the commit's changed ``.py`` files (old: the first parent's text, new: the commit's),
the test literals and cases come from the commit's test files (read lazily, as a stop reads
them), and the settings are the defaults. A project's own history is honest by assumption, so
every commit with a finding is a false hit. Prints, per construct, how many commits had one, as
a share of the commits scanned, and the median time of ``scan_writes`` per commit (reading the
test files from git is not included; parsing those the scan asks about is).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import time
from collections import Counter
from collections.abc import Iterator

from donegate.globs import matches_any
from donegate.scan import Finding, ScanSettings, TestLiterals, WrittenFile, scan_writes
from donegate.workspace.classify import DEFAULT_TEST_GLOBS


def is_test(path: str) -> bool:
    """donegate's default test globs, as a stop with no ``[gate] test_paths`` uses."""
    return matches_any(path, DEFAULT_TEST_GLOBS)


class Repo:
    """Reads blobs of a git directory through one ``git cat-file --batch`` process."""

    def __init__(self, git_dir: str) -> None:
        self.git_dir = git_dir
        self._batch = subprocess.Popen(
            ["git", f"--git-dir={git_dir}", "cat-file", "--batch"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        self._texts: dict[str, str] = {}

    def git(self, *args: str) -> str:
        """The output of a git command on this directory."""
        run = subprocess.run(
            ["git", f"--git-dir={self.git_dir}", *args], capture_output=True, check=True
        )
        return run.stdout.decode("utf-8", "replace")

    def blob(self, spec: str) -> str | None:
        """The text of ``commit:path`` (None when absent)."""
        assert self._batch.stdin is not None
        assert self._batch.stdout is not None
        self._batch.stdin.write(spec.encode() + b"\n")
        self._batch.stdin.flush()
        header = self._batch.stdout.readline().split()
        if len(header) < 3 or header[1] == b"missing":
            return None
        data = self._batch.stdout.read(int(header[2]) + 1)[:-1]
        return data.decode("utf-8", "replace")

    def test_sources(self, commit: str) -> list[str]:
        """The texts of the commit's test files, each blob read once."""
        found: list[str] = []
        for line in self.git("ls-tree", "-r", commit).splitlines():
            meta, _, path = line.partition("\t")
            blob = meta.split()[2]
            if not path.endswith(".py") or not is_test(path):
                continue
            if blob not in self._texts:
                self._texts[blob] = self.blob(blob) or ""
            found.append(self._texts[blob])
        return found

    def close(self) -> None:
        """End the batch process."""
        assert self._batch.stdin is not None
        self._batch.stdin.close()
        self._batch.wait()


Change = tuple[str, str]  # (old path, new path): the same but for a rename


def commits(repo: Repo, count: int) -> Iterator[tuple[str, str, list[Change]]]:
    """(commit, parent, changed .py files) for the last ``count`` commits changing .py files.

    A renamed file is compared with its old path's text, as a stop compares a moved file.
    """
    listed = repo.git("log", "--no-merges", "--format=%H %P", f"-n{count}", "--", "*.py")
    for line in listed.splitlines():
        commit, *parents = line.split()
        if not parents:
            continue
        status = repo.git("diff-tree", "-r", "-M", "--name-status", parents[0], commit)
        changes = [_change(row.split("\t")) for row in status.splitlines()]
        changes = [c for c in changes if c[1].endswith(".py")]
        if changes:
            yield commit, parents[0], changes


def _change(fields: list[str]) -> Change:
    return (fields[1], fields[2]) if fields[0].startswith(("R", "C")) else (fields[1], fields[1])


def scan_commit(
    repo: Repo, commit: str, parent: str, changes: list[Change]
) -> tuple[list[Finding], float]:
    """The scan's findings for one commit, as if it had been one session's writes, and the
    seconds that ``scan_writes`` took (reading git and the test literals excluded)."""
    written = [
        WrittenFile(new, repo.blob(f"{parent}:{old}"), repo.blob(f"{commit}:{new}"))
        for old, new in changes
    ]
    sources = repo.test_sources(commit)
    start = time.perf_counter()
    findings = scan_writes(written, TestLiterals(sources), ScanSettings(), is_test)
    return findings, time.perf_counter() - start


def main() -> int:
    """Scan the history and print the false-hit rates."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", required=True, help="a git directory (bare or not)")
    parser.add_argument("--commits", type=int, default=300)
    parser.add_argument("--show", action="store_true", help="print every finding")
    args = parser.parse_args()
    repo = Repo(args.repo)
    hits: Counter[str] = Counter()
    times: list[float] = []
    for commit, parent, changes in commits(repo, args.commits):
        findings, seconds = scan_commit(repo, commit, parent, changes)
        times.append(seconds)
        hits.update({f.construct for f in findings})
        hits.update({"any blocking"} if any(f.blocking for f in findings) else set())
        if args.show:
            for finding in findings:
                print(f"{commit[:10]} {finding}")
    repo.close()
    scanned = max(len(times), 1)
    median = 1000 * statistics.median(times) if times else 0.0
    print(f"{args.repo}: {len(times)} commits; scan_writes median {median:.1f} ms per commit")
    for construct, count in sorted(hits.items()):
        print(f"  {construct:18} {count:4} commits  {100 * count / scanned:5.1f}%")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
