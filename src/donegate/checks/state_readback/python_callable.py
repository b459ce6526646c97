"""A Python callable as the system of record, for frameworks that hold their state in process.

``python:pkg.mod:func`` is called with ``params`` as keyword arguments and returns the record (a
mapping), None when there is none, or a list of records.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import TYPE_CHECKING

from donegate.checks.state_readback._base import ReadError, Records, records_at

if TYPE_CHECKING:
    from donegate.checks.state_readback import StateReadbackSettings


def read(settings: StateReadbackSettings) -> Records:
    """Call the function; a timeout or an exception is no observation."""
    function = _resolve(settings.source.removeprefix("python:"))
    # A thread cannot be killed: on timeout it is abandoned, and the check reports no observation.
    pool = ThreadPoolExecutor(max_workers=1)
    try:
        value = pool.submit(function, **settings.params).result(timeout=settings.timeout_s)
    except FutureTimeout:
        raise ReadError(f"the callable did not return within {settings.timeout_s:g} s") from None
    except Exception as exc:
        raise ReadError(f"the callable raised {type(exc).__name__}: {exc}") from None
    finally:
        pool.shutdown(wait=False)
    return records_at(value, None)


def _resolve(spec: str) -> Callable[..., object]:
    module_name, _, attribute = spec.partition(":")
    try:
        function = getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError) as exc:
        raise ReadError(f"cannot load {spec}: {exc}") from None
    if not callable(function):
        raise ReadError(f"{spec} is not callable")
    return function  # type: ignore[no-any-return]
