"""Tools that change the world, wrapped so that each call is recorded as a mutation.

The target is the team's template (``accounts/{account_id}``) filled from the call's own
arguments, bound as Python binds them (defaults included). The mutation is timed when the call
ended, after the tool returned: a check must observe the world after that. A call that raised
(or was cancelled) is recorded too, as attempted, with the exception's type: a tool can fail
after it changed something (a timeout after the commit), and only a check can show it did not.
A call whose arguments do not bind raises before the tool runs, and records nothing.
"""

from __future__ import annotations

import functools
import inspect
import string
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar, cast

from donegate.errors import InvalidInput

F = TypeVar("F", bound=Callable[..., Any])
Recorder = Callable[[str, str, str | None, str | None], None]
"""``record(kind, target, tool, error)``: where a wrapped tool's calls go."""


def fields_of(template: str) -> tuple[str, ...]:
    """The argument names a target template reads (``{account.id}`` reads ``account``)."""
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as exc:
        raise InvalidInput(f"not a target template: {exc}", "target") from None
    names = []
    for _, field, _, _ in parsed:
        if field is None:
            continue
        root = field.split(".", 1)[0].split("[", 1)[0]
        if not root or root.isdigit():
            raise InvalidInput(
                f"{template!r}: a field must name an argument, got {{{field}}}", "target"
            )
        names.append(root)
    return tuple(names)


def check_template(template: str, signature: inspect.Signature, name: str) -> None:
    """Refuse, when the tool is wrapped, a template naming what no call of the tool can give."""
    params = signature.parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return
    for field in fields_of(template):
        if field not in params:
            raise InvalidInput(
                f"{template!r} names {field!r}, which is not an argument of {name}; "
                f"expected one of {', '.join(params) or '(none)'}",
                "target",
            )


def fill(template: str, arguments: Mapping[str, Any]) -> str:
    """The template filled from the call's arguments; the template itself if it cannot be (an
    attribute the argument lacks): the call is still recorded, under the name the team wrote."""
    try:
        return template.format_map(arguments)
    except Exception:
        return template


def wrap(func: F, *, kind: str, target: str, record: Recorder) -> F:
    """``func``, recording each call with ``record``; async stays async, the signature is kept."""
    if not isinstance(kind, str) or not kind.strip():
        raise InvalidInput(f"got {kind!r}, expected a mutation kind", "kind")
    signature = inspect.signature(func)
    name = getattr(func, "__name__", None) or repr(func)
    check_template(target, signature, name)

    def where(args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
        bound = signature.bind(*args, **kwargs)  # a TypeError here: the tool would not run
        bound.apply_defaults()
        values = dict(bound.arguments)
        for param in signature.parameters.values():
            if param.kind is inspect.Parameter.VAR_KEYWORD:
                values.update(values.pop(param.name, {}))
        return fill(target, values)

    if inspect.iscoroutinefunction(func):
        run = cast("Callable[..., Awaitable[Any]]", func)

        @functools.wraps(func)
        async def calling(*args: Any, **kwargs: Any) -> Any:
            at = where(args, kwargs)
            try:
                result = await run(*args, **kwargs)
            except BaseException as exc:
                record(kind, at, name, type(exc).__name__)
                raise
            record(kind, at, name, None)
            return result

        return cast("F", calling)

    @functools.wraps(func)
    def called(*args: Any, **kwargs: Any) -> Any:
        at = where(args, kwargs)
        try:
            result = func(*args, **kwargs)
        except BaseException as exc:
            record(kind, at, name, type(exc).__name__)
            raise
        record(kind, at, name, None)
        return result

    return cast("F", called)
