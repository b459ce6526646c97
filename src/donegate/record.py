"""``Record``: donegate's named tuples, defined without ``typing.NamedTuple``'s cost.

Defining a ``typing.NamedTuple`` class costs about 180 us the first time: ``typing`` compiles
every field's annotation (they are strings, under ``from __future__ import annotations``) and
``collections.namedtuple`` compiles its ``__new__`` from source. A stop hook defines some forty
of them at every agent stop (7 ms of its start-up), and ``collect`` a score before its test
command can start (as dataclasses they cost more still, and import ``inspect``). ``Record``
makes the same kind of class (a ``tuple`` subclass with the same fields, defaults, methods and
behaviour) in a few microseconds, by building it directly.

Type checkers see ``typing.NamedTuple`` itself (``from donegate.record import Record`` is the
``typing`` name under ``TYPE_CHECKING``), so a record is checked exactly as a named tuple is.
What a class body may hold is what ``typing.NamedTuple`` allows: annotated fields (those with a
default after those without), methods, properties, class and static methods, a docstring.
"""

from __future__ import annotations

from collections.abc import Iterable
from operator import itemgetter

try:
    from _collections import _tuplegetter  # type: ignore[import-not-found]  # as namedtuple's
except ImportError:  # another interpreter: a property over itemgetter reads the same

    def _tuplegetter(index: int, doc: str) -> property:
        return property(itemgetter(index), doc=doc)


TYPE_CHECKING = False  # not typing's: importing typing costs a hook 3 ms

__all__ = ["Record"]

# Names a record's class body may not define: they are the tuple's own (as typing refuses).
_RESERVED = frozenset(
    {
        "__new__",
        "__init__",
        "__slots__",
        "__getnewargs__",
        "_fields",
        "_field_defaults",
        "_make",
        "_replace",
        "_asdict",
        "_source",
    }
)


class _RecordMeta(type):
    """Builds each ``class X(Record)`` as a plain ``tuple`` subclass, as ``NamedTuple`` does."""

    def __new__(mcs, name: str, bases: tuple[type, ...], namespace: dict[str, object]) -> type:
        if not bases:  # Record itself
            return super().__new__(mcs, name, bases, namespace)
        if bases != (Record,):
            raise TypeError("a record class derives from Record alone")
        return _build(name, namespace)


def _build(name: str, namespace: dict[str, object]) -> type:
    annotations = namespace.get("__annotations__", {})
    assert isinstance(annotations, dict)
    fields = tuple(annotations)
    defaults = {f: namespace[f] for f in fields if f in namespace}
    required = len(fields) - len(defaults)
    if any(f not in defaults for f in fields[required:]):
        raise TypeError(f"{name}: a field without a default follows one with a default")
    for key in namespace:
        if key in _RESERVED:
            raise AttributeError(f"{name}: cannot overwrite record attribute {key}")
    body = {k: v for k, v in namespace.items() if k not in defaults}
    body.update(
        __slots__=(),
        _fields=fields,
        _field_defaults=defaults,
        __match_args__=fields,
        __new__=_constructor(name, fields, defaults),
        __getnewargs__=_getnewargs,
        __repr__=body.get("__repr__", _repr),
        _make=classmethod(_make),
        _replace=_replace,
        _asdict=_asdict,
    )
    for index, field in enumerate(fields):
        body[field] = _tuplegetter(index, f"Alias for field number {index}")
    return type(name, (tuple,), body)


def _constructor(name: str, fields: tuple[str, ...], defaults: dict[str, object]) -> object:
    count = len(fields)
    tail = tuple(defaults.values())
    required = count - len(tail)

    def __new__(cls: type, *args: object, **kwargs: object) -> tuple[object, ...]:
        if not kwargs and len(args) == count:
            return tuple.__new__(cls, args)
        return tuple.__new__(cls, _bound(name, fields, required, tail, args, kwargs))

    return __new__  # a plain function: type() makes a class's __new__ static


def _bound(
    name: str,
    fields: tuple[str, ...],
    required: int,
    tail: tuple[object, ...],
    args: tuple[object, ...],
    kwargs: dict[str, object],
) -> list[object]:
    if len(args) > len(fields):
        raise TypeError(f"{name}() takes {len(fields)} arguments, {len(args)} given")
    values = list(args)
    for index in range(len(args), len(fields)):
        field = fields[index]
        if field in kwargs:
            values.append(kwargs.pop(field))
        elif index >= required:
            values.append(tail[index - required])
        else:
            raise TypeError(f"{name}() missing required argument: {field!r}")
    for field in kwargs:
        kind = "multiple values for" if field in fields else "an unexpected keyword"
        raise TypeError(f"{name}() got {kind} argument {field!r}")
    return values


def _getnewargs(self: tuple[object, ...]) -> tuple[object, ...]:
    return tuple(self)


def _repr(self: tuple[object, ...]) -> str:
    names: tuple[str, ...] = type(self)._fields  # type: ignore[attr-defined]
    inner = ", ".join(f"{n}={v!r}" for n, v in zip(names, self, strict=True))
    return f"{type(self).__name__}({inner})"


def _make(cls: type, iterable: Iterable[object]) -> tuple[object, ...]:
    values = tuple(iterable)
    if len(values) != len(cls._fields):  # type: ignore[attr-defined]
        raise TypeError(f"expected {len(cls._fields)} arguments, got {len(values)}")  # type: ignore[attr-defined]
    return tuple.__new__(cls, values)


def _replace(self: tuple[object, ...], **changes: object) -> tuple[object, ...]:
    names: tuple[str, ...] = type(self)._fields  # type: ignore[attr-defined]
    values = tuple(changes.pop(n, v) for n, v in zip(names, self, strict=True))
    if changes:
        raise ValueError(f"Got unexpected field names: {list(changes)!r}")
    return tuple.__new__(type(self), values)


def _asdict(self: tuple[object, ...]) -> dict[str, object]:
    return dict(zip(type(self)._fields, self, strict=True))  # type: ignore[attr-defined]


if TYPE_CHECKING:
    from typing import NamedTuple as Record
else:

    class Record(metaclass=_RecordMeta):
        """Derive from this as from ``typing.NamedTuple`` (which type checkers take it for)."""

        __slots__ = ()
