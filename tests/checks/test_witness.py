"""The runner is donegate's: attacks on the test runner, played for real on small projects.

Each test first shows the attack working against a plain ``python -m pytest`` (the control: what
a run in the agent's environment would have reported), then that ``test_run`` does not let it
through. Honest projects (flat and src layouts, ids relative to another root, parametrized ids
with odd characters) still verify.
"""

from __future__ import annotations

import importlib.util
import json
import os
import py_compile
import subprocess
import sys
from pathlib import Path

import pytest

from donegate.checks.test_run import _integrity
from tests.checks.support import collect_one, detail, only, state, write

PY = json.dumps(sys.executable)
PYTEST = f'[{PY}, "-m", "pytest", "-q", "-p", "no:cacheprovider"'

BROKEN = {
    "billing.py": "def zip_code(text):\n    return text\n",
    "tests/test_billing.py": """
        from billing import zip_code

        def test_zip_update():
            assert zip_code(" 94107-1234 ") == "94107"

        def test_other():
            assert True
    """,
}
# A plugin that turns every failure into a pass.
FORGER = """
    import pytest

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(item, call):
        outcome = yield
        report = outcome.get_result()
        report.outcome = "passed"
        report.longrepr = None
"""


def check(command: str = PYTEST + "]", extra: str = "") -> str:
    return f"""
        [[checks]]
        check_type = "test_run"
        command = {command}
        timeout_s = 300
        {extra}
    """


def plain_pytest(
    root: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """The control: pytest as the agent's environment would run it, without donegate."""
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
        cwd=root,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )


def why(done_detail: dict[str, object]) -> str:
    return str(done_detail["why_not_counted"])


def test_a_pytest_module_at_the_root_does_not_replace_the_runner(tmp_path: Path) -> None:
    fake = "import sys\nprint('2 passed in 0.01s')\nsys.exit(0)\n"
    write(tmp_path, {**BROKEN, "pytest.py": fake})
    control = plain_pytest(tmp_path)
    assert control.returncode == 0
    assert "2 passed" in control.stdout  # the agent's module was the runner
    # The witness on its own: the name-based runner-file rule would void the run before it.
    alone = check(extra="protect_runner_files = false")
    done = collect_one(alone, tmp_path, "billing.py", "pytest.py")
    assert only(done).observed_value == {
        "exit_code": 1,
        "passed": 1,
        "failed": 1,
        "errors": 0,
        "skipped": 0,
    }
    assert state(done) == "refuted"


def test_a_plugin_named_in_a_new_test_module_does_not_count(tmp_path: Path) -> None:
    sneaky = "pytest_plugins = ['helpers']\n\ndef test_new():\n    assert True\n"
    write(tmp_path, {**BROKEN, "helpers.py": FORGER, "tests/test_new.py": sneaky})
    control = plain_pytest(tmp_path)
    assert control.returncode == 0  # the failure became a pass
    done = collect_one(check(), tmp_path, "billing.py", "tests/test_new.py", "helpers.py")
    text = why(detail(only(done)))
    assert "plugin 'helpers.py'" in text
    assert "mutation m3" in text
    assert state(done) == "unverified"


@pytest.mark.parametrize(
    ("name", "section"),
    [
        ("pytest.ini", "[pytest]"),
        ("tox.ini", "[pytest]"),
        ("setup.cfg", "[tool:pytest]"),
        ("pyproject.toml", "[tool.pytest.ini_options]"),
    ],
)
def test_a_plugin_named_in_a_written_ini_file_does_not_count(
    tmp_path: Path, name: str, section: str
) -> None:
    # The plugin module was there before (not written); the agent only added `-p` to the ini.
    body = INI_WITH_PLUGIN.replace("[pytest]", section)
    if name == "pyproject.toml":
        body = body.replace("= tools", '= ["tools"]').replace("= -p forge", '= "-p forge"')
    write(tmp_path, {**BROKEN, "tools/forge.py": FORGER, name: body})
    control = plain_pytest(tmp_path)
    assert control.returncode == 0
    # The witness on its own: the name-based runner-file rule would void the run before it.
    done = collect_one(check(extra="protect_runner_files = false"), tmp_path, "billing.py", name)
    assert f"ini file {name!r}" in why(detail(only(done)))
    assert state(done) == "unverified"
    named = collect_one(check(), tmp_path, "billing.py", name)
    assert "protected pattern" in why(detail(only(named)))


INI_WITH_PLUGIN = """
    [pytest]
    pythonpath = tools
    addopts = -p forge
"""


def test_a_tainted_plugin_does_not_count_in_a_later_session(tmp_path: Path) -> None:
    from donegate.checks import CheckContext
    from donegate.checks.test_run import TEST_RUN, TestRunSettings

    # A plugin that quietly drops the failing test: no report is forged, so only its origin tells.
    hider = "def pytest_collection_modifyitems(items):\n    items[:] = items[1:]\n"
    write(tmp_path, {**BROKEN, "tools/forge.py": hider, "pytest.ini": INI_WITH_PLUGIN})
    settings = TestRunSettings(
        check_type="test_run", command=[sys.executable, "-m", "pytest", "-q"], timeout_s=300
    )
    seen = TEST_RUN.collect(settings, CheckContext(tmp_path, tainted=frozenset({"tools/forge.py"})))
    assert seen.observed is None
    assert "plugin 'tools/forge.py'" in str(seen.why_not)
    assert "tainted" in str(seen.why_not)
    clean = TEST_RUN.collect(settings, CheckContext(tmp_path))
    assert clean.observed is not None  # the control: untainted, the hider's run would count
    assert clean.observed["failed"] == 0


def test_the_agents_environment_does_not_steer_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = write(tmp_path / "elsewhere", {"forge.py": FORGER, "sitecustomize.py": ""})
    project = write(tmp_path / "project", BROKEN)
    steering = {
        "PYTHONPATH": str(elsewhere),
        "PYTEST_ADDOPTS": "-p forge",
        "PYTEST_PLUGINS": "forge",
        "PYTHONSTARTUP": str(elsewhere / "forge.py"),
        "PYTHONWARNINGS": "ignore",
    }
    control = plain_pytest(project, env=steering)
    assert control.returncode == 0
    for name, value in steering.items():
        monkeypatch.setenv(name, value)
    done = collect_one(check(), project, "billing.py")
    assert only(done).observed_value == {
        "exit_code": 1,
        "passed": 1,
        "failed": 1,
        "errors": 0,
        "skipped": 0,
    }
    assert detail(only(done))["failing"] == ["tests/test_billing.py::test_zip_update"]
    assert state(done) == "refuted"


def test_a_conftest_that_rewrites_reports_is_caught_by_the_witness(tmp_path: Path) -> None:
    # Not declared as a write (so the protected-name rule does not see it): the witness does.
    write(tmp_path, {**BROKEN, "conftest.py": FORGER})
    assert plain_pytest(tmp_path).returncode == 0
    done = collect_one(check(), tmp_path, "billing.py")
    text = why(detail(only(done)))
    assert "tampered" in text
    assert "tests/test_billing.py::test_zip_update call: the test raised" in text
    assert state(done) == "unverified"


PATCH_REPORTS = """
    import sys

    if "_pytest.reports" in sys.modules:
        from _pytest.reports import TestReport

        _made = TestReport.from_item_and_call.__func__

        def _always_passed(cls, item, call):
            report = _made(cls, item, call)
            report.outcome, report.longrepr = "passed", None
            return report

        TestReport.from_item_and_call = classmethod(_always_passed)


    def zip_code(text):
        return text
"""
PATCH_CALLS = """
    import sys

    if "_pytest.runner" in sys.modules:
        from _pytest import runner

        _from_call = runner.CallInfo.from_call.__func__

        def _never_raised(cls, func, when, reraise=None):
            info = _from_call(cls, func, when, reraise)
            info.excinfo = None
            return info

        runner.CallInfo.from_call = classmethod(_never_raised)


    def zip_code(text):
        return text
"""


@pytest.mark.parametrize("source", [PATCH_REPORTS, PATCH_CALLS], ids=["reports", "calls"])
def test_code_under_test_that_patches_pytest_is_caught(tmp_path: Path, source: str) -> None:
    write(tmp_path, {**BROKEN, "billing.py": source})
    assert plain_pytest(tmp_path).returncode == 0
    done = collect_one(check(), tmp_path, "billing.py")
    assert "was replaced" in why(detail(only(done)))
    assert state(done) == "unverified"


REGISTERS_A_PLUGIN = """
    import gc
    import sys

    import pytest


    class _Forger:
        @pytest.hookimpl(hookwrapper=True)
        def pytest_runtest_makereport(self, item, call):
            outcome = yield
            report = outcome.get_result()
            report.outcome, report.longrepr = "passed", None


    if "_pytest.config" in sys.modules:
        from _pytest.config import Config

        for thing in gc.get_objects():
            if isinstance(thing, Config):
                thing.pluginmanager.register(_Forger(), "forger")


    def zip_code(text):
        return text
"""


def test_code_under_test_that_registers_a_plugin_is_named(tmp_path: Path) -> None:
    write(tmp_path, {**BROKEN, "billing.py": REGISTERS_A_PLUGIN})
    assert plain_pytest(tmp_path).returncode == 0
    done = collect_one(check(), tmp_path, "billing.py")
    assert "plugin 'billing.py'" in why(detail(only(done)))
    assert state(done) == "unverified"


REWRITES_THE_RECORDS = """
    import atexit, json, os, re, sys


    def _rewrite():
        for name, module in list(sys.modules.items()):
            if name.startswith("donegate_witness_"):
                path = module._WITNESS.report_path
                doc = json.load(open(path))
                for test in doc["tests"]:
                    test["outcome"] = "passed"
                open(path, "w").write(json.dumps(doc))
        for arg in sys.argv:
            if arg.startswith("--junitxml="):
                path = arg.split("=", 1)[1]
                text = re.sub(r"<failure[^>]*>.*?</failure>", "", open(path).read(), flags=re.S)
                open(path, "w").write(text)
        os._exit(0)


    atexit.register(_rewrite)


    def zip_code(text):
        return text
"""


@pytest.mark.xfail(
    strict=True,
    reason="gap: code under test that finds the witness in sys.modules and rewrites both records "
    "at exit is not caught by the run itself; the static scan of written code (atexit, os._exit, "
    "sys.modules) is what flags it",
)
def test_code_that_rewrites_both_records_at_exit_is_caught(tmp_path: Path) -> None:
    write(tmp_path, {**BROKEN, "billing.py": REWRITES_THE_RECORDS})
    done = collect_one(check(), tmp_path, "billing.py")
    assert state(done) != "verified"


# The witness's account forged, and JUnit's left as pytest wrote it: in the witness's memory,
# before it writes its report, and in its report file, at exit. Either ends the process with
# status 0, so that pytest's own exit status does not tell.
FORGES_THE_WITNESS_IN_MEMORY = """
    import atexit, os, sys


    def _passed(document):
        def forged():
            doc = document()
            for test in doc["tests"]:
                test["outcome"] = "passed"
                test["phases"] = {when: "passed" for when in test["phases"]}
            return doc
        return forged


    for name, module in list(sys.modules.items()):
        if name.startswith("donegate_witness_") and module._WITNESS is not None:
            module._WITNESS.document = _passed(module._WITNESS.document)
    atexit.register(os._exit, 0)


    def zip_code(text):
        return text
"""
FORGES_THE_WITNESS_FILE_AT_EXIT = """
    import atexit, json, os, sys


    def _rewrite():
        for name, module in list(sys.modules.items()):
            if name.startswith("donegate_witness_"):
                path = module._WITNESS.report_path
                doc = json.load(open(path))
                for test in doc["tests"]:
                    test["outcome"] = "passed"
                    test["phases"] = {when: "passed" for when in test["phases"]}
                open(path, "w").write(json.dumps(doc))
        os._exit(0)


    atexit.register(_rewrite)


    def zip_code(text):
        return text
"""


@pytest.mark.parametrize(
    "forger",
    [FORGES_THE_WITNESS_IN_MEMORY, FORGES_THE_WITNESS_FILE_AT_EXIT],
    ids=["in-memory", "file-at-exit"],
)
def test_a_witness_forged_alone_is_caught_by_pytests_junit_report(
    tmp_path: Path, forger: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path, {**BROKEN, "billing.py": forger})
    plain = plain_pytest(tmp_path)
    assert plain.returncode == 0  # what the agent's shell sees,
    assert "1 failed" in plain.stdout  # with the bug still there
    done = collect_one(check(), tmp_path, "billing.py")
    assert state(done) == "unverified"
    assert "the witness and the JUnit report disagree" in why(detail(only(done)))
    assert "test_zip_update" in why(detail(only(done)))
    # Without the cross-check, the forged account is the verdict.
    monkeypatch.setattr(_integrity, "why_not_cross_checked", lambda report, junit: None)
    assert state(collect_one(check(), tmp_path, "billing.py")) == "verified"


def test_a_planted_bytecode_file_is_not_used(tmp_path: Path) -> None:
    # A compiled "fix" with the broken source's size and mtime in its header: Python would use it.
    source = tmp_path / "billing.py"
    write(tmp_path, BROKEN)
    fixed = "def zip_code(text):\n    return '94107'\n"
    broken = "def zip_code(text):\n    return text[:]\n"
    assert len(fixed) == len(broken)
    source.write_text(fixed)
    stamp = source.stat().st_mtime_ns
    py_compile.compile(str(source), cfile=importlib.util.cache_from_source(str(source)))
    source.write_text(broken)
    os.utime(source, ns=(stamp, stamp))
    assert plain_pytest(tmp_path, env={"PYTHONDONTWRITEBYTECODE": "1"}).returncode == 0
    done = collect_one(check(), tmp_path, "billing.py")
    assert state(done) == "refuted"


FLAT = {
    "billing.py": "def zip_code(text):\n    return text.strip()[:5]\n",
    "tests/test_billing.py": BROKEN["tests/test_billing.py"],
}


def test_an_honest_flat_project_still_imports_its_code(tmp_path: Path) -> None:
    write(tmp_path, FLAT)
    # Without donegate's witness, no working directory on sys.path means no `import billing`.
    assert plain_pytest(tmp_path, env={"PYTHONSAFEPATH": "1"}).returncode != 0
    done = collect_one(check(), tmp_path, "billing.py")
    assert state(done) == "verified"


def test_an_honest_src_layout_project_verifies(tmp_path: Path) -> None:
    files = {
        "src/billing/__init__.py": FLAT["billing.py"],
        "tests/test_billing.py": BROKEN["tests/test_billing.py"],
        "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
    }
    write(tmp_path, files)
    done = collect_one(check(), tmp_path, "src/billing/__init__.py")
    assert detail(only(done))["inifile"] == str(tmp_path / "pyproject.toml")
    assert state(done) == "verified"


ODD_IDS = """
    import pytest

    @pytest.mark.parametrize(
        "url",
        ["http://fe80::5054:ff:fe5a:fc0", "a [b] c", "café ☕"],
    )
    def test_urls(url):
        assert url

    class TestGroup:
        @pytest.mark.parametrize("n", [1, 2])
        def test_in_class(self, n):
            assert n
"""


def test_real_world_ids_verify(tmp_path: Path) -> None:
    ini = "[pytest]\ndisable_test_id_escaping_and_forfeit_all_rights_to_community_support = true\n"
    write(tmp_path, {"tests/test_odd.py": ODD_IDS, "pytest.ini": ini})
    required = [
        "tests/test_odd.py::test_urls[http://fe80::5054:ff:fe5a:fc0]",
        "tests/test_odd.py::test_urls[a [b] c]",
        "tests/test_odd.py::test_urls[café ☕]",
        "tests/test_odd.py::TestGroup::test_in_class",
        "tests/test_odd.py::test_urls",
    ]
    done = collect_one(check(extra=f"must_pass = {json.dumps(required)}"), tmp_path, "src/a.py")
    assert detail(only(done))["must_pass"] == dict.fromkeys(required, "passed")
    assert state(done) == "verified"


def test_ids_relative_to_another_root_are_mapped(tmp_path: Path) -> None:
    # pytest's rootdir is sub/ (its ini file); the team wrote ids from the repository root.
    write(tmp_path, {"sub/pytest.ini": "[pytest]\n", "sub/tests/test_a.py": "def test_x(): pass\n"})
    extra = 'must_pass = ["sub/tests/test_a.py::test_x"]'
    done = collect_one(check(PYTEST + ', "sub"]', extra), tmp_path, "src/a.py")
    assert detail(only(done))["must_pass_mapped"] == {
        "sub/tests/test_a.py::test_x": "tests/test_a.py::test_x",
        "rootdir": str(tmp_path / "sub"),
    }
    assert state(done) == "verified"


def test_ids_relative_to_the_working_directory_below_the_root_are_mapped(tmp_path: Path) -> None:
    write(tmp_path, {"pytest.ini": "[pytest]\n", "sub/tests/test_a.py": "def test_x(): pass\n"})
    extra = 'cwd = "sub"\nmust_pass = ["tests/test_a.py::test_x"]'
    done = collect_one(check(extra=extra), tmp_path, "src/a.py")
    mapped = detail(only(done))["must_pass_mapped"]
    assert isinstance(mapped, dict)
    assert mapped["tests/test_a.py::test_x"] == "sub/tests/test_a.py::test_x"
    assert state(done) == "verified"


def _old_suffix_rule(required_key: str, junit_keys: list[str]) -> bool:
    """The matching this replaces: a JUnit key that ended with the required one counted."""
    return any(k == required_key or k.endswith("." + required_key) for k in junit_keys)


def test_an_impostor_of_the_same_name_elsewhere_does_not_count(tmp_path: Path) -> None:
    same = "def test_zip_update():\n    assert True\n"
    files = {
        **BROKEN,
        "tests/__init__.py": "",
        "legacy/__init__.py": "",
        "legacy/tests/__init__.py": "",
        "legacy/tests/test_billing.py": same,
        "legacy/tests/test_gone.py": same,
    }
    write(tmp_path, files)
    impostors = [
        "legacy.tests.test_billing::test_zip_update",
        "legacy.tests.test_gone::test_zip_update",
    ]
    assert _old_suffix_rule("tests.test_billing::test_zip_update", impostors)
    assert _old_suffix_rule("tests.test_gone::test_zip_update", impostors)
    command = PYTEST + ', "--deselect", "tests/test_billing.py::test_zip_update"]'
    required = ["tests/test_billing.py::test_zip_update", "tests/test_gone.py::test_zip_update"]
    done = collect_one(check(command, f"must_pass = {json.dumps(required)}"), tmp_path, "b.py")
    assert detail(only(done))["must_pass"] == {
        "tests/test_billing.py::test_zip_update": "deselected",
        "tests/test_gone.py::test_zip_update": "absent",
    }
    assert state(done) == "unverified"


@pytest.mark.parametrize(
    ("name", "dropped"),
    [
        ("PYTHONPATH", True),
        ("pythonstartup", True),
        ("PYTEST_ADDOPTS", True),
        ("_PYTEST_RAISE", True),
        ("PY_IGNORE_IMPORTMISMATCH", True),
        ("VIRTUAL_ENV", True),
        ("LD_PRELOAD", True),
        ("PATH", False),
        ("HOME", False),
        ("LANG", False),
    ],
)
def test_the_inherited_environment_loses_what_steers_python(name: str, dropped: bool) -> None:
    from donegate.sealed._runenv import base_environment

    env = base_environment({"PYTHONHASHSEED": "0"}, {name: "x", "TERM": "dumb"})
    assert (name not in env) == dropped
    assert env["PYTHONHASHSEED"] == "0"  # the team's own env is kept


def test_a_witness_report_that_is_not_a_plain_file_reads_as_none(tmp_path: Path) -> None:
    from donegate.sealed._witness import read_report

    (tmp_path / "real.json").write_text('{"witness": 1}')
    (tmp_path / "link.json").symlink_to(tmp_path / "real.json")
    os.mkfifo(tmp_path / "fifo.json")
    (tmp_path / "bad.json").write_text("{not json")
    for name in ("missing.json", "link.json", "fifo.json", "bad.json", "real.json"):
        assert read_report(tmp_path / name) is None
