"""The sealed run imports what the project's own run imports: the same file of the tree, found
through the same roots in the same order, or the run does not count.

Each case runs the project's own command (``python -m pytest``) in the live tree, and donegate's
sealed run of the same snapshot. In the controls the project's test passes only when ``mypkg``
came from the path it names (relative to pytest's root): "both pass" means "both imported that
file". The attacks first show the project's own run failing where the old copy (``src/`` always
first) passed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from donegate.collect import collect
from donegate.sealed.copy import seal
from donegate.workspace import Snapshot
from tests.checks.support import claim_with, config_from, detail, only, state, write

BROKEN = "def add(a, b):\n    return a - b\n"
FIXED = "def add(a, b):\n    return a + b\n"
PLAIN_TEST = {
    "tests/test_calc.py": """
        from mypkg import add


        def test_add():
            assert add(2, 3) == 5
    """
}


def origin_test(expected: str) -> dict[str, str]:
    """The project's test: ``add`` works, and ``mypkg`` came from ``expected``."""
    return {
        "tests/test_calc.py": f"""
            import os

            import mypkg


            def test_add(request):
                assert mypkg.add(2, 3) == 5
                where = os.path.relpath(mypkg.__file__, request.config.rootpath)
                assert where == {expected!r}
        """
    }


def venv(tmp_path: Path, *lines: str) -> tuple[Path, Path]:
    """A virtualenv that reaches this interpreter's pytest, with a ``.pth`` of ``lines`` (an
    editable install's); its interpreter and its site-packages."""
    where = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True)
    [site] = where.glob("lib/python*/site-packages")
    write(site, {"zz_outer.pth": sysconfig.get_paths()["purelib"] + "\n"})
    if lines:
        write(site, {"__editable__.mypkg-0.1.pth": "".join(f"{line}\n" for line in lines)})
    return where / "bin" / "python", site


def command(python: Path | str = sys.executable) -> list[str]:
    return [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider"]


def live_run_passes(root: Path, python: Path | str = sys.executable) -> bool:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    done = subprocess.run(command(python), cwd=root, env=env, capture_output=True, check=False)
    return done.returncode == 0


def sealed_run(
    root: Path, state_dir: Path, python: Path | str = sys.executable, site: Path | None = None
) -> tuple[str, list[str], str]:
    """The verdict of donegate's sealed run, the copy's findings and why the run did not count."""
    check = f"""
        [[checks]]
        check_type = "test_run"
        command = {json.dumps(command(python))}
        timeout_s = 120
    """
    sites = [site] if site is not None else []
    with seal(Snapshot.take(root), state_dir=state_dir, site_dirs=sites) as sealed:
        done = collect(claim_with("mypkg/__init__.py"), config_from(check, root), sealed=sealed)
        findings = list(sealed.findings)
    return state(done), findings, str(detail(only(done)).get("why_not_counted") or "")


# --- attacks -----------------------------------------------------------------------------------


def test_a_src_module_that_shadows_the_root_module_is_not_imported(tmp_path: Path) -> None:
    """The project's run imports ``./mypkg``; the agent's ``src/mypkg``, which nothing puts on
    the project's path, is no more importable in the sealed run."""
    root = write(tmp_path / "live", {"mypkg/__init__.py": BROKEN, **PLAIN_TEST})
    write(root, {"src/mypkg/__init__.py": FIXED})
    assert not live_run_passes(root)
    assert sealed_run(root, tmp_path / "state")[:2] == ("refuted", [])


def test_a_package_moved_under_an_unnamed_src_is_importable_in_neither(tmp_path: Path) -> None:
    root = write(tmp_path / "live", {"src/mypkg/__init__.py": FIXED, **PLAIN_TEST})
    assert not live_run_passes(root)
    assert sealed_run(root, tmp_path / "state")[:2] == ("refuted", [])


def test_a_root_module_beside_an_editable_src_is_a_finding(tmp_path: Path) -> None:
    """An editable install puts ``src/`` last on the project's path, and ``python -m pytest``
    the working directory first: the project's run imports ``./mypkg``. The sealed run puts the
    copy's ``src/`` first, so it would import the other: the run does not count."""
    root = write(tmp_path / "live", {"src/mypkg/__init__.py": FIXED, **PLAIN_TEST})
    write(root, {"mypkg/__init__.py": BROKEN})
    python, site = venv(tmp_path, str(root / "src"))
    assert not live_run_passes(root, python)
    verdict, findings, why = sealed_run(root, tmp_path / "state", python, site)
    assert verdict != "verified"
    assert findings == [
        "src: module 'mypkg' is also at the workspace's root (mypkg): the project's own run "
        "imports that one wherever the working directory or the root leads its import path "
        "(python -m pytest, a root conftest.py), where the sealed run would import this one"
    ]
    assert "is also at the workspace's root" in why


# --- the same file in both runs ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        ({"pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n'}, "src"),
        # The key spelled with an escape, which a text search for it would miss.
        ({"pyproject.toml": '[tool.pytest.ini_options]\n"\\u0070ythonpath" = ["src"]\n'}, "src"),
        ({"tox.ini": "[pytest]\npythonpath = src\n"}, "src"),
        ({"setup.cfg": "[tool:pytest]\npythonpath = src\n"}, "src"),
        ({}, "."),  # the working directory, where python -m pytest finds it
        ({"conftest.py": ""}, "."),  # the root, which pytest puts first for its conftest.py
    ],
)
def test_both_runs_import_the_same_file(
    tmp_path: Path, config: dict[str, str], expected: str
) -> None:
    module = os.path.normpath(f"{expected}/mypkg/__init__.py")
    root = write(tmp_path / "live", {module: FIXED, **config, **origin_test(module)})
    assert live_run_passes(root)
    assert sealed_run(root, tmp_path / "state")[:2] == ("verified", [])


def test_both_runs_import_the_same_file_of_an_editable_src(tmp_path: Path) -> None:
    root = write(tmp_path / "live", {"src/mypkg/__init__.py": FIXED})
    write(root, origin_test("src/mypkg/__init__.py"))
    python, site = venv(tmp_path, str(root / "src"))
    assert live_run_passes(root, python)
    assert sealed_run(root, tmp_path / "state", python, site)[:2] == ("verified", [])


def test_a_src_that_pytest_names_beside_a_root_module_is_no_finding(tmp_path: Path) -> None:
    """pytest puts its ``pythonpath`` first in both runs: both import ``src/mypkg``."""
    root = write(tmp_path / "live", {"src/mypkg/__init__.py": FIXED, "mypkg/__init__.py": BROKEN})
    write(root, {"tox.ini": "[pytest]\npythonpath = src\n", **origin_test("src/mypkg/__init__.py")})
    assert live_run_passes(root)
    assert sealed_run(root, tmp_path / "state")[:2] == ("verified", [])


def test_a_root_module_beside_an_installed_copy_of_it(tmp_path: Path) -> None:
    """A copy of the project installed (not editable) in the interpreter's site-packages: the
    project's run imports the tree's module, the sealed run the installed one."""
    python, site = venv(tmp_path)
    write(site, {"mypkg/__init__.py": FIXED})
    root = write(tmp_path / "live", {"mypkg/__init__.py": BROKEN, **PLAIN_TEST})
    assert not live_run_passes(root, python)  # the tree's code is broken
    assert sealed_run(root, tmp_path / "state", python, site)[0] != "verified"
