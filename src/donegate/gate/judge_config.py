"""The bounded judge's configuration: ``[judge]`` in ``donegate.toml``, ``judge`` in the options.

Validated by hand (no pydantic: the hook path reads it). The API key never sits in the file: the
table names an environment variable (``api_key = "${OPENAI_API_KEY}"``), read only when the judge
is called, and masked in every message.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping
from typing import Any

from donegate.errors import InvalidInput
from donegate.gate import _check
from donegate.record import Record

PROVIDERS = ("openai", "anthropic")
SEAMS = ("verify_completion_judge", "turn_end_condition")
SCRUTINY = ("standard", "light")
DEFAULT_MAX_INVOCATIONS = 5
DEFAULT_BASE_URLS = {
    "openai": "https://api.openai.com/v1",
    "anthropic": "https://api.anthropic.com",
}
DEFAULT_SYSTEM_PROMPT = (
    "You review whether a coding agent's work is done. You are shown the task, the diff of the "
    "agent's writes, its final message, and a deterministic verification block saying whether "
    "the team's verifier passed. Judge what the verifier cannot: code fitted to the test's "
    "inputs instead of solving the task, manner or negative clauses of the task (no API change, "
    "no new dependency), missing artifacts, unresolved authorization. Do not re-judge a "
    "verification the block reports as passed. Answer with one JSON object only: "
    '{"verdict": "done" or "continue", "detail": "what is missing, for the agent", '
    '"gap_class": "missing_artifact" | "unmet_manner_clause" | "failed_verification" | '
    '"unresolved_authorization" | "other", '
    '"requirements": [{"id": "...", "met": true or false, "detail": "..."}]} '
    "(requirements: one entry per requirement you are asked to assess)."
)
_ENV_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


class _JudgeConfigFields(Record):
    provider: str
    model: str
    base_url: str | None = None
    system_prompt: str = DEFAULT_SYSTEM_PROMPT
    timeout_s: float = 60.0
    connect_timeout_s: float = 10.0
    max_invocations: int = DEFAULT_MAX_INVOCATIONS
    seam: str = "verify_completion_judge"
    api_key_env: str | None = None
    api_key: str | None = None
    scrutiny: str = "standard"
    max_tokens: int = 1024


class JudgeConfig(_JudgeConfigFields):
    """How to reach the judge and how often it may be asked.

    ``provider``: ``openai`` (any OpenAI-compatible chat completions endpoint: OpenAI, vLLM,
    llama.cpp, Ollama; ``base_url`` ends before ``/chat/completions``) or ``anthropic`` (the
    Messages API). ``max_invocations``: calls per session (0: no cap). ``seam``: which capped
    seam the judge rides. ``scrutiny = "light"`` is the catalog's light-scrutiny review: the
    judge is skipped when the ledger is clear (subordinate to the skip rule). The key comes from
    ``api_key`` or the variable ``api_key_env``, read at call time. ``timeout_s`` bounds the whole
    exchange (connect, request, the answer's last byte), not each read; ``connect_timeout_s``
    bounds the connect within it.
    """

    __slots__ = ()

    def __new__(
        cls,
        provider: str,
        model: str,
        base_url: str | None = None,
        system_prompt: str = DEFAULT_SYSTEM_PROMPT,
        timeout_s: float = 60.0,
        connect_timeout_s: float = 10.0,
        max_invocations: int = DEFAULT_MAX_INVOCATIONS,
        seam: str = "verify_completion_judge",
        api_key_env: str | None = None,
        api_key: str | None = None,
        scrutiny: str = "standard",
        max_tokens: int = 1024,
    ) -> JudgeConfig:
        _one_of(provider, PROVIDERS, "provider")
        _text(model, "model")
        if base_url is not None and not re.match(r"https?://", _text(base_url, "base_url")):
            raise InvalidInput(f"got {base_url!r}, expected an http(s) URL", "base_url")
        _text(system_prompt, "system_prompt")
        _seconds(timeout_s, "timeout_s")
        _seconds(connect_timeout_s, "connect_timeout_s")
        _check.count(max_invocations, "max_invocations")
        _one_of(seam, SEAMS, "seam")
        if api_key_env is not None and not re.fullmatch(r"[A-Za-z_]\w*", str(api_key_env)):
            raise InvalidInput("expected an environment variable name", "api_key_env")
        _check.optional_text(api_key, "api_key")
        _one_of(scrutiny, SCRUTINY, "scrutiny")
        _check.count(max_tokens, "max_tokens", minimum=1)
        return super().__new__(
            cls,
            provider,
            model,
            base_url,
            system_prompt,
            float(timeout_s),
            float(connect_timeout_s),
            max_invocations,
            seam,
            api_key_env,
            api_key,
            scrutiny,
            max_tokens,
        )

    def __repr__(self) -> str:
        key = None if self.api_key is None else "***"
        return f"JudgeConfig({self.provider!r}, {self.model!r}, api_key={key!r}, ...)"

    @property
    def cap(self) -> int | None:
        """The resolved invocation cap; None when disabled."""
        return self.max_invocations or None

    @property
    def url(self) -> str:
        base = (self.base_url or DEFAULT_BASE_URLS[self.provider]).rstrip("/")
        return base + ("/chat/completions" if self.provider == "openai" else "/v1/messages")

    def resolve_key(self, environ: Mapping[str, str] | None = None) -> str | None:
        """The API key now: the given one, else the named variable (unset: no key)."""
        if self.api_key is not None:
            return self.api_key
        if self.api_key_env is None:
            return None
        return (os.environ if environ is None else environ).get(self.api_key_env)


def _one_of(value: object, allowed: tuple[str, ...], path: str) -> None:
    if value not in allowed:
        raise InvalidInput(f"got {value!r}, expected one of {', '.join(allowed)}", path)


def _text(value: object, path: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput(f"got {_check.type_name(value)}, expected a non-blank string", path)
    return value


def _seconds(value: object, path: str) -> None:
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    if not ok or not math.isfinite(float(value)) or float(value) <= 0:  # type: ignore[arg-type]
        raise InvalidInput(f"got {value!r}, expected a number of seconds > 0", path)


_TABLE_KEYS = frozenset(
    {
        "provider",
        "model",
        "base_url",
        "system_prompt",
        "timeout_s",
        "connect_timeout_s",
        "max_invocations",
        "seam",
        "api_key",
        "scrutiny",
        "max_tokens",
    }
)
_OPTION_KEYS = frozenset(JudgeConfig._fields)


def parse_judge_table(value: object, path: str = "judge") -> JudgeConfig | None:
    """A ``[judge]`` table (None: absent). ``api_key`` must name a variable: ``"${NAME}"``."""
    if value is None:
        return None
    raw = dict(_check.mapping(value, path, _TABLE_KEYS))
    if "api_key" in raw:
        match = _ENV_REFERENCE.fullmatch(str(raw.pop("api_key")))
        if match is None:
            # The text is not echoed: it may be the key itself.
            raise InvalidInput(
                'expected "${NAME}", an environment variable holding the key; '
                "a key written in the file is refused",
                f"{path}.api_key",
            )
        raw["api_key_env"] = match.group(1)
    return _build(raw, path)


def parse_judge(value: object, path: str = "judge") -> JudgeConfig | None:
    """The ``judge`` option: a :class:`JudgeConfig`, plain data, or None (no judge)."""
    if value is None or isinstance(value, JudgeConfig):
        return value
    if isinstance(value, bool):
        # Harn's ``judge: true`` picks the loop's own model; a gate has none to pick.
        raise InvalidInput("expected a judge table (provider, model, ...), not a boolean", path)
    return _build(dict(_check.mapping(value, path, _OPTION_KEYS)), path)


def _build(raw: dict[str, Any], path: str) -> JudgeConfig:
    for key in ("provider", "model"):
        if key not in raw:
            raise InvalidInput("required", f"{path}.{key}")
    with _check.within(path):
        return JudgeConfig(**raw)
