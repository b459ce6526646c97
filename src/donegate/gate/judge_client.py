"""The judge's wire: one chat request to an OpenAI-compatible endpoint or Anthropic's Messages API.

Imported only when a judge is configured and due: httpx (the ``judge`` extra) stays off the path
of every stop that has no judge. Every failure of the provider (a timeout, a refused connection,
a 5xx, a refusal, a body too large or out of protocol) becomes one :class:`JudgeFailure`, with
the API key masked, at this one boundary.

The whole exchange (connect, request, headers, body) ends by one deadline, ``timeout_s`` after
it starts: httpx's timeouts restart on every read, so a provider trickling its answer a byte at a
time would hold the stop open as long as it liked. The body is decoded as it arrives and refused
past :data:`MAX_BODY_BYTES`, counted on the wire and decoded, so neither an endless body nor a
gzip bomb can take the hook's memory.
"""

from __future__ import annotations

import zlib
from typing import Any

import httpx

from donegate.checks._deadline import Deadline
from donegate.checks._http import SocketWatch
from donegate.gate.judge_answer import JudgeFailure, strict_json
from donegate.gate.judge_config import JudgeConfig
from donegate.redact import NO_SECRETS, Redactor

ANTHROPIC_VERSION = "2023-06-01"
MAX_BODY_BYTES = 4 * 1024 * 1024
"""The most of a response body read, on the wire and decoded (1,024 tokens are about 4 KiB)."""
# zlib's window bits for each content coding this client accepts; None: sent as it is.
_CODINGS: dict[str, int | None] = {
    "identity": None,
    "gzip": 16 + zlib.MAX_WBITS,
    "deflate": zlib.MAX_WBITS,
}
Request = tuple[str, dict[str, str], dict[str, Any]]


def ask(config: JudgeConfig, system: str, prompt: str) -> str:
    """Send one request; the text of the model's answer, or :class:`JudgeFailure`."""
    key = config.resolve_key()
    redactor = NO_SECRETS.with_secrets([key] if key else [])
    status, body = _exchange(config, _request(config, key, system, prompt), redactor)
    if status != 200:
        text = redactor.text(body[:300].decode("utf-8", "replace"))
        raise JudgeFailure("http", f"status {status}: {text}")
    read = _openai_text if config.provider == "openai" else _anthropic_text
    return read(strict_json(body, "the response body"))


def _masked(redactor: Redactor, exc: Exception) -> str:
    return redactor.text(f"{type(exc).__name__}: {exc}")


def _exchange(config: JudgeConfig, request: Request, redactor: Redactor) -> tuple[int, bytes]:
    """POST ``request``: the status and the decoded body, or a failure, by one deadline."""
    deadline = Deadline(config.timeout_s)
    try:
        with SocketWatch(deadline) as watch, httpx.Client(trust_env=False) as client:
            # trust_env=False: a proxy from the environment must not see the task and the diff.
            return _stream(client, request, watch, config.connect_timeout_s)
    except httpx.HTTPError as exc:
        if deadline.expired() or isinstance(exc, httpx.TimeoutException):
            raise _late(deadline) from None
        raise JudgeFailure("transport", _masked(redactor, exc)) from None
    except (httpx.InvalidURL, UnicodeError) as exc:
        # A URL httpx cannot send (a control character, an overlong host label) is refused
        # outside its HTTPError tree.
        raise JudgeFailure("transport", _masked(redactor, exc)) from None


def _stream(
    client: httpx.Client, request: Request, watch: SocketWatch, connect_s: float
) -> tuple[int, bytes]:
    url, headers, payload = request
    left = max(watch.deadline.remaining(), 0.001)
    timeout = httpx.Timeout(left, connect=min(connect_s, left))
    with client.stream(
        "POST",
        url,
        json=payload,
        headers=headers,
        timeout=timeout,
        extensions={"trace": watch.trace},
    ) as response:
        return response.status_code, _read_body(response, watch.deadline)


def _read_body(response: httpx.Response, deadline: Deadline) -> bytes:
    body = _Body(response.headers.get("content-encoding", ""))
    for chunk in response.iter_raw():
        if deadline.expired():
            raise _late(deadline)
        body.add(chunk)
    if deadline.expired():
        # The watch's shutdown ends a body without a length as if it were whole: it is not.
        raise _late(deadline)
    return body.end()


def _late(deadline: Deadline) -> JudgeFailure:
    return JudgeFailure("timeout", f"no whole answer within timeout_s = {deadline.seconds:g} s")


class _Body:
    """A body decoded as it arrives, refused once its bytes on the wire or decoded pass the cap."""

    def __init__(self, coding: str) -> None:
        name = coding.strip().lower() or "identity"
        if name not in _CODINGS:
            raise JudgeFailure(
                "malformed", f"content-encoding {coding[:50]!r}, expected gzip, deflate or none"
            )
        wbits = _CODINGS[name]
        self._inflate = None if wbits is None else zlib.decompressobj(wbits)
        self._wire = 0
        self._size = 0
        self._parts: list[bytes] = []

    def add(self, chunk: bytes) -> None:
        self._wire += len(chunk)
        if self._wire > MAX_BODY_BYTES:
            raise _too_large("on the wire")
        if self._inflate is None:
            self._keep(chunk)
            return
        while chunk and not self._inflate.eof:
            # max_length: a bomb is inflated at most one byte past the cap, never a chunk's worth.
            self._keep(self._inflate.decompress(chunk, MAX_BODY_BYTES + 1 - self._size))
            chunk = self._inflate.unconsumed_tail
        if self._inflate.eof and (chunk or self._inflate.unused_data):
            raise JudgeFailure("malformed", "bytes after the end of the compressed body")

    def _keep(self, data: bytes) -> None:
        self._size += len(data)
        if self._size > MAX_BODY_BYTES:
            raise _too_large("decoded")
        self._parts.append(data)

    def end(self) -> bytes:
        if self._inflate is not None and not self._inflate.eof:
            raise JudgeFailure("malformed", "the compressed body ends before its end")
        return b"".join(self._parts)


def _too_large(where: str) -> JudgeFailure:
    return JudgeFailure("too_large", f"the response body passed {MAX_BODY_BYTES} bytes {where}")


def _request(config: JudgeConfig, key: str | None, system: str, prompt: str) -> Request:
    # Only the codings _Body decodes: httpx would also offer br or zstd when they are installed.
    headers = {"content-type": "application/json", "accept-encoding": "gzip, deflate"}
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
    return config.url, headers, payload


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
