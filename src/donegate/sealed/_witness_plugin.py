# ruff: noqa: UP006, UP035, UP031, UP045
"""donegate's witness inside a pytest run (a standalone plugin; it never imports donegate).

donegate copies this file under a fresh module name into a private directory, puts that directory
on ``PYTHONPATH`` and loads it with ``-p <name>``. The project's interpreter may be old and does
not have donegate installed, so this file uses only the standard library and pytest, in a
Python 3.6-compatible subset.

At import it takes its settings from ``DONEGATE_WITNESS_<SUFFIX>`` and gives the environment back
as the team configured it (the code under test never sees where the report goes). It then records,
from inside the run: every test's node id and outcome per phase, the rootdir and ini file, the
invocation arguments, every plugin and conftest that was loaded (with a sha256 of its file), and
changes to pytest's own machinery that the code under test may have made to fake its verdict. The
report is written once, at the end, to a file that must not exist yet.

The tests the settings name under ``again`` (the team's ``must_pass``) run a second time once the
run is over, in the same process and in the reverse order: code that counts its calls, or flips
a toggle, to hand each test the answer it expects cannot pass both times. Their second outcomes
are reported apart, never to pytest's own reports.
"""

import hashlib
import json
import os
import sys
from typing import Any, Dict, List, Optional, Set, Tuple

import pytest

_SUFFIX = __name__.rpartition("_")[2]
_LAUNCH_PYTHONPATH = os.environ.get("PYTHONPATH", "")  # before the team's is put back
_SETTINGS = json.loads(os.environ.pop("DONEGATE_WITNESS_" + _SUFFIX.upper(), "null") or "null")

# What pytest's verdict rests on: if code under test swaps one of these, the run is not trusted.
_MACHINERY = (
    "_pytest.runner:call_and_report",
    "_pytest.runner:call_runtest_hook",
    "_pytest.runner:runtestprotocol",
    "_pytest.runner:pytest_runtest_makereport",
    "_pytest.runner:CallInfo",
    "_pytest.runner:CallInfo.from_call",
    "_pytest.reports:TestReport",
    "_pytest.reports:TestReport.from_item_and_call",
    "_pytest.reports:TestReport.__init__",
    "_pytest.reports:BaseReport.passed",
    "_pytest.reports:BaseReport.failed",
    "_pytest.reports:BaseReport.skipped",
    "_pytest.skipping:pytest_runtest_makereport",
    "_pytest.python:pytest_pyfunc_call",
    "_pytest.python:Function.runtest",
    "_pytest.main:pytest_runtestloop",
    "_pytest.junitxml:LogXML.pytest_runtest_logreport",
    "_pytest.outcomes:fail",
    "_pytest.outcomes:skip",
    "_pytest.outcomes:exit",
    "pytest:fail",
    "pytest:raises",
    "pytest:approx",
    "pluggy._callers:_multicall",
    "pluggy._hooks:HookCaller.__call__",
    "pluggy._hooks:_HookCaller.__call__",
    "pluggy._manager:PluginManager._hookexec",
)
_MISSING = object()


# Each spec split once: the machinery is looked up again after every test report.
_PATHS = {spec: (spec.partition(":")[0], spec.partition(":")[2].split(".")) for spec in _MACHINERY}


def _lookup(spec: str) -> Any:
    module_name, parts = _PATHS[spec]
    obj = sys.modules.get(module_name, _MISSING)
    for part in parts:
        if obj is _MISSING:
            break
        # The class's own dict: a classmethod or property is compared as itself, not as bound.
        space = getattr(obj, "__dict__", {})
        obj = space.get(part, _MISSING)
    return obj


def _links(spec: str) -> List[Tuple[Any, str, Any, type]]:
    """What looking ``spec`` up passes through: each namespace, the key read in it, the object
    found and that object's type (a swapped ``__class__`` could change what its ``__dict__``
    gives)."""
    module_name, parts = _PATHS[spec]
    obj = sys.modules.get(module_name, _MISSING)
    links = [(sys.modules, module_name, obj, type(obj))]
    for part in parts:
        if obj is _MISSING:
            break
        space = getattr(obj, "__dict__", {})
        obj = space.get(part, _MISSING)
        links.append((space, part, obj, type(obj)))
    return links


def _restore_environment(settings: Dict[str, Any]) -> None:
    for name, value in settings.get("restore", {}).items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


def _importable_invocation_dir(settings: Dict[str, Any]) -> None:
    # `python -m pytest` puts the working directory first on sys.path; donegate ran it with
    # PYTHONSAFEPATH so that a module there cannot replace the runner while it starts. Once it
    # has (this plugin loads after pytest and its plugins), the directory goes first, as in the
    # project's own run: last, a copy of the project installed in site-packages would be tested
    # in place of the tree's (a correct release verifying a broken tree). A module of the tree
    # named like the runner's is a finding of the sealed copy's import roots.
    started_as_module = sys.argv[0].endswith("__main__.py")
    if settings.get("cwd_last") and started_as_module and os.getcwd() not in sys.path:
        sys.path.insert(_startup_index(), os.getcwd())


def _startup_index() -> int:
    # Where `python -m` puts it: before every entry the interpreter started with (PYTHONPATH's,
    # then the standard library's), after those pytest has put first since (its `pythonpath`,
    # which may name a directory PYTHONPATH holds too: the last occurrence is the startup one).
    paths = [os.path.abspath(p) if p else os.getcwd() for p in sys.path]
    launched = [os.path.abspath(p) for p in _LAUNCH_PYTHONPATH.split(os.pathsep) if p]
    if launched and launched[0] in paths:
        return len(paths) - 1 - paths[::-1].index(launched[0])
    stdlib = os.path.dirname(os.__file__)
    for index, entry in enumerate(paths):
        if entry == stdlib or entry.endswith(".zip"):
            return index
    return len(paths)


class _Witness:
    def __init__(self, settings: Dict[str, Any]) -> None:
        self.report_path = str(settings["report"])
        self.machinery = {spec: _lookup(spec) for spec in _MACHINERY}
        self.modules = sys.modules
        # Each (namespace, key) once: the specs share their modules and classes.
        seen: Dict[Tuple[int, str], Tuple[Any, str, Any, type]] = {}
        for spec in _MACHINERY:
            for link in _links(spec):
                seen.setdefault((id(link[0]), link[1]), link)
        self.links = list(seen.values())
        self.plugins: Dict[str, Dict[str, Any]] = {}
        self.phases: Dict[str, Dict[str, str]] = {}
        self.xfail: Set[str] = set()
        self.collect_problems: Dict[str, str] = {}
        self.collected: List[str] = []
        self.deselected: List[str] = []
        self.tampered: List[str] = []
        self.made: Dict[Tuple[str, str], str] = {}
        self.config: Any = None
        self.exitstatus: Optional[int] = None
        self.again_wanted: List[str] = [str(n) for n in settings.get("again") or ()]
        self.again: Dict[str, str] = {}

    def check_machinery(self, where: str) -> None:
        # Run after every report: while every namespace still holds what it held, with the type
        # it had, every lookup below would find its original, so none is made (on a 2,000-test
        # suite the lookups cost 0.1 s). A class's __dict__ is a live view of its namespace.
        # A plain loop: a third cheaper than all() over a generator, at every report.
        if sys.modules is self.modules:
            for space, key, obj, kind in self.links:
                if space.get(key, _MISSING) is not obj or type(obj) is not kind:
                    break
            else:
                return
        for spec, original in self.machinery.items():
            if _lookup(spec) is not original and not any(spec in t for t in self.tampered):
                self.tampered.append("%s was replaced (noticed at %s)" % (spec, where))

    def note_plugin(self, name: Optional[str], plugin: Any) -> None:
        if hasattr(plugin, "__file__"):
            module = plugin
        else:
            owner = plugin if isinstance(plugin, type) else type(plugin)
            module = sys.modules.get(owner.__module__)
        path = getattr(module, "__file__", None)
        module_name = getattr(module, "__name__", None)
        key = "%s|%s" % (name, path)
        if key not in self.plugins:
            self.plugins[key] = {
                "name": name,
                "module": module_name,
                "file": os.path.abspath(path) if path else None,
                "sha256": _digest(path),
            }

    def note_report(self, report: Any) -> None:
        phases = self.phases.setdefault(report.nodeid, {})
        if report.when == "setup" and "teardown" in phases:
            phases.clear()  # a rerun starts over
        if phases.get(report.when) != "failed":
            # A failed subtest stays failed when its test's own call report says passed.
            phases[report.when] = report.outcome
        if report.when == "setup":
            self.xfail.discard(report.nodeid)
        if hasattr(report, "wasxfail"):
            self.xfail.add(report.nodeid)
        made = self.made.get((report.nodeid, report.when))
        if made is not None and made != report.outcome:
            self.tampered.append(
                "%s %s: made as %s, reported as %s"
                % (report.nodeid, report.when, made, report.outcome)
            )
        self.check_machinery(report.nodeid)

    def document(self) -> Dict[str, Any]:
        config = self.config
        inifile = getattr(config, "inipath", None) or getattr(config, "inifile", None)
        rootdir = getattr(config, "rootpath", None) or getattr(config, "rootdir", None)
        params = getattr(config, "invocation_params", None)
        return {
            "witness": 1,
            "python": sys.version.split()[0],
            "executable": sys.executable,
            "pytest_version": getattr(pytest, "__version__", None),
            "runner_modules": {
                name: os.path.abspath(getattr(sys.modules.get(name), "__file__", "") or "")
                for name in ("pytest", "_pytest", "pluggy")
            },
            "invocation_dir": str(getattr(params, "dir", os.getcwd())),
            "args": [str(a) for a in getattr(params, "args", ())],
            "rootdir": str(rootdir) if rootdir else None,
            "inifile": str(inifile) if inifile else None,
            "plugins": sorted(self.plugins.values(), key=lambda p: str(p["name"])),
            "tests": [
                {"nodeid": n, "phases": p, "outcome": _outcome(p, n in self.xfail)}
                for n, p in self.phases.items()
            ],
            "collect_problems": self.collect_problems,
            "collected": self.collected,
            "deselected": self.deselected,
            "tampered": self.tampered,
            "exitstatus": self.exitstatus,
            "again": self.again,
        }

    def run_again(self, session: Any) -> None:
        """The tests named under ``again``, run once more, in the reverse order."""
        from _pytest.runner import runtestprotocol

        items = [i for i in reversed(session.items) if _named(i.nodeid, self.again_wanted)]
        for index, item in enumerate(items):
            following = items[index + 1] if index + 1 < len(items) else None
            reports = runtestprotocol(item, log=False, nextitem=following)
            xfail = any(hasattr(r, "wasxfail") for r in reports)
            self.again[item.nodeid] = _outcome(_phases(reports), xfail)

    def write(self) -> None:
        data = json.dumps(self.document(), sort_keys=True).encode("utf-8")
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        try:
            fd = os.open(self.report_path, flags, 0o600)
        except OSError:
            return  # something else made the file: donegate will not trust what it finds
        with os.fdopen(fd, "wb") as out:
            out.write(data)


def _digest(path: Optional[str]) -> Optional[str]:
    if not path:
        return None
    try:
        with open(path, "rb") as handle:
            return hashlib.sha256(handle.read()).hexdigest()
    except OSError:
        return None


def _outcome(phases: Dict[str, str], xfail: bool) -> str:
    if phases.get("setup") == "failed" or phases.get("teardown") == "failed":
        return "error"
    call = phases.get("call")
    if call == "failed":
        return "failed"
    if phases.get("setup") == "skipped" or call == "skipped":
        return "xfailed" if xfail else "skipped"
    if call == "passed" and phases.get("teardown") == "passed":
        return "xpassed" if xfail else "passed"
    return "incomplete"


def _named(nodeid: str, wanted: List[str]) -> bool:
    """Whether ``nodeid`` may be one a team's id names: the same test, a parametrization of it,
    or a test of its class, with the path read from any directory (donegate decides exactly,
    later; a test run again that no id names costs only its time)."""
    path, _, rest = nodeid.partition("::")
    for want in wanted:
        want_path, _, want_rest = want.partition("::")
        if _same_file(path, want_path) and _same_test(rest, want_rest):
            return True
    return False


def _same_file(path: str, wanted: str) -> bool:
    while wanted.startswith("./"):
        wanted = wanted[2:]
    return ("/" + path).endswith("/" + wanted) or ("/" + wanted).endswith("/" + path)


def _same_test(rest: str, wanted: str) -> bool:
    return not wanted or rest == wanted or rest.startswith((wanted + "[", wanted + "::"))


def _phases(reports: List[Any]) -> Dict[str, str]:
    return {str(r.when): str(r.outcome) for r in reports}


_WITNESS: Optional[_Witness] = None
if _SETTINGS:
    _restore_environment(_SETTINGS)
    _importable_invocation_dir(_SETTINGS)
    _WITNESS = _Witness(_SETTINGS)


def pytest_configure(config: Any) -> None:
    if _WITNESS is not None:
        _WITNESS.config = config
        for name, plugin in config.pluginmanager.list_name_plugin():
            _WITNESS.note_plugin(name, plugin)
        _move_cache(config, _SETTINGS.get("cache_dir"))


def _move_cache(config: Any, where: Optional[str]) -> None:
    """Put pytest's cache (last failures, the ``cache`` fixture) in the run's scratch directory.

    In the tree, pytest makes ``.pytest_cache`` at every run of a copy that never keeps it (the
    next stop's copy holds the snapshot's files and nothing else), and a directory made in a kept
    copy makes donegate walk the whole copy at the next stop (see donegate.sealed._watch). The
    cache provider made its cache first (its hook runs first) and writes only at the session's
    end. Where pytest's cache is not the one this knows, it stays where it is.
    """
    cache: Any = getattr(config, "cache", None)
    current = getattr(cache, "_cachedir", None)
    if where and current is not None:
        cache._cachedir = type(current)(where)


def pytest_plugin_registered(plugin: Any, manager: Any) -> None:
    if _WITNESS is not None:
        _WITNESS.note_plugin(manager.get_name(plugin), plugin)


def pytest_collectreport(report: Any) -> None:
    if _WITNESS is not None and report.outcome != "passed":
        outcome = "error" if report.outcome == "failed" else str(report.outcome)
        _WITNESS.collect_problems[report.nodeid] = outcome


def pytest_deselected(items: Any) -> None:
    if _WITNESS is not None:
        _WITNESS.deselected.extend(item.nodeid for item in items)


def pytest_collection_finish(session: Any) -> None:
    if _WITNESS is not None:
        _WITNESS.collected = [item.nodeid for item in session.items]
        _WITNESS.check_machinery("collection")


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: Any, call: Any) -> Any:
    raised_before = getattr(call, "excinfo", None) is not None
    outcome = yield
    if _WITNESS is None:
        return
    report = outcome.get_result()
    raised = raised_before or getattr(call, "excinfo", None) is not None
    if raised and report.outcome == "passed" and not hasattr(report, "wasxfail"):
        _WITNESS.tampered.append(
            "%s %s: the test raised, but its report says passed" % (item.nodeid, call.when)
        )
    _WITNESS.made[(item.nodeid, call.when)] = report.outcome


def pytest_runtest_logreport(report: Any) -> None:
    if _WITNESS is not None:
        _WITNESS.note_report(report)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtestloop(session: Any) -> Any:
    yield
    stopped = getattr(session, "shouldstop", False) or getattr(session, "shouldfail", False)
    if _WITNESS is not None and _WITNESS.again_wanted and not stopped:
        _WITNESS.run_again(session)


def pytest_sessionfinish(session: Any, exitstatus: Any) -> None:
    if _WITNESS is not None:
        _WITNESS.exitstatus = int(exitstatus)


def pytest_unconfigure(config: Any) -> None:
    if _WITNESS is not None:
        _WITNESS.check_machinery("the end of the run")
        for name, plugin in config.pluginmanager.list_name_plugin():
            _WITNESS.note_plugin(name, plugin)
        _WITNESS.write()
