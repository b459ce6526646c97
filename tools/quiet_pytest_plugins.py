"""Take the pytest plugins that the suite's own small projects never use out of the development
environment.

The suite starts pytest some hundreds of times, in small projects of its own that use no plugin,
and every pytest start loads every plugin the environment registers (a ``pytest11`` entry point):

- langsmith's, which the ``langgraph`` extra brings: 0.3 s on a quiet machine, over a second on a
  loaded one;
- hypothesis's, anyio's and xdist's, which the suite itself needs as libraries: 0.4 s of CPU at
  every start, and 1.6 s more at a start with no bytecode (a sealed run's first, which compiles
  and rewrites the 120 modules they import into a bytecode store of its own).

So the environment ``make`` builds drops those entry points (the libraries themselves are
untouched), and the suite's own pytest loads the two plugins it uses, xdist and hypothesis's, by
name (``tests/conftest.py``). Run by the Makefile after installing; idempotent.
"""

from __future__ import annotations

import importlib.metadata
import sys
from pathlib import Path

# Distribution -> the names of its pytest11 entry points to drop.
UNUSED = {
    "langsmith": ("langsmith_plugin",),
    "hypothesis": ("hypothesispytest",),
    "anyio": ("anyio",),
    "pytest-xdist": ("xdist", "xdist.looponfail"),
}


def without_pytest_plugin(text: str, name: str) -> str:
    """``entry_points.txt`` text without the ``pytest11`` entry ``name``."""
    out, section = [], None
    for line in text.splitlines(keepends=True):
        stripped = line.strip()
        if stripped.startswith("[") and stripped.endswith("]"):
            section = stripped[1:-1]
        elif section == "pytest11" and stripped.split("=", 1)[0].strip() == name:
            continue
        out.append(line)
    return "".join(out)


def main() -> int:
    for distribution, plugins in UNUSED.items():
        try:
            found = importlib.metadata.distribution(distribution)
        except importlib.metadata.PackageNotFoundError:
            continue
        for file in found.files or ():
            if file.name == "entry_points.txt":
                path = Path(str(found.locate_file(file)))
                text = path.read_text()
                for plugin in plugins:
                    text = without_pytest_plugin(text, plugin)
                path.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
