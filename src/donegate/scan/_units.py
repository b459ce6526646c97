"""The top-level statements a session changed: only they can hold what it added.

A file's constructs are compared with its previous content's by count (see
:mod:`donegate.scan.writes`); statements whose text is the same in both versions add as many
to each side, so both sides can leave them out. That keeps a scan's cost proportional to the
change, not to the file: a one-line fix in a 3,000-line module walks one function.
"""

from __future__ import annotations

import ast
from collections import Counter

_IMPORTS = (ast.Import, ast.ImportFrom)


def changed_part(tree: ast.Module, source: str, other: str | None) -> ast.Module:
    """The statements of ``tree`` (parsed from ``source``) that ``other`` does not have.

    A statement is kept when its text occurs more often in ``source`` than as a whole-line
    block of ``other``. Imports are always kept: later statements name modules through them.
    """
    if other is None:
        return tree
    lines = source.splitlines()
    texts = [_text(statement, lines) for statement in tree.body]
    counts = Counter(texts)
    haystack = "\n" + "\n".join(other.splitlines()) + "\n"
    body = [
        statement
        for statement, text in zip(tree.body, texts, strict=True)
        if isinstance(statement, _IMPORTS) or counts[text] > haystack.count(f"\n{text}\n")
    ]
    return ast.Module(body=body, type_ignores=[])


def _text(statement: ast.stmt, lines: list[str]) -> str:
    decorators = getattr(statement, "decorator_list", [])
    start = min([statement.lineno, *(d.lineno for d in decorators)])
    end = statement.end_lineno or statement.lineno
    return "\n".join(lines[start - 1 : end])
