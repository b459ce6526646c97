"""Hostile inputs for fuzz tests: values, texts and documents a caller should never crash on.

Deterministic (a seeded ``random.Random``) so that subprocess fuzz tests stay cheap and a failure
reproduces; the in-process properties draw the same values through hypothesis.
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Iterator
from typing import Any

DEEP = 5000

# JSON texts spliced in place of a value: numbers past every range, -0, nesting deeper than any
# parser's stack, escapes of lone surrogates.
RAW_VALUES: list[str] = [
    "1" + "0" * 400,
    "-" + "9" * 30,
    "1" + "0" * 5000,
    "-0",
    "-0.0",
    "1e400",
    "-1e400",
    "1e-400",
    "0.1e1",
    "NaN",
    "Infinity",
    "-Infinity",
    "[" * DEEP + "]" * DEEP,
    "[" * 150 + "]" * 150,
    '{"a":' * 300 + "1" + "}" * 300,
    '"\\ud800"',
    '"\\udfff\\ud800"',
    '"a\\u0000b"',
    '"' + "x" * 10000 + '"',
    "true",
    "null",
    "{}",
    "[]",
    '""',
    '"2026-08-27T18:04:09.' + "9" * 40 + 'Z"',
    '"2026-08-27T18:04:09.' + "1" * 2000 + 'Z"',
    '"9999-12-31T23:59:59.999999999999-23:59"',
    '"0001-01-01T00:00:00+23:59"',
    '"2026-02-30T00:00:00Z"',
    '"2026-08-27T18:04:60Z"',
    '"2026-08-27T18:04:09+24:00"',
]

RAW_BYTES: list[bytes] = [
    b"\xff\xfe\xfd",
    b'"\xed\xa0\x80"',  # a surrogate encoded as UTF-8: not valid UTF-8
    b'"\xc3"',
]


def paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every path to a value inside a JSON document (the document itself included)."""
    yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from paths(item, (*prefix, index))


_MARK = "__hostile_value__"


def replaced(doc: Any, path: tuple[Any, ...], raw: str) -> str:
    """``doc`` as JSON text with the value at ``path`` replaced by the JSON text ``raw``."""
    if not path:
        return raw
    copied = copy.deepcopy(doc)
    target = copied
    for part in path[:-1]:
        target = target[part]
    target[path[-1]] = _MARK
    return json.dumps(copied).replace(json.dumps(_MARK), raw, 1)


def mutants(doc: Any, count: int, seed: int) -> list[bytes]:
    """``count`` mutations of ``doc``: one value replaced, a key doubled, bytes spliced in."""
    rng = random.Random(seed)
    every = list(paths(doc))
    out: list[bytes] = []
    for _ in range(count):
        path = rng.choice(every)
        kind = rng.random()
        if kind < 0.7:
            out.append(replaced(doc, path, rng.choice(RAW_VALUES)).encode())
        elif kind < 0.8:
            text = json.dumps(doc)
            key = rng.choice([k for p in every for k in p[-1:] if isinstance(k, str)] or ["x"])
            # A duplicate key: the same name twice in one object, with another value.
            out.append(
                text.replace(
                    f'"{key}": ', f'"{key}": {rng.choice(RAW_VALUES)}, "{key}": ', 1
                ).encode()
            )
        elif kind < 0.9:
            spliced = replaced(doc, path, '"' + _MARK + '"').encode()
            out.append(spliced.replace(_MARK.encode(), rng.choice(RAW_BYTES).strip(b'"'), 1))
        else:
            whole = json.dumps(doc).encode()
            out.append(whole[: rng.randrange(len(whole))])
    return out
