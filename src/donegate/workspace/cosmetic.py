"""Whether an edit changes only comments and whitespace.

Python is compared by its AST, as ``ast.dump`` would (without line numbers, comments and
formatting).
Docstrings are code: ``__doc__`` is read at runtime (doctests, CLIs built from docstrings,
``typing`` tricks, a test that asserts on it), so an edit to one is never cosmetic. Other
languages are compared by their Pygments token streams without comments and
whitespace; a file no lexer knows is never cosmetic. Anything that does not parse is never
cosmetic.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pygments.token import _TokenType

_PYTHON_SUFFIXES = (".py", ".pyi", ".pyw")


def equivalent(path: str, old: str, new: str) -> bool:
    """Whether ``old`` and ``new`` (two versions of ``path``) differ only cosmetically."""
    if path.endswith(_PYTHON_SUFFIXES):
        return python_equivalent(old, new)
    return tokens_equivalent(path, old, new)


def python_equivalent(old: str, new: str) -> bool:
    """Whether two Python sources have the same AST (docstrings included)."""
    old_tree, new_tree = _python_tree(old), _python_tree(new)
    return old_tree is not None and new_tree is not None and _same_tree(old_tree, new_tree)


def _python_tree(source: str) -> ast.Module | None:
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        return None


def _same_tree(old: ast.AST, new: ast.AST) -> bool:
    """Whether two trees are equal field by field, positions aside (as ``ast.dump`` compares
    them), stopping at the first difference: a stop's edit is rarely cosmetic, and dumping two
    versions of a large module to text took tens of milliseconds before the checks could start."""
    pending: list[tuple[object, object]] = [(old, new)]
    while pending:
        a, b = pending.pop()
        if type(a) is not type(b):
            return False
        if isinstance(a, ast.AST):
            pending.extend((getattr(a, f, None), getattr(b, f, None)) for f in a._fields)
        elif isinstance(a, list):
            if len(a) != len(b):  # type: ignore[arg-type]  # the same type as a
                return False
            pending.extend(zip(a, b, strict=True))  # type: ignore[call-overload]
        elif repr(a) != repr(b):  # constants by their text, as dump does: 0.0 and -0.0 differ
            return False
    return True


def tokens_equivalent(path: str, old: str, new: str) -> bool:
    """Whether two sources lex to the same tokens once comments and whitespace are dropped."""
    from pygments.lexers import get_lexer_for_filename
    from pygments.util import ClassNotFound

    try:
        lexer = get_lexer_for_filename(path, code=new)
    except ClassNotFound:
        return False
    try:
        return list(_significant(lexer.get_tokens(old))) == list(
            _significant(lexer.get_tokens(new))
        )
    except _Unlexable:
        return False


def _significant(tokens: Iterator[tuple[_TokenType, str]]) -> Iterator[tuple[str, str]]:
    from pygments.token import Comment, Error, is_token_subtype

    # Preprocessor lines (#include, #define) and a #! line are lexed as comments but are code.
    code = (Comment.Preproc, Comment.PreprocFile, Comment.Hashbang)
    for kind, text in tokens:
        if is_token_subtype(kind, Comment) and not any(is_token_subtype(kind, c) for c in code):
            continue
        if is_token_subtype(kind, Error):
            raise _Unlexable
        if not text.strip():
            continue
        yield str(kind), text.strip()


class _Unlexable(Exception):
    """A token the lexer could not make sense of: the edit is not provably cosmetic."""
