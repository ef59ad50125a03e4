"""`ModelClient`: the one door to a local Ollama server, shared by the plan compiler, the repair
lane and the reader lane.

It wraps the official `ollama` client and turns every way a call can go wrong into one
`ModelCallError` with a short `kind` (the manifest counts fallbacks by kind): a timeout, a
refused connection, a non-200 answer, an unknown model, a reply cut off at the token cap, a reply
that is not the JSON asked for. The `ollama` client has no timeout by default, so this one always
sets one; retries are bounded and only for failures a retry can cure (connection errors, 5xx).

A dead host fails fast, whatever the number of questions: `check_host` asks the model list once
before the first question (within PROBE_TIMEOUT_S), and after MAX_HOST_FAILURES calls in a row
that could not connect or timed out, every lane stops with `ModelHostError` instead of spending
the timeout on each remaining question."""
from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass
from typing import Callable, ClassVar, TypeVar

import httpx
import orjson

from resolver.errors import FactresError, InputError, ModelHostError

SPEC_PREFIX = "ollama:"
MAX_RETRIES = 2              # on connection errors and 5xx only: a 404 or a bad reply stays bad
RETRY_BACKOFF = 0.25         # seconds, times the attempt number
PROBE_TIMEOUT_S = 10.0       # the host check: the model list answers at once on a live host
MAX_HOST_FAILURES = 3        # calls in a row that could not connect, timed out or got a 5xx
                             # after their retries: the host is down or broken

# ModelCallError kinds, in the words the manifest and the notes use.
TIMEOUT = "timeout"
REFUSED = "connection refused"
CONNECTION = "connection error"
UNKNOWN_MODEL = "unknown model"
HTTP_ERROR = "http error"
TRUNCATED = "truncated"
INVALID_JSON = "invalid json"
INVALID_PLAN = "invalid plan"      # valid JSON, but not a plan the store and inventory accept

T = TypeVar("T")


class ModelCallError(FactresError):
    """A model call that gave no usable reply; `kind` is one of the constants above."""

    def __init__(self, kind: str, detail: str) -> None:
        self.kind, self.detail = kind, detail
        super().__init__(f"{kind}: {detail}")


def model_of(spec: str) -> str:
    """The model name of an "ollama:MODEL" spec."""
    if not spec.startswith(SPEC_PREFIX) or not spec[len(SPEC_PREFIX):].strip():
        raise InputError(f"unknown model spec {spec!r}", expected="ollama:MODEL, e.g. "
                         "ollama:qwen2.5:7b-instruct")
    return spec[len(SPEC_PREFIX):].strip()


@dataclass(frozen=True)
class Reply:
    content: str            # the assistant message text
    done_reason: str        # "stop", "length", ...
    attempts: int           # 1 + retries used


class ModelClient:
    """A chat client for one model on one host, with a timeout and bounded retries."""

    def __init__(self, model: str, host: str | None = None, timeout: float = 60.0,
                 retries: int = MAX_RETRIES, backoff: float | None = None) -> None:
        import ollama  # imported here so the deterministic paths never load it

        if timeout is None or timeout <= 0:
            raise InputError(f"timeout must be a positive number of seconds, not {timeout!r}")
        self.model, self.host, self.timeout = model, host, float(timeout)
        self.retries = max(0, min(retries, MAX_RETRIES))
        self.backoff = RETRY_BACKOFF if backoff is None else backoff
        self.host_failures = 0         # calls in a row that could not connect or timed out
        self._ollama = ollama
        self._client = ollama.Client(host=host, timeout=self.timeout)

    @property
    def base_url(self) -> str:
        return str(self._client._client.base_url).rstrip("/")

    def close(self) -> None:
        self._client.close()

    def check_host(self) -> None:
        """Ask the host for its model list once, within min(timeout, PROBE_TIMEOUT_S): a host
        that refuses, hangs, answers with an error or lacks the model raises ModelHostError
        before any question is spent on it."""
        url = f"{self.base_url}/api/tags"
        wait = min(self.timeout, PROBE_TIMEOUT_S)
        try:
            resp = httpx.get(url, timeout=wait)
            resp.raise_for_status()
            names = {m.get("model") or m.get("name") for m in resp.json().get("models", [])}
        except httpx.TimeoutException:
            raise ModelHostError(f"Ollama host {self.base_url} did not answer within "
                                 f"{wait:g}s (GET /api/tags); is it running?") from None
        except httpx.ConnectError:
            raise ModelHostError(f"cannot connect to the Ollama host {self.base_url}; start "
                                 "it (`ollama serve`) or pass --host") from None
        except (httpx.HTTPError, ValueError, AttributeError) as exc:
            raise ModelHostError(f"Ollama host {self.base_url} answered GET /api/tags with "
                                 f"an error: {str(exc)[:200]}") from None
        if self.model not in names and f"{self.model}:latest" not in names:
            raise ModelHostError(f"model {self.model!r} is not on {self.base_url} (it has "
                                 f"{len(names)} model(s)); try `ollama pull {self.model}`")

    def chat(self, messages: list[dict], *, schema: dict | None = None, temperature: float = 0.0,
             num_predict: int = 256, stream: bool = False) -> Reply:
        """One chat request (retried on connection errors and 5xx). Raises ModelCallError."""
        attempt = 0
        while True:
            attempt += 1
            try:
                content, done_reason = self._chat_once(messages, schema, temperature,
                                                       num_predict, stream)
                self.host_failures = 0
                break
            except ModelCallError as exc:
                retriable = exc.kind in (REFUSED, CONNECTION) or (
                    exc.kind == HTTP_ERROR and exc.detail.startswith("5"))
                if not retriable or attempt > self.retries:
                    self._count_host_failure(exc)
                    raise
                time.sleep(self.backoff * attempt)
        if done_reason == "length":
            raise ModelCallError(TRUNCATED, f"reply cut off at {num_predict} tokens "
                                 f"(done_reason \"length\"): {content[:80]!r}")
        return Reply(content, done_reason, attempt)

    def _count_host_failure(self, exc: ModelCallError) -> None:
        """Stop the lane once the host has failed to connect or answer several times running; a
        server error (5xx) that outlived its retries counts too: a host that answers every call
        with 500 is as dead to the lane as one that refuses."""
        server_error = exc.kind == HTTP_ERROR and exc.detail.startswith("5")
        if exc.kind not in (REFUSED, CONNECTION, TIMEOUT) and not server_error:
            self.host_failures = 0
            return
        self.host_failures += 1
        if self.host_failures >= MAX_HOST_FAILURES:
            raise ModelHostError(f"Ollama host {self.base_url} stopped answering: "
                                 f"{self.host_failures} calls in a row failed (last: {exc}); "
                                 "stopped instead of waiting on every remaining question") \
                from None

    def chat_json(self, messages: list[dict], schema: dict, **kwargs) -> tuple[dict, Reply]:
        """A chat request whose reply must be one JSON object (the `format` schema asks so)."""
        reply = self.chat(messages, schema=schema, **kwargs)
        try:
            obj = orjson.loads(reply.content)
        except orjson.JSONDecodeError:
            raise ModelCallError(INVALID_JSON, f"reply is not JSON: {reply.content[:80]!r}") \
                from None
        if not isinstance(obj, dict):
            raise ModelCallError(INVALID_JSON, f"reply is not a JSON object: "
                                 f"{reply.content[:80]!r}")
        return obj, reply

    def _chat_once(self, messages, schema, temperature, num_predict, stream) -> tuple[str, str]:
        options = {"temperature": temperature, "num_predict": num_predict}
        try:
            if not stream:
                resp = self._client.chat(model=self.model, messages=messages, format=schema,
                                         options=options, stream=False)
                return (resp.message.content or ""), (resp.done_reason or "")
            parts, done_reason = [], ""
            for chunk in self._client.chat(model=self.model, messages=messages, format=schema,
                                           options=options, stream=True):
                parts.append(chunk.message.content or "")
                if chunk.done:
                    done_reason = chunk.done_reason or ""
            return "".join(parts), done_reason
        except self._ollama.ResponseError as exc:
            if exc.status_code == 404:
                raise ModelCallError(UNKNOWN_MODEL, f"{self.model!r} on {self.base_url}: "
                                     f"{exc.error} (try `ollama pull {self.model}`)") from None
            raise ModelCallError(HTTP_ERROR, f"{exc.status_code} {exc.error}") from None
        except httpx.TimeoutException:
            raise ModelCallError(TIMEOUT, f"no reply from {self.base_url} within "
                                 f"{self.timeout:g}s") from None
        except ConnectionError:
            # the ollama client turns httpx.ConnectError into the builtin ConnectionError
            raise ModelCallError(REFUSED, f"cannot connect to {self.base_url}") from None
        except (httpx.HTTPError, ValueError) as exc:
            # a dropped connection, a malformed stream line, a reply the client cannot read
            raise ModelCallError(CONNECTION, f"{type(exc).__name__}: {exc}"[:200]) from None

    def describe_model(self) -> dict:
        """What the server says about the model (digest, size, quantisation), best effort:
        recorded in the manifest so a set names exactly which weights compiled it."""
        info: dict = {}
        try:
            for m in self._client.list().models:
                if m.model in (self.model, f"{self.model}:latest"):
                    info["digest"] = m.digest
            details = self._client.show(self.model).details
            if details is not None:
                info.update({k: v for k, v in (("family", details.family),
                                               ("parameter_size", details.parameter_size),
                                               ("quantization_level",
                                                details.quantization_level)) if v})
        except Exception as exc:   # noqa: BLE001 - metadata only; the calls themselves report
            info["error"] = f"{type(exc).__name__}: {exc}"[:200]
        return info


@dataclass
class ModelLane:
    """An optional model lane of a run (reader, repair): one client, one system prompt, counts
    of calls and failures. A failed call never stops a run: `_ask` returns None and
    `last_error` says why. A dead host does (ModelHostError), and so, in the run, does a lane
    whose every call failed. Subclasses set ROLE, PROMPT_FILE and NUM_PREDICT."""
    ROLE: ClassVar[str] = ""
    PROMPT_FILE: ClassVar[str] = ""
    NUM_PREDICT: ClassVar[int] = 0

    client: ModelClient
    prompt: str = ""
    last_error: str = ""
    first_error: str = ""
    calls: int = 0
    failures: int = 0

    @property
    def name(self) -> str:
        return f"{SPEC_PREFIX}{self.client.model}"

    def check_host(self) -> None:
        """The lane's host, checked once before the first question (ModelHostError)."""
        self.client.check_host()

    @property
    def prompt_sha256(self) -> str:
        return hashlib.sha256(self.prompt.encode("utf-8")).hexdigest()

    def describe(self) -> dict:
        """What a run records about the lane."""
        return {self.ROLE: self.name, "prompt_file": self.PROMPT_FILE,
                "prompt_sha256": self.prompt_sha256, "temperature": 0.0,
                "num_predict": self.NUM_PREDICT, "host": self.client.base_url,
                "timeout_s": self.client.timeout}

    def _ask(self, user_message: str, schema: dict, check: Callable[[dict], T]) -> T | None:
        """One call at temperature 0; `check` turns the JSON reply into the lane's value (or
        raises ModelCallError). None on any failure, with `last_error` set."""
        self.calls += 1
        self.last_error = ""
        messages = [{"role": "system", "content": self.prompt},
                    {"role": "user", "content": user_message}]
        try:
            obj, _ = self.client.chat_json(messages, schema, temperature=0.0,
                                           num_predict=self.NUM_PREDICT)
            return check(obj)
        except ModelHostError:
            raise                  # a dead host stops the lane: see check_host
        except ModelCallError as exc:
            self.failures += 1
            self.last_error = str(exc)
        except Exception as exc:   # noqa: BLE001 - one bad reply must never stop a run
            self.failures += 1
            self.last_error = f"{type(exc).__name__}: {exc}"[:200]
        self.first_error = self.first_error or self.last_error
        return None
