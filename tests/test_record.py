"""``Record`` classes behave as the ``typing.NamedTuple`` classes type checkers take them for."""

from __future__ import annotations

import copy
import json
import pickle
from typing import Any, NamedTuple

import pytest

from donegate.record import Record


class Plain(NamedTuple):
    """A named tuple."""

    name: str
    size: int = 0
    tags: tuple[str, ...] = ()

    @property
    def big(self) -> bool:
        return self.size > 10

    def grown(self, by: int) -> Plain:
        return self._replace(size=self.size + by)

    @classmethod
    def empty(cls) -> Plain:
        return cls("")


class Fast(Record):
    """A named tuple."""

    name: str
    size: int = 0
    tags: tuple[str, ...] = ()

    @property
    def big(self) -> bool:
        return self.size > 10

    def grown(self, by: int) -> Fast:
        return self._replace(size=self.size + by)

    @classmethod
    def empty(cls) -> Fast:
        return cls("")


CALLS: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
    (("a",), {}),
    (("a", 3), {}),
    (("a", 3, ("x",)), {}),
    ((), {"name": "b"}),
    (("a",), {"tags": ("y",)}),
    ((), {"size": 2, "name": "c"}),
]
BAD_CALLS: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
    ((), {}),
    (("a", 1, (), 4), {}),
    (("a",), {"name": "b"}),
    (("a",), {"colour": "red"}),
    ((), {"size": 1}),
]


@pytest.mark.parametrize(("args", "kwargs"), CALLS)
def test_a_record_is_the_named_tuple_it_is_typed_as(
    args: tuple[Any, ...], kwargs: dict[str, Any]
) -> None:
    plain, fast = Plain(*args, **kwargs), Fast(*args, **kwargs)
    assert isinstance(fast, tuple)
    assert tuple(fast) == tuple(plain)
    assert fast == tuple(plain)
    assert hash(fast) == hash(tuple(plain))
    assert repr(fast) == repr(plain).replace("Plain", "Fast")
    assert (fast.name, fast.size, fast.tags, fast.big) == (
        plain.name,
        plain.size,
        plain.tags,
        plain.big,
    )
    assert fast[1] == plain[1]
    assert fast[-1] == plain[-1]
    assert fast[:2] == plain[:2]
    assert fast._asdict() == plain._asdict()
    assert tuple(fast.grown(20)) == tuple(plain.grown(20))
    assert type(fast.grown(1)) is Fast
    assert tuple(fast._replace(name="z")) == tuple(plain._replace(name="z"))
    assert json.dumps(fast) == json.dumps(plain)
    assert pickle.loads(pickle.dumps(fast)) == fast
    assert type(pickle.loads(pickle.dumps(fast))) is Fast
    assert copy.copy(fast) == fast
    assert copy.deepcopy(fast) == fast
    assert Fast._make(list(plain)) == fast
    name, size, tags = fast
    assert (name, size, tags) == tuple(plain)
    match fast:
        case Fast(n, s):
            assert (n, s) == (plain.name, plain.size)
        case _:
            pytest.fail("a record matches its class pattern positionally")


@pytest.mark.parametrize(("args", "kwargs"), BAD_CALLS)
def test_a_record_refuses_the_calls_a_named_tuple_refuses(
    args: tuple[Any, ...], kwargs: dict[str, Any]
) -> None:
    with pytest.raises(TypeError):
        Plain(*args, **kwargs)
    with pytest.raises(TypeError):
        Fast(*args, **kwargs)


def test_a_record_class_carries_what_a_named_tuple_class_does() -> None:
    assert Fast._fields == Plain._fields
    assert Fast._field_defaults == Plain._field_defaults
    assert Fast.__match_args__ == Plain.__match_args__
    assert Fast.__doc__ == Plain.__doc__
    assert Fast.__module__ == Plain.__module__ == __name__
    assert Fast.__qualname__ == "Fast"
    assert Fast.__mro__ == (Fast, tuple, object)
    assert Fast.empty() == ("", 0, ())
    fast = Fast("a")
    with pytest.raises(AttributeError):
        fast.name = "b"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        fast.colour = "red"  # type: ignore[attr-defined]
    for value in (fast, Plain("a")):
        with pytest.raises(ValueError, match="unexpected field"):
            value._replace(colour="red")  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Fast._make(["a"])
    assert sorted([Fast("b"), Fast("a", 2), Fast("a", 1)]) == [
        ("a", 1, ()),
        ("a", 2, ()),
        ("b", 0, ()),
    ]


def test_a_record_class_is_checked_as_typing_checks_a_named_tuple() -> None:
    make: Any = type(Record)  # the metaclass, as a class statement calls it
    namespace: dict[str, Any] = {"__annotations__": {"a": "int", "b": "int"}, "a": 1}
    with pytest.raises(TypeError, match="without a default"):
        make("Bad", (Record,), {"__module__": __name__, **namespace})
    with pytest.raises(AttributeError, match="_replace"):
        make("Bad", (Record,), {"__annotations__": {}, "_replace": None})
