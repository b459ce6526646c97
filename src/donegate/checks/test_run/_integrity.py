"""Whether a pytest run's own report can be believed.

It cannot when what judged the run was written by the agent: a plugin, conftest, ini file or
runner module that pytest loaded and whose path is among the claim's written paths or the tainted
ones (plugins from site-packages are allowed unless written); when the witness saw pytest's
machinery replaced; or when the JUnit report, written by another part of pytest, tells another
story of which tests ran and how they ended.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from donegate import globs
from donegate.checks.base import CheckContext
from donegate.checks.runners._junit import CaseOutcome, TestReport, disagreements
from donegate.sealed._witness import WitnessReport

MAX_SHOWN = 5
MAX_PLUGINS_SHOWN = 40
# The witness's outcome as pytest's JUnit writer records it (an xpass is a plain pass there).
_AS_JUNIT: dict[str, CaseOutcome] = {
    "passed": "passed",
    "xpassed": "passed",
    "failed": "failed",
    "error": "error",
    "incomplete": "error",
    "skipped": "skipped",
    "xfailed": "xfailed",
}


def why_not_trusted(report: WitnessReport, context: CheckContext) -> str | None:
    """Why the run's judge is not donegate's and the team's, if it is not."""
    written = _written(context)
    roots = _roots(context)
    for loaded in report.loaded:
        where, inside = _in_project(loaded.path, roots)
        reason = written.get(where)
        if reason is not None:
            return (
                f"the {loaded.kind} {where!r} that pytest loaded was {reason}: a run judged by "
                "what the agent wrote shows nothing"
            )
        if inside and loaded.kind != "ini file" and loaded.path.suffix != ".py":
            return f"pytest loaded the {loaded.kind} {where!r} from bytecode without its source"
    if report.tampered:
        shown = "; ".join(report.tampered[:MAX_SHOWN])
        return f"pytest's verdict was tampered with during the run: {shown}"
    return None


def why_not_cross_checked(report: WitnessReport, junit: TestReport | None) -> str | None:
    """Why the JUnit report does not confirm the witness, if it does not."""
    if junit is None:
        return "pytest's JUnit report is missing: the witness's account cannot be cross-checked"
    expected: Counter[tuple[str, CaseOutcome]] = Counter(
        (node.junit_key(), _AS_JUNIT[outcome]) for node, outcome in report.tests.items()
    )
    for path, outcome in report.collect_problems.items():
        expected[(_collector_key(path), "error" if outcome == "error" else "skipped")] += 1
    lines = disagreements(junit, expected)
    if not lines:
        return None
    return "the witness and the JUnit report disagree: " + "; ".join(lines[:MAX_SHOWN])


def described(report: WitnessReport) -> dict[str, Any]:
    """What a person reading the evidence wants to know of the run's setup."""
    outcomes = list(report.tests.values())
    shown = [
        f"{f.name} {f.path} sha256:{(f.sha256 or '?')[:16]}"
        for f in report.loaded
        if f.kind in ("plugin", "conftest")
        and "_pytest" not in f.path.parts
        and not f.name.startswith("donegate_witness_")
    ]
    return {
        "counts_from": "witness",
        "xfailed": outcomes.count("xfailed"),
        "deselected": len(report.deselected),
        "pytest_args": list(report.args),
        "rootdir": str(report.rootdir),
        "inifile": str(report.inifile) if report.inifile else None,
        "plugins": shown[:MAX_PLUGINS_SHOWN],
    }


def _written(context: CheckContext) -> dict[str, str]:
    reasons: dict[str, str] = {}
    for mutation in context.mutations:
        target = globs.normalise(mutation.target, str(context.base_dir))
        reasons.setdefault(target, f"written in this session (mutation {mutation.id})")
    for path in context.tainted:
        reasons.setdefault(
            globs.normalise(path, str(context.base_dir)),
            "written by an agent and not accepted by a person (tainted)",
        )
    return reasons


def _roots(context: CheckContext) -> tuple[Path, ...]:
    """Where the run was (its sealed copy or the project) and the project, each as given and
    resolved: resolved once per run, not once per file pytest loaded (two realpath walks for
    each of some forty plugins from site-packages, 4 ms after every run)."""
    return tuple(p for root in (context.run_dir, context.base_dir) for p in (root, root.resolve()))


def _in_project(path: Path, roots: tuple[Path, ...]) -> tuple[str, bool]:
    """``path`` relative to the first of ``roots`` it lies in, or absolute when in none."""
    for candidate in roots:
        if path.is_relative_to(candidate):
            return path.relative_to(candidate).as_posix(), True
    return path.as_posix(), False


def _collector_key(path: str) -> str:
    # A module that failed to collect: no class name, the dotted module as the name.
    return "::" + path.replace("/", ".").removesuffix(".py")
