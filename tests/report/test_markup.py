"""The report's one way to make HTML, and a check that its modules take no other."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import donegate.report
from donegate.report.markup import Markup, escape, html, join

_PACKAGE = Path(donegate.report.__file__).parent


def test_values_are_escaped_and_markup_is_kept() -> None:
    made = html("<p title='{}'>{}</p>", "'\"><b>", Markup("<i>kept</i>"))
    assert made == "<p title='&#x27;&quot;&gt;&lt;b&gt;'><i>kept</i></p>"
    assert isinstance(made, Markup)
    assert join([made, escape("<&>")], " ").endswith(" &lt;&amp;&gt;")
    assert html("{n}", n=5) == "5"


def test_a_lone_surrogate_is_written_as_its_escape() -> None:
    shown = escape("file-\udc80.py <")
    assert shown == "file-\\udc80.py &lt;"
    shown.encode("utf-8")  # the page can be written


def _writes_markup(node: ast.AST) -> str | None:
    """What ``node`` does to make HTML other than through markup.html, if it does."""
    if isinstance(node, ast.JoinedStr):  # an f-string: its values are never escaped
        if any(isinstance(v, ast.Constant) and "<" in str(v.value) for v in node.values):
            return "an f-string writes markup"
    elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod | ast.Add):
        if isinstance(node.left, ast.Constant) and "<" in str(node.left.value):
            return "% or + writes markup"
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        template = node.func.value
        if node.func.attr == "format" and isinstance(template, ast.Constant):
            return "str.format writes markup" if "<" in str(template.value) else None
    elif isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Markup":
        literal = all(isinstance(arg, ast.Constant) for arg in node.args)
        return None if literal else "Markup() of a value that is not a literal"
    return None


def _raw_markup(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        f"{path.name}:{getattr(node, 'lineno', '?')}: {said}"
        for node in ast.walk(tree)
        if (said := _writes_markup(node)) is not None
    ]


@pytest.mark.parametrize(
    "module",
    sorted(p.name for p in _PACKAGE.glob("*.py") if p.name != "markup.py"),
)
def test_no_module_of_the_report_writes_markup_by_hand(module: str) -> None:
    assert _raw_markup(_PACKAGE / module) == []
