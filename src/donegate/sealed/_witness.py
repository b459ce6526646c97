"""The witness: donegate's own plugin inside a pytest run, and what it reports.

``prepare`` writes the plugin (``_witness_plugin.py``) under a fresh module name into a private
directory and says how to load it; ``read_report`` reads what it wrote at the end of the run. The
report is the source of truth for what ran: node ids, outcomes, the rootdir and ini file, and every
plugin and conftest that was loaded. Anything missing, malformed or odd reads as no report.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from donegate.checks.runners._nodeid import NodeId, NodeIdError
from donegate.record import Record

PLUGIN_SOURCE = Path(__file__).with_name("_witness_plugin.py")
MAX_REPORT_BYTES = 64 * 1024 * 1024
TEST_OUTCOMES = frozenset(
    {"passed", "failed", "error", "skipped", "xfailed", "xpassed", "incomplete"}
)


ENV_PREFIX = "DONEGATE_WITNESS_"  # and the module's suffix: the variable of its settings


class WitnessSetup(Record):
    """How one run loads its witness: the module to ``-p``, its directory, its settings."""

    module: str
    plugin_dir: Path
    report: Path

    @property
    def env_var(self) -> str:
        """The variable the plugin reads its settings from (and removes at once)."""
        return ENV_PREFIX + self.module.rpartition("_")[2].upper()

    def settings(
        self, restore: dict[str, str | None], *, cwd_last: bool, again: Sequence[str] = ()
    ) -> str:
        """The plugin's settings: where to report, which variables to give back, and how,
        which tests to run a second time (the ``must_pass`` ids), and where pytest's cache goes
        (the run's scratch directory: see the plugin's ``_move_cache``)."""
        return json.dumps(
            {
                "report": str(self.report),
                "cache_dir": str(self.plugin_dir.parent / "pytest-cache"),
                "restore": restore,
                "cwd_last": cwd_last,
                "again": list(again),
            }
        )


def prepare(scratch: Path) -> WitnessSetup:
    """Write the plugin under a fresh name into ``scratch`` (a private directory made for the run).

    The report directory is made here too, 0700, with a random name: no path that the agent could
    have made beforehand.
    """
    suffix = os.urandom(8).hex()
    module = f"donegate_witness_{suffix}"
    plugin_dir = scratch / f"plugin-{suffix}"
    report_dir = scratch / f"report-{os.urandom(8).hex()}"
    plugin_dir.mkdir(mode=0o700)
    report_dir.mkdir(mode=0o700)
    (plugin_dir / f"{module}.py").write_bytes(PLUGIN_SOURCE.read_bytes())
    return WitnessSetup(module, plugin_dir, report_dir / "witness.json")


class LoadedFile(Record):
    """A plugin, conftest or ini file that shaped the run."""

    kind: str
    name: str
    path: Path
    sha256: str | None = None


class WitnessReport(Record):
    """What the witness saw. ``tests`` maps each node id that reported to its outcome."""

    rootdir: Path
    invocation_dir: Path
    inifile: Path | None
    args: tuple[str, ...]
    tests: dict[NodeId, str]
    collect_problems: dict[str, str]
    collected: tuple[NodeId, ...]
    deselected: tuple[NodeId, ...]
    loaded: tuple[LoadedFile, ...]
    tampered: tuple[str, ...]
    exitstatus: int | None
    again: dict[NodeId, str]

    def known(self) -> set[NodeId]:
        """Every test id pytest knew of in this run: reported, collected or deselected."""
        return {*self.tests, *self.collected, *self.deselected}

    def counts(self) -> dict[str, int]:
        """Counts as ``observed_value`` carries them (xpassed counts as passed, as in JUnit)."""
        outcomes = list(self.tests.values())
        problems = list(self.collect_problems.values())
        return {
            "passed": outcomes.count("passed") + outcomes.count("xpassed"),
            "failed": outcomes.count("failed"),
            "errors": outcomes.count("error") + problems.count("error"),
            "skipped": outcomes.count("skipped")
            + outcomes.count("xfailed")
            + problems.count("skipped"),
        }

    def failing(self) -> list[str]:
        """Node ids that failed or errored, collection errors included."""
        tests = [str(n) for n, o in self.tests.items() if o in ("failed", "error", "incomplete")]
        return [*tests, *(n for n, o in self.collect_problems.items() if o == "error")]


def read_report(path: Path) -> WitnessReport | None:
    """The witness's report, or None when it is missing, not a plain file, or malformed."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_REPORT_BYTES:
            return None
        raw = handle.read(MAX_REPORT_BYTES + 1)
    try:
        return _parse(json.loads(raw))
    except (ValueError, TypeError, KeyError, AttributeError, NodeIdError):
        return None


def _parse(doc: Any) -> WitnessReport:
    if doc.get("witness") != 1 or not doc["rootdir"]:
        raise ValueError("not a witness report")
    tests = {NodeId.parse(t["nodeid"]): _outcome(t["outcome"]) for t in doc["tests"]}
    return WitnessReport(
        rootdir=Path(doc["rootdir"]),
        invocation_dir=Path(doc["invocation_dir"]),
        inifile=Path(doc["inifile"]) if doc["inifile"] else None,
        args=tuple(str(a) for a in doc["args"]),
        tests=tests,
        collect_problems={str(k): str(v) for k, v in doc["collect_problems"].items()},
        collected=tuple(NodeId.parse(n) for n in doc["collected"]),
        deselected=tuple(NodeId.parse(n) for n in doc["deselected"]),
        loaded=_loaded(doc),
        tampered=tuple(str(t) for t in doc["tampered"]),
        exitstatus=doc["exitstatus"] if isinstance(doc["exitstatus"], int) else None,
        again={NodeId.parse(n): _outcome(o) for n, o in (doc.get("again") or {}).items()},
    )


def _outcome(value: Any) -> str:
    if value not in TEST_OUTCOMES:
        raise ValueError(f"unknown outcome {value!r}")
    return str(value)


def _loaded(doc: Any) -> tuple[LoadedFile, ...]:
    files = [
        LoadedFile(_kind(p["file"]), str(p["name"]), Path(p["file"]), p["sha256"])
        for p in doc["plugins"]
        if p["file"]
    ]
    files += [
        LoadedFile("runner module", name, Path(path))
        for name, path in doc["runner_modules"].items()
        if path
    ]
    if doc["inifile"]:
        files.append(LoadedFile("ini file", "inifile", Path(doc["inifile"])))
    return tuple(files)


def _kind(path: str) -> str:
    return "conftest" if Path(path).name == "conftest.py" else "plugin"
