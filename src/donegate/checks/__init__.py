"""Check types: one registry from ``check_type`` to its collector.

The three built-in check types of Completion Claim v0.1 live one module each, beside donegate's
extension ``x-dom_assertion`` (a page read in a browser; the ``x-`` prefix says it is not v0.1's).
A collector of an extension names its specification in an ``extension`` attribute (a URI), which
a collected claim lists under ``extensions``. A third party adds a check type through the
``donegate.checks`` entry point group, naming an object (or a class taking no arguments) with the
:class:`~donegate.checks.base.Collector` shape::

    [project.entry-points."donegate.checks"]
    x-screen_diff = "mypkg.checks:ScreenDiff"

A plugin cannot replace a built-in check type, and one that fails to load is reported when a
configuration names it, never silently skipped into a pass.
"""

from __future__ import annotations

import importlib
from functools import cache, lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from donegate.checks.base import AnyCollector, CheckContext, CheckSettings, Observation

__all__ = [
    "BUILTIN",
    "ENTRY_POINT_GROUP",
    "AnyCollector",
    "CheckContext",
    "CheckSettings",
    "Observation",
    "lookup",
    "registry",
]

ENTRY_POINT_GROUP = "donegate.checks"
# The shared names come from .base (pydantic) when first used: the plain modules of this package
# (running a command, the witness, the bytecode store) import without it, so that ``collect`` can
# start a test command before the models are loaded.
_FROM_BASE = ("AnyCollector", "CheckContext", "CheckSettings", "Observation")

# check_type -> "module:attribute" of its collector, imported when a configuration names it: a
# run of one test command does not pay for the HTTP and database collectors' modules.
BUILTIN: dict[str, str] = {
    "test_run": "donegate.checks.test_run:TEST_RUN",
    "endpoint_health": "donegate.checks.endpoint_health:ENDPOINT_HEALTH",
    "state_readback": "donegate.checks.state_readback:STATE_READBACK",
    "x-dom_assertion": "donegate.checks.dom_assertion:DOM_ASSERTION",
}

# check_type -> why its plugin could not be loaded (said when a configuration names it)
_BROKEN: dict[str, str] = {}


@cache
def _builtin(check_type: str) -> AnyCollector:
    module_name, _, attribute = BUILTIN[check_type].partition(":")
    collector: AnyCollector = getattr(importlib.import_module(module_name), attribute)
    return collector


@lru_cache(maxsize=1)
def _plugins() -> dict[str, AnyCollector]:
    # Reading every installed distribution's metadata is slow: done only for a check type that is
    # not built in.
    import logging
    from importlib.metadata import entry_points

    found: dict[str, AnyCollector] = {}
    for point in entry_points(group=ENTRY_POINT_GROUP):
        if point.name in BUILTIN or point.name in found:
            logging.getLogger(__name__).warning(
                "plugin %s cannot replace check type %r", point.value, point.name
            )
            continue
        collector = _load(point.name, point.value, point.load)
        if collector is not None:
            found[point.name] = collector
    return found


def registry() -> dict[str, AnyCollector]:
    """Every known check type: the built-ins, then the plugins that loaded."""
    return {**{name: _builtin(name) for name in BUILTIN}, **_plugins()}


def _load(name: str, where: str, load: object) -> AnyCollector | None:
    try:
        target = load()  # type: ignore[operator]
        collector = target() if isinstance(target, type) else target
    except Exception as exc:  # a broken plugin must not take the built-ins down with it
        _BROKEN[name] = f"plugin {where} failed to load: {type(exc).__name__}: {exc}"
        return None
    if not (hasattr(collector, "settings_model") and callable(getattr(collector, "collect", None))):
        _BROKEN[name] = f"plugin {where} has no settings_model and collect()"
        return None
    return collector  # type: ignore[no-any-return]


def __getattr__(name: str) -> Any:
    if name in _FROM_BASE:
        return getattr(importlib.import_module("donegate.checks.base"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def lookup(check_type: str) -> AnyCollector:
    """The collector of ``check_type``; ``KeyError`` with a message saying what is known."""
    if check_type in BUILTIN:
        return _builtin(check_type)
    found = _plugins().get(check_type)
    if found is not None:
        return found
    if check_type in _BROKEN:
        raise KeyError(_BROKEN[check_type])
    known = ", ".join(sorted({*BUILTIN, *_plugins()}))
    raise KeyError(f"unknown check type {check_type!r}; known: {known}")
