"""Take the pytest plugins this suite never uses out of the development environment.

langsmith, which the ``langgraph`` extra brings, registers a pytest plugin that every pytest in
the environment loads at start: 0.3 s on a quiet machine, over a second on a loaded one. The
suite starts pytest some hundreds of times, in small projects of its own that use no plugin, so
the environment ``make`` builds drops that entry point (the library itself is untouched). Run by
the Makefile after installing; idempotent.
"""

from __future__ import annotations

import importlib.metadata
import sys
from pathlib import Path

UNUSED = {"langsmith": "langsmith_plugin"}


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
    for distribution, plugin in UNUSED.items():
        try:
            found = importlib.metadata.distribution(distribution)
        except importlib.metadata.PackageNotFoundError:
            continue
        for file in found.files or ():
            if file.name == "entry_points.txt":
                path = Path(str(found.locate_file(file)))
                path.write_text(without_pytest_plugin(path.read_text(), plugin))
    return 0


if __name__ == "__main__":
    sys.exit(main())
