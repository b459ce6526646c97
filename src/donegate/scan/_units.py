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
    """The statements of ``tree`` (parsed from ``source``) whose text ``other`` lacks.

    A statement is left out when its text occurs as often as a whole-line block of ``other``
    (``other`` need not be parsed): its lines, and the constructs on them, were all there
    before. That is a filter for what to look at; counting what was added needs
    :func:`exact_changes`, since a block of ``other`` may be part of a larger statement there.
    Imports are always kept: later statements name modules through them.
    """
    if other is None:
        return tree
    texts = _texts(tree, source)
    counts = Counter(texts)
    haystack = "\n" + "\n".join(other.splitlines()) + "\n"
    body = [
        statement
        for statement, text in zip(tree.body, texts, strict=True)
        if isinstance(statement, _IMPORTS) or counts[text] > haystack.count(f"\n{text}\n")
    ]
    return ast.Module(body=body, type_ignores=[])


def exact_changes(
    new: ast.Module, new_source: str, old: ast.Module, old_source: str
) -> tuple[ast.Module, ast.Module]:
    """The statements only the new version has, and those only the old one had.

    Statements are matched by their whole text, as multisets: what both versions have adds
    the same constructs to each side, so the difference of the two parts' constructs is the
    difference of the two files'.
    """
    new_texts, old_texts = _texts(new, new_source), _texts(old, old_source)
    return _without(new, new_texts, Counter(old_texts)), _without(
        old, old_texts, Counter(new_texts)
    )


def _without(tree: ast.Module, texts: list[str], other: Counter[str]) -> ast.Module:
    body: list[ast.stmt] = []
    for statement, text in zip(tree.body, texts, strict=True):
        if other[text] > 0:
            other[text] -= 1
        else:
            body.append(statement)
    return ast.Module(body=body, type_ignores=[])


def _texts(tree: ast.Module, source: str) -> list[str]:
    lines = source.splitlines()
    return [_text(statement, lines) for statement in tree.body]


def _text(statement: ast.stmt, lines: list[str]) -> str:
    decorators = getattr(statement, "decorator_list", [])
    start = min([statement.lineno, *(d.lineno for d in decorators)])
    end = statement.end_lineno or statement.lineno
    return "\n".join(lines[start - 1 : end])
