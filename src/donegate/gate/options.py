"""Gate options: host callbacks and plain-data policy knobs, validated when the gate is built.

Differences from Harn, on purpose: ``max_strict_vetoes`` caps strict vetoes since the session's
last allow; the soft budget (``max_vetoes``) counts soft vetoes only; ``classify_write`` without a
``facts`` callback is accepted, because facts may also be passed to ``Gate.decide`` directly;
for the same reason ``requirement_contract`` does not require one. ``judge`` is a table (provider,
model, ...) or nothing, never ``true`` (a gate has no loop model to default to), and the seam is
the table's ``seam`` key rather than a separate ``judge_seam`` option.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType

from donegate.errors import InvalidInput
from donegate.gate import _check
from donegate.gate.facts import ClassifyWrite, CompletionFacts, VerifyResult
from donegate.gate.feedback import FEEDBACK_KEYS
from donegate.gate.requirements import RequirementContract, parse_contract
from donegate.record import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from donegate.gate.decision import Decision, GateContext
    from donegate.gate.judge_config import JudgeConfig

FactsCallback = Callable[["GateContext"], "CompletionFacts | Mapping[str, Any] | None"]
"""``facts(ctx) -> CompletionFacts`` (or plain data, or None when the host has none)."""

VerifyCommand = Callable[[], "VerifyResult | Mapping[str, Any] | list[Any] | None"]
"""``verify_command() -> result(s)``: runs the verifier when the facts carry no ``verify``."""

FeedbackDecorator = Callable[[str, str, "Decision"], str]
"""``feedback_decorator(reason, feedback, decision) -> str``: runs on a delivered veto only."""

DEFAULT_MAX_VETOES = 3
DEFAULT_MAX_STRICT_VETOES = 5
DEFAULT_ESCALATION_THRESHOLD = 3


class _GateOptionsFields(Record):
    facts: FactsCallback | None = None
    classify_write: ClassifyWrite | None = None
    verify_command: VerifyCommand | None = None
    feedback_decorator: FeedbackDecorator | None = None
    require_source_write: bool = True
    requires_write: bool | None = None
    max_vetoes: int = DEFAULT_MAX_VETOES
    max_strict_vetoes: int = DEFAULT_MAX_STRICT_VETOES
    escalation_threshold: int = DEFAULT_ESCALATION_THRESHOLD
    escalation_target: str | None = None
    feedback_templates: Mapping[str, str] = MappingProxyType({})
    max_blocks_in_a_row: int = 0
    requirement_contract: RequirementContract | None = None
    judge: JudgeConfig | None = None


class GateOptions(_GateOptionsFields):
    """How a gate decides. Every field is optional; bad values raise ``InvalidInput`` here.

    ``max_vetoes``: soft vetoes per session before the next one converts to an allow
    (``veto_budget_exhausted``); 0 disables. ``max_strict_vetoes``: strict vetoes since the
    session's last allow before the next one converts (``strict_veto_cap_reached``); 0 disables.
    ``max_blocks_in_a_row``: the veto that would be the n-th in a row, of any class, converts
    (``blocks_in_a_row_cap_reached``); 0, the default, disables. Agent hooks set it below the
    host's own loop cap.
    ``requirement_contract``: declared rows joined to the facts' assessments; a stop with rows
    pending is vetoed (``requirements_pending``). ``judge``: the bounded judge after the ladder
    (a :class:`~donegate.gate.judge_config.JudgeConfig` or its plain data).
    ``requires_write`` overrides the facts' own ``requires_write``, which overrides
    ``require_source_write``.
    """

    __slots__ = ()

    def __new__(
        cls,
        facts: FactsCallback | None = None,
        classify_write: ClassifyWrite | None = None,
        verify_command: VerifyCommand | None = None,
        feedback_decorator: FeedbackDecorator | None = None,
        require_source_write: bool = True,
        requires_write: bool | None = None,
        max_vetoes: int = DEFAULT_MAX_VETOES,
        max_strict_vetoes: int = DEFAULT_MAX_STRICT_VETOES,
        escalation_threshold: int = DEFAULT_ESCALATION_THRESHOLD,
        escalation_target: str | None = None,
        feedback_templates: Mapping[str, str] = MappingProxyType({}),
        max_blocks_in_a_row: int = 0,
        requirement_contract: RequirementContract | Mapping[str, Any] | list[Any] | None = None,
        judge: JudgeConfig | Mapping[str, Any] | None = None,
    ) -> GateOptions:
        callbacks = (facts, classify_write, verify_command, feedback_decorator)
        names = ("facts", "classify_write", "verify_command", "feedback_decorator")
        for name, value in zip(names, callbacks, strict=True):
            if value is not None and not callable(value):
                raise InvalidInput(f"got {_check.type_name(value)}, expected a callable", name)
        _check.boolean(require_source_write, "require_source_write")
        _check.optional_boolean(requires_write, "requires_write")
        _check.count(max_vetoes, "max_vetoes")
        _check.count(max_strict_vetoes, "max_strict_vetoes")
        _check.count(max_blocks_in_a_row, "max_blocks_in_a_row")
        _check.count(escalation_threshold, "escalation_threshold", minimum=1)
        _check_target(escalation_target)
        _check_templates(feedback_templates)
        contract = None
        if requirement_contract is not None:
            contract = parse_contract(requirement_contract)
        return super().__new__(
            cls,
            *callbacks,
            require_source_write,
            requires_write,
            max_vetoes,
            max_strict_vetoes,
            escalation_threshold,
            escalation_target,
            # A frozen copy, so that a caller mutating its dict cannot change a built gate.
            MappingProxyType(dict(feedback_templates)),
            max_blocks_in_a_row,
            contract,
            _judge(judge),
        )

    @property
    def degraded(self) -> bool:
        """No facts callback and no verifier: the gate can only abstain (``facts_unavailable``)."""
        return self.facts is None and self.verify_command is None


def _check_target(target: object) -> None:
    if target is None:
        return
    if not isinstance(target, str):
        raise InvalidInput(
            f"got {_check.type_name(target)}, expected a string", "escalation_target"
        )
    if not target.strip():
        raise InvalidInput(
            "got a blank string, expected a routing channel name", "escalation_target"
        )


def _check_templates(templates: object) -> None:
    if not isinstance(templates, Mapping):
        raise InvalidInput(
            f"got {_check.type_name(templates)}, expected an object", "feedback_templates"
        )
    for key, text in templates.items():
        path = f"feedback_templates.{key}"
        if key not in FEEDBACK_KEYS:
            raise InvalidInput(
                f"unknown template key; expected one of {', '.join(sorted(FEEDBACK_KEYS))}", path
            )
        if not isinstance(text, str):
            raise InvalidInput(f"got {_check.type_name(text)}, expected a string", path)


PLAIN_KEYS = frozenset(
    {
        "require_source_write",
        "requires_write",
        "max_vetoes",
        "max_strict_vetoes",
        "escalation_threshold",
        "escalation_target",
        "feedback_templates",
        "max_blocks_in_a_row",
        "requirement_contract",
        "judge",
    }
)
"""The options a host may give as plain data (the CLI's ``options`` object); no callbacks."""


def parse_options(data: object, path: str = "options", **callbacks: Any) -> GateOptions:
    """Plain data -> :class:`GateOptions`, with any ``callbacks`` (``facts=...``) added."""
    raw = _check.mapping({} if data is None else data, path, PLAIN_KEYS)
    with _check.within(path):
        return GateOptions(**raw, **callbacks)


def _judge(value: object) -> JudgeConfig | None:
    """The ``judge`` option parsed; its module is imported only when one is given."""
    if value is None:
        return None
    from donegate.gate.judge_config import parse_judge

    return parse_judge(value)
