"""One client for any OpenAI-compatible endpoint: structured output, retries, a concurrency limit, usage."""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

try:
    import openai
except ImportError:  # the `llm` extra: without it the engine runs on the heuristic analyser, and LLMClient says so
    openai = None  # type: ignore[assignment]

from ..core import telemetry
from ..core.log import event, llm_tokens
from ..errors import AmemError, LLMError
from ..settings import OPENAI_BASE_URL, LLMSettings
from .parsing import parse_answer
from .tokens import count_prompt_tokens, count_tokens

BACKOFF_CAP_S = 8.0
GRAMMAR_MAX_ITEMS = 8  # per list, in llama.cpp's grammar (the engine keeps at most 10 labels, 3 updates)
GRAMMAR_MAX_CHARS = 500  # per text, in llama.cpp's grammar (the engine keeps at most 500 of a reason)
_RETRY_STATUS = frozenset({408, 409, 429})
# What the SDK raises when a model list is not one.
_GARBLED = (ValueError, TypeError, AttributeError, openai.APIResponseValidationError) if openai else ()


@dataclass
class Usage:
    """Per operation: requests sent (retries included), retries, failed operations, tokens, seconds waited."""

    calls: int = 0
    retries: int = 0
    failures: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0


@dataclass(frozen=True)
class LLMReply:
    data: dict[str, Any]
    prompt_tokens: int
    completion_tokens: int
    model: str


class LLMClient:
    """Chat completions that must come back as a JSON object.

    Retries 408/409/429/5xx, timeouts and dropped connections with exponential backoff and full
    jitter (a server's Retry-After is honoured); at most `concurrency` requests are in flight per
    client. Token usage comes from the endpoint's `usage`, or is counted with llm.tokens if absent.
    """

    def __init__(self, settings: LLMSettings, *, sleep: Callable[[float], None] = time.sleep) -> None:
        if openai is None:
            raise AmemError(f"an LLM is configured ({settings.base_url or OPENAI_BASE_URL}), but its client is not "
                            "installed: pip install 'amem-graph[llm]' (or unset AMEM_LLM_* for the heuristic analyser)")
        self.settings = settings
        self.model = settings.model
        self._endpoint = settings.base_url or OPENAI_BASE_URL
        self._client = openai.OpenAI(
            base_url=settings.base_url or OPENAI_BASE_URL,  # explicit: the SDK would read OPENAI_BASE_URL
            api_key=settings.api_key or "unused",  # local servers (vLLM, Ollama) take any key
            timeout=settings.timeout_s,
            max_retries=0,  # retries are ours: counted, logged, with jitter
        )
        self._slots = threading.BoundedSemaphore(settings.concurrency)
        self._lock = threading.Lock()
        self._usage: dict[str, Usage] = {}
        self._sleep = sleep
        # Reasoning models refuse max_tokens and temperature, and llama.cpp's servers OpenAI's json_schema form:
        # learnt from the first refusal, then kept.
        self._reasoning_parameters = False
        self._dialect = settings.response_format

    def complete_json(
        self, operation: str, messages: list[dict[str, str]], schema: dict[str, Any], *, max_tokens: int
    ) -> LLMReply:
        """Send `messages`; return the JSON object of the answer, or raise LLMError saying what went wrong."""
        started = time.perf_counter()
        with telemetry.model_call(operation, self.model, self._endpoint, max_tokens) as span:
            try:
                with self._slots:
                    response = self._send(operation, messages, schema, max_tokens)
                reply = self._read(operation, messages, response)
                span.set(**{"gen_ai.response.model": reply.model, "gen_ai.usage.input_tokens": reply.prompt_tokens,
                            "gen_ai.usage.output_tokens": reply.completion_tokens})
                return reply
            except LLMError as err:
                self.count_failure(operation)
                span.set(**{"gen_ai.usage.input_tokens": err.prompt_tokens, "gen_ai.usage.output_tokens": err.completion_tokens})
                raise
            finally:
                self._add(operation, seconds=time.perf_counter() - started)

    def models(self) -> list[str]:
        """The model ids the endpoint lists (costs no tokens); LLMError if it cannot be reached."""
        try:
            return [str(model.id) for model in self._client.models.list()]
        except (openai.APIStatusError, openai.APIConnectionError) as err:
            raise self._failure(err) from None
        except _GARBLED as err:
            raise LLMError("malformed", f"unreadable model list from {self.settings.base_url}: {err!r}"[:300]) from None

    def count_failure(self, operation: str) -> None:
        """Count an operation as failed (also when a caller rejects an answer that arrived)."""
        self._add(operation, failures=1)

    def usage(self) -> dict[str, dict[str, float]]:
        with self._lock:
            return {operation: asdict(usage) for operation, usage in sorted(self._usage.items())}

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> LLMClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- internals --------------------------------------------------------------------------------

    def _send(self, operation: str, messages: list[dict[str, str]], schema: dict[str, Any], max_tokens: int) -> Any:
        for attempt in range(self.settings.max_retries + 1):
            self._add(operation, calls=1, retries=1 if attempt else 0)
            extra = _response_format(self._dialect, operation, schema)
            try:
                try:
                    return self._create(messages, max_tokens, extra)
                except openai.APIStatusError as err:  # a refusal that says what the server takes: asked again, once
                    if (not self._reasoning_parameters and isinstance(err, openai.BadRequestError)
                            and _asks_for_reasoning_parameters(err)):
                        self._reasoning_parameters = True
                        event("llm_parameters", logging.INFO, model=self.model, now="max_completion_tokens, no temperature")
                    elif self._dialect == "json_schema" and _asks_for_json_object(err):
                        # llama.cpp's servers refuse OpenAI's form with 400 or 500, naming the one they take.
                        self._dialect = "json_object_schema"
                        event("llm_parameters", logging.INFO, model=self.model, now="response_format json_object with schema")
                        extra = _response_format(self._dialect, operation, schema)
                    else:
                        raise
                    self._add(operation, calls=1)
                    return self._create(messages, max_tokens, extra)
            except (ValueError, openai.APIResponseValidationError) as err:  # a 200 whose body is not a completion
                self._add(operation, prompt_tokens=count_prompt_tokens(messages))  # the request was still read
                raise LLMError("malformed", f"unreadable answer from {self.settings.base_url}: {err!r}"[:300]) from None
            except (openai.APIStatusError, openai.APIConnectionError) as err:
                failure = self._failure(err)
                if failure.kind == "rejected" or attempt == self.settings.max_retries:
                    raise failure from None
                delay = self._backoff(attempt, _retry_after(err))
            event("llm_retry", operation=operation, attempt=attempt + 1, error=str(failure), delay_s=round(delay, 3))
            self._sleep(delay)
        raise AssertionError("unreachable")  # pragma: no cover - the loop returns or raises

    def _failure(self, err: openai.APIStatusError | openai.APIConnectionError) -> LLMError:
        """The typed error for what the SDK raised; every kind but "rejected" is worth a retry."""
        if isinstance(err, openai.APIStatusError):
            code = err.status_code
            kind = "rate_limited" if code == 429 else "server" if code in _RETRY_STATUS or code >= 500 else "rejected"
            return LLMError(kind, f"HTTP {code} from {self.settings.base_url}: {_brief(err)}")
        if isinstance(err, openai.APITimeoutError):  # a kind of APIConnectionError: checked first
            return LLMError("timeout", f"no answer from {self.settings.base_url} in {self.settings.timeout_s} s")
        return LLMError("connection", f"{self.settings.base_url}: {err}")

    def _create(self, messages: list[dict[str, str]], max_tokens: int, extra: dict[str, Any]) -> Any:
        if self._reasoning_parameters:
            limits: dict[str, Any] = {"max_completion_tokens": max_tokens}
        else:
            limits = {"max_tokens": max_tokens, "temperature": 0}
        return self._client.chat.completions.create(model=self.model, messages=messages, **limits, **extra)  # type: ignore[arg-type]

    def _backoff(self, attempt: int, retry_after: float | None) -> float:
        jittered = random.uniform(0, min(BACKOFF_CAP_S, self.settings.backoff_s * 2**attempt))
        return max(jittered, min(retry_after, 4 * BACKOFF_CAP_S)) if retry_after is not None else jittered

    def _read(self, operation: str, messages: list[dict[str, str]], response: Any) -> LLMReply:
        try:  # servers that are only roughly compatible send odd shapes: read defensively
            choices = list(getattr(response, "choices", None) or [])
            message = choices[0].message if choices else None
            finish_reason = choices[0].finish_reason if choices else None
            content = str(getattr(message, "content", None) or "") if message else ""
            refusal = getattr(message, "refusal", None) if message else None
        except (TypeError, AttributeError, IndexError) as err:
            self._add(operation, prompt_tokens=count_prompt_tokens(messages))
            raise LLMError("malformed", f"the answer is not a chat completion: {err!r}"[:300]) from None
        usage = getattr(response, "usage", None)
        prompt = getattr(usage, "prompt_tokens", None)
        completion = getattr(usage, "completion_tokens", None)
        prompt = prompt if isinstance(prompt, int) else count_prompt_tokens(messages)
        completion = completion if isinstance(completion, int) else count_tokens(content)
        self._add(operation, prompt_tokens=prompt, completion_tokens=completion)
        llm_tokens(prompt, completion)
        cost = {"prompt_tokens": prompt, "completion_tokens": completion}
        if message is None:
            raise LLMError("malformed", "the answer has no message", **cost)
        if refusal or finish_reason == "content_filter":
            # Not quoted: a refusal may repeat what it refused, and errors reach the logs.
            raise LLMError("refusal", "the model refused" if refusal else "the content filter stopped the answer", **cost)
        if finish_reason == "length":
            raise LLMError("truncated", f"the answer hit the {completion}-token limit", **cost)
        try:
            data = parse_answer(content)
        except LLMError as err:
            raise LLMError(err.kind, str(err).split(": ", 1)[-1], **cost) from None
        return LLMReply(data, prompt, completion, str(getattr(response, "model", None) or self.model))

    def _add(self, operation: str, **amounts: float) -> None:
        with self._lock:
            usage = self._usage.setdefault(operation, Usage())
            for name, amount in amounts.items():
                setattr(usage, name, getattr(usage, name) + amount)


def _response_format(dialect: str, operation: str, schema: dict[str, Any]) -> dict[str, Any]:
    """The request's `response_format` in the server's dialect (settings.RESPONSE_FORMATS)."""
    if dialect == "json_schema":
        return {"response_format": {
            "type": "json_schema", "json_schema": {"name": operation.replace("-", "_"), "schema": schema, "strict": True},
        }}
    if dialect == "json_object_schema":
        return {"response_format": {"type": "json_object", "schema": _bounded(schema)}}
    if dialect == "json_object":
        return {"response_format": {"type": "json_object"}}
    return {}


def _bounded(schema: Any) -> Any:
    """The schema with every list and text bounded (llama.cpp turns them into its grammar): a small model that
    repeats itself stops at the bound instead of running into max_tokens. OpenAI's strict mode refuses these
    keywords, so only llama.cpp's dialect carries them."""
    if isinstance(schema, list):
        return [_bounded(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {key: _bounded(value) for key, value in schema.items()}
    kinds = schema.get("type")
    kinds = kinds if isinstance(kinds, list) else [kinds]
    if "array" in kinds:
        out.setdefault("maxItems", GRAMMAR_MAX_ITEMS)
    if "string" in kinds and "enum" not in schema:
        out.setdefault("maxLength", GRAMMAR_MAX_CHARS)
    return out


def _asks_for_json_object(err: openai.APIStatusError) -> bool:
    """A server that takes only `json_object` says so when sent `json_schema` (llama-cpp-python: HTTP 500,
    "Input should be 'text' or 'json_object'")."""
    text = str(getattr(err, "message", err))
    return err.status_code in (400, 422, 500) and "json_object" in text and "json_schema" in text


def _asks_for_reasoning_parameters(err: openai.BadRequestError) -> bool:
    """OpenAI's reasoning models answer 400 to max_tokens ("use 'max_completion_tokens' instead") and to
    a temperature other than the default."""
    text = _brief(err).lower()
    return "max_completion_tokens" in text or ("temperature" in text and "support" in text)


def _brief(err: openai.APIStatusError) -> str:
    return str(getattr(err, "message", err))[:200]


def _retry_after(err: openai.APIStatusError) -> float | None:
    try:
        return max(0.0, float(err.response.headers.get("retry-after", "")))
    except (ValueError, AttributeError):
        return None
