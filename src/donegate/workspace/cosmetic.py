"""Whether an edit changes only comments and whitespace.

Python is compared by its AST (``ast.dump`` leaves out line numbers, comments and formatting).
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
    old_dump, new_dump = _python_dump(old), _python_dump(new)
    return old_dump is not None and old_dump == new_dump


def _python_dump(source: str) -> str | None:
    try:
        return ast.dump(ast.parse(source))
    except (SyntaxError, ValueError, RecursionError):
        return None


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
