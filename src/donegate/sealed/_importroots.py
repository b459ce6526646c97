"""Where the code under test is imported from: the roots the project's own run imports from the
tree, mapped into the sealed copy.

An editable install points the interpreter at the live tree: a ``.pth`` line naming ``src/``
(setuptools' src layout, hatchling), or a finder module whose mapping names each top-level package
(setuptools' flat layout, the ``editables`` library). A sealed run must import the copy instead,
so these roots are mapped into it and put first on the import path: directories as they are,
single packages through links in a directory of their own (putting the copy's root on the path
would expose every top-level file, a ``pytest.py`` among them). ``src/`` is such a root only when
the project's run has it on its path: an editable install names it, or pytest's ``pythonpath``
setting does. A ``src/`` that nothing names stays off the path, as in the project's own run: a
module there is importable in neither.

The path put first comes before the working directory, the standard library and site-packages,
where a ``.pth`` line came after them. So a copied module would now win over a module of the
same name that the project's run finds first. Each such name is a finding:

- one named like a module of the standard library or of the test runner;
- one that an editable install maps and that the workspace's root also defines (``./pkg``
  beside an installed ``./src/pkg``): the project's run imports the root's wherever the working
  directory or the root leads its path (``python -m pytest``, a ``conftest.py`` at the root),
  where the sealed run would import the other. Which one a given command imports cannot be told
  from the tree, so the run does not count. (A ``src/`` that pytest's ``pythonpath`` names is
  put first by pytest itself, in both runs.)
"""

from __future__ import annotations

import ast
import glob
import os
import site
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

from donegate.record import Record

# What pytest and donegate's judge import besides the standard library.
RUNNER_MODULES = frozenset(
    {
        "pytest",
        "_pytest",
        "pluggy",
        "py",
        "iniconfig",
        "packaging",
        "exceptiongroup",
        "tomli",
        "sitecustomize",
        "usercustomize",
        "donegate",
    }
)
_EXTENSION = (".so", ".pyd")


class ImportRoots(Record):
    """The sealed run's import path (first first), and the names on it that shadow the judge."""

    pythonpath: tuple[str, ...]
    findings: list[str]


def import_roots(live: Path, copy: Path, links: Path, site_dirs: Iterable[Path]) -> ImportRoots:
    """The copy's import roots: ``src/`` where pytest names it, and what editable installs in
    ``site_dirs`` map (see the module doc)."""
    roots: list[str] = []
    named = _pytest_names_src(copy) and (copy / "src").is_dir() and not (copy / "src").is_symlink()
    if named:
        roots.append(str(copy / "src"))
    mapped: dict[str, str] = {}
    for site_dir in _unique(site_dirs):
        for line in _pth_lines(site_dir):
            if line.startswith(("import ", "import\t")):
                mapped.update(_finder_mappings(site_dir, line))
            else:
                inside = _inside(live, site_dir / line)
                if inside is not None and (copy / inside).is_dir():
                    roots.append(str(copy / inside))
    linked = _link_packages(live, copy, links, mapped)
    if linked:
        roots.append(str(links))
    pythonpath = tuple(dict.fromkeys(roots))
    # A root pytest puts first itself comes before the working directory in both runs.
    moved = [r for r in pythonpath if not (named and r == str(copy / "src"))]
    findings = [*_shadowing(pythonpath, copy, links), *_doubled(moved, copy, links)]
    return ImportRoots(pythonpath, findings)


def site_dirs_of(live: Path) -> list[Path]:
    """Where editable installs of the project may live: its in-tree virtualenvs, the active one,
    and the interpreter running donegate."""
    prefixes = [child for child in _children(live) if (child / "pyvenv.cfg").is_file()]
    if os.environ.get("VIRTUAL_ENV"):
        prefixes.append(Path(os.environ["VIRTUAL_ENV"]))
    found = [Path(p) for prefix in prefixes for p in _site_packages(prefix)]
    found += [Path(p) for p in site.getsitepackages()]
    if site.ENABLE_USER_SITE:
        found.append(Path(site.getusersitepackages()))
    return found


def _site_packages(prefix: Path) -> list[str]:
    return sorted(glob.glob(str(prefix / "lib" / "python*" / "site-packages"))) + [
        str(p) for p in (prefix / "Lib" / "site-packages",) if p.is_dir()
    ]


def _children(path: Path) -> list[Path]:
    try:
        return [Path(entry.path) for entry in os.scandir(path) if entry.is_dir()]
    except OSError:
        return []


def _unique(paths: Iterable[Path]) -> Iterator[Path]:
    seen: set[Path] = set()
    for path in paths:
        real = path.resolve()
        if real not in seen and real.is_dir():
            seen.add(real)
            yield real


def _pth_lines(site_dir: Path) -> Iterator[str]:
    """The lines of ``site_dir``'s ``.pth`` files, in the order ``site`` reads them."""
    for pth in sorted(site_dir.glob("*.pth")):
        try:
            text = pth.read_text(encoding="utf-8", errors="surrogateescape")
        except OSError:
            continue
        for line in text.splitlines():
            if line.strip() and not line.startswith("#"):
                yield line.rstrip()


def _inside(live: Path, path: Path) -> str | None:
    """``path`` relative to ``live`` when it lies in it (``""`` for ``live`` itself)."""
    normal = os.path.normpath(path)
    if normal == str(live):
        return ""
    prefix = f"{live}{os.sep}"
    return normal[len(prefix) :] if normal.startswith(prefix) else None


def _finder_mappings(site_dir: Path, line: str) -> dict[str, str]:
    """Package name -> path, from the modules an ``import`` line of a ``.pth`` loads."""
    mapping: dict[str, str] = {}
    for name in _imported(line):
        module = site_dir / f"{name}.py"
        try:
            tree = ast.parse(module.read_bytes())
        except (OSError, SyntaxError, ValueError):
            continue
        mapping.update(_literal_mappings(tree))
    return mapping


def _imported(line: str) -> list[str]:
    names = []
    for statement in line.split(";"):
        words = statement.split()
        if len(words) >= 2 and words[0] == "import":
            names += [w.strip(",") for w in words[1:] if w.strip(",").isidentifier()]
    return names


def _literal_mappings(tree: ast.AST) -> dict[str, str]:
    """setuptools' ``MAPPING = {name: path}`` and ``editables``' ``map_module(name, path)``."""
    found: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign | ast.AnnAssign) and _named(node, "MAPPING"):
            value = _literal(node.value)
            if isinstance(value, dict):
                found.update({k: v for k, v in value.items() if _strs(k, v)})
        elif isinstance(node, ast.Call) and _called(node, "map_module") and len(node.args) == 2:
            name, path = (_literal(arg) for arg in node.args)
            if isinstance(name, str) and isinstance(path, str):
                found[name] = path.removesuffix(f"{os.sep}__init__.py")
    return found


def _named(node: ast.Assign | ast.AnnAssign, name: str) -> bool:
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    return any(isinstance(t, ast.Name) and t.id == name for t in targets)


def _called(node: ast.Call, name: str) -> bool:
    func = node.func
    return (isinstance(func, ast.Attribute) and func.attr == name) or (
        isinstance(func, ast.Name) and func.id == name
    )


def _literal(node: ast.expr | None) -> object:
    try:
        return ast.literal_eval(node) if node is not None else None
    except ValueError:
        return None


def _strs(*values: object) -> bool:
    return all(isinstance(v, str) for v in values)


def _link_packages(live: Path, copy: Path, links: Path, mapped: dict[str, str]) -> bool:
    """Link each mapped package that lives in the tree to its copy; whether any was linked."""
    made = False
    for name, path in sorted(mapped.items()):
        inside = _inside(live, Path(path))
        if inside is None or not name.isidentifier():
            continue
        target = copy / inside
        suffix = ".py" if target.suffix == ".py" else ""
        links.mkdir(mode=0o700, exist_ok=True)
        os.symlink(target, links / f"{name}{suffix}")
        made = True
    return made


def _shadowing(pythonpath: Iterable[str], copy: Path, links: Path) -> list[str]:
    findings = []
    for root in pythonpath:
        where = "linked packages" if root == str(links) else os.path.relpath(root, copy)
        for name in sorted(_top_level(Path(root))):
            if name in RUNNER_MODULES or name in sys.stdlib_module_names:
                kind = "the test runner's" if name in RUNNER_MODULES else "the standard library's"
                findings.append(
                    f"{where}: module {name!r} would shadow {kind} on the sealed run's import "
                    "path (first on it, where an editable install put it last)"
                )
    return findings


def _doubled(pythonpath: Iterable[str], copy: Path, links: Path) -> list[str]:
    """A finding for each module put first that the workspace's root also defines (another
    file): the project's own run may import the root's."""
    at_root = _top_level_paths(copy)
    findings = []
    for root in pythonpath:
        if os.path.realpath(root) == os.path.realpath(copy):
            continue
        where = "linked packages" if root == str(links) else os.path.relpath(root, copy)
        for name, path in sorted(_top_level_paths(Path(root)).items()):
            other = at_root.get(name)
            if other is not None and os.path.realpath(other) != os.path.realpath(path):
                findings.append(
                    f"{where}: module {name!r} is also at the workspace's root "
                    f"({os.path.relpath(other, copy)}): the project's own run imports that one "
                    "wherever the working directory or the root leads its import path (python -m "
                    "pytest, a root conftest.py), where the sealed run would import this one"
                )
    return findings


def _top_level(root: Path) -> set[str]:
    return set(_top_level_paths(root))


def _top_level_paths(root: Path) -> dict[str, str]:
    """The top-level modules importable from ``root``, each with the path that defines it."""
    names: dict[str, str] = {}
    for child in _entries(root):
        name = child.name
        if name.endswith(".py"):
            names[name.removesuffix(".py")] = child.path
        elif name.endswith(_EXTENSION):
            names[name.split(".", 1)[0]] = child.path
        elif name.isidentifier() and os.path.isfile(os.path.join(child.path, "__init__.py")):
            names[name] = child.path  # a directory without one loses to a module further on
    return names


# Where pytest reads its ``pythonpath`` setting, and the table or section that holds it.
_PYTEST_CONFIGS = (
    ("pytest.ini", "pytest"),
    (".pytest.ini", "pytest"),
    ("tox.ini", "pytest"),
    ("setup.cfg", "tool:pytest"),
)


def _pytest_names_src(copy: Path) -> bool:
    """Whether a pytest configuration at the root puts ``src`` on the path (``pythonpath``)."""
    entries = _toml_pythonpath(copy / "pyproject.toml")
    for name, section in _PYTEST_CONFIGS:
        entries += _ini_pythonpath(copy / name, section)
    return any(os.path.normpath(entry) == "src" for entry in entries)


# Parsing a project's configuration files costs a stop some 10 ms before its run can start; a
# file that never names the setting is not parsed. INI keys are read case-blind; a TOML key may
# be spelled with escapes ("\u0070ythonpath"), so a TOML file with one (\u, \U) is always parsed.
_SETTING = "pythonpath"


def _ini_pythonpath(path: Path, section: str) -> list[str]:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    if _SETTING not in text.lower():
        return []
    import configparser

    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error:
        return []
    return parser.get(section, "pythonpath", fallback="").split()


def _toml_pythonpath(path: Path) -> list[str]:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    if _SETTING not in text and "\\u" not in text.lower():
        return []
    import tomllib

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return []
    tool = data.get("tool")
    tables = tool.get("pytest") if isinstance(tool, dict) else None
    found: list[str] = []
    for table in (tables, tables.get("ini_options") if isinstance(tables, dict) else None):
        value = table.get("pythonpath") if isinstance(table, dict) else None
        if isinstance(value, str):
            found += value.split()
        elif isinstance(value, list):
            found += [v for v in value if isinstance(v, str)]
    return found


def _entries(root: Path) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(root) as found:
            return list(found)
    except OSError:
        return []
