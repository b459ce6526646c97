"""The judge's wire: one chat request to an OpenAI-compatible endpoint or Anthropic's Messages API.

Imported only when a judge is configured and due: httpx (the ``judge`` extra) stays off the path
of every stop that has no judge. Every failure of the provider (a timeout, a refused connection,
a 5xx, a refusal, a body that is not the protocol's) becomes one :class:`JudgeFailure`, with the
API key masked, at this one boundary.
"""

from __future__ import annotations

from typing import Any

import httpx

from donegate.gate.judge import JudgeFailure, strict_json
from donegate.gate.judge_config import JudgeConfig
from donegate.redact import NO_SECRETS, Redactor

ANTHROPIC_VERSION = "2023-06-01"


def ask(config: JudgeConfig, system: str, prompt: str) -> str:
    """Send one request; the text of the model's answer, or :class:`JudgeFailure`."""
    key = config.resolve_key()
    redactor = NO_SECRETS.with_secrets([key] if key else [])
    try:
        response = _post(config, key, system, prompt)
    except httpx.TimeoutException as exc:
        raise JudgeFailure("timeout", _masked(redactor, exc)) from None
    except httpx.HTTPError as exc:
        raise JudgeFailure("transport", _masked(redactor, exc)) from None
    if response.status_code != 200:
        body = redactor.text(response.text[:300])
        raise JudgeFailure("http", f"status {response.status_code}: {body}")
    read = _openai_text if config.provider == "openai" else _anthropic_text
    return read(strict_json(response.content, "the response body"))


def _masked(redactor: Redactor, exc: Exception) -> str:
    return redactor.text(f"{type(exc).__name__}: {exc}")


def _post(config: JudgeConfig, key: str | None, system: str, prompt: str) -> httpx.Response:
    timeout = httpx.Timeout(config.timeout_s, connect=config.connect_timeout_s)
    headers = {"content-type": "application/json"}
    if config.provider == "openai":
        if key:
            headers["authorization"] = f"Bearer {key}"
        payload: dict[str, Any] = {
            "model": config.model,
            "messages": [
                {"role": "system", "content": system},
                {"role": "user", "content": prompt},
            ],
            "max_tokens": config.max_tokens,
            "temperature": 0,
        }
    else:
        headers["anthropic-version"] = ANTHROPIC_VERSION
        if key:
            headers["x-api-key"] = key
        payload = {
            "model": config.model,
            "system": system,
            "messages": [{"role": "user", "content": prompt}],
            "max_tokens": config.max_tokens,
            "temperature": 0,
        }
    # trust_env=False: a proxy from the environment must not see the task and the diff.
    with httpx.Client(timeout=timeout, trust_env=False) as client:
        return client.post(config.url, json=payload, headers=headers)


def _openai_text(body: object) -> str:
    try:
        choice = body["choices"][0]  # type: ignore[index]
        message = choice["message"]
    except (KeyError, IndexError, TypeError):
        raise JudgeFailure("malformed", "no choices[0].message in the response") from None
    if not isinstance(message, dict):
        raise JudgeFailure("malformed", "choices[0].message is not an object")
    if message.get("refusal") or choice.get("finish_reason") == "content_filter":
        raise JudgeFailure("refused", str(message.get("refusal") or "content_filter"))
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        # The chat API's content parts: text, or a refusal in a part of its own.
        return _text_parts(content, "choices[0].message.content")
    raise JudgeFailure(
        "malformed", "choices[0].message.content is neither text nor a list of parts"
    )


def _anthropic_text(body: object) -> str:
    if not isinstance(body, dict) or not isinstance(body.get("content"), list):
        raise JudgeFailure("malformed", "no content list in the response")
    if body.get("stop_reason") == "refusal":
        raise JudgeFailure("refused", "stop_reason: refusal")
    return _text_parts(body["content"], "content")


def _text_parts(parts: list[Any], where: str) -> str:
    """The text parts joined; parts of other types (thinking, tool use) are not the answer."""
    texts: list[str] = []
    for part in parts:
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "refusal":
            raise JudgeFailure("refused", str(part.get("refusal"))[:300])
        if kind == "text":
            text = part.get("text")
            if not isinstance(text, str):
                raise JudgeFailure("malformed", f"a text part of {where} without text")
            texts.append(text)
    if not texts:
        raise JudgeFailure("malformed", f"no text part in {where}")
    return "".join(texts)
