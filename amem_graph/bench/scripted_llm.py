"""A scripted OpenAI-compatible chat-completions server on loopback, for tests and the llm-cost benchmark.

Real HTTP, real `openai` SDK on the other side; answers come from a script of replies and faults, then
from a default responder that analyses notes the way a cooperative model would. Usage is counted
with llm.tokens: the messages as OpenAI counts them, plus the JSON schema sent as response_format.
"""

from __future__ import annotations

import json
import random
import re
import socket
import subprocess
import sys
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from ..core.text import STOP_WORDS, stem
from ..llm.tokens import count_prompt_tokens, count_tokens


@dataclass(frozen=True)
class Answer:
    """A completion: `content` as the model's text; finish_reason "length" means truncated."""

    content: str | None
    finish_reason: str = "stop"
    refusal: str | None = None
    report_usage: bool = True


@dataclass(frozen=True)
class Fault:
    """An HTTP error status (429, 500...), optionally with Retry-After and the error's message."""

    status: int
    retry_after: float | None = None
    message: str | None = None


@dataclass(frozen=True)
class Raw:
    """Exactly these bytes as a 200 JSON response: a cut-off body or a wrong shape."""

    body: bytes


@dataclass(frozen=True)
class Delay:
    """Wait `seconds` (past the client's timeout, to simulate one) and then send `then`."""

    seconds: float
    then: Answer | Fault | Raw | None = None


@dataclass(frozen=True)
class Reset:
    """Close the connection without an answer, as a proxy or a crashed server does."""


Reply = Answer | Fault | Raw | Delay | Reset
_CANDIDATE = re.compile(r"^(c\d+): (.*)$")
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]+")


def _content_words(text: str) -> list[str]:
    seen: dict[str, str] = {}
    for word in _WORD.findall(text):
        lower = word.lower()
        if lower not in STOP_WORDS and len(lower) > 3:
            seen.setdefault(stem(lower), lower)
    return list(seen.values())


def _names(note: str) -> list[str]:
    """What the scripted model calls the note's entities: its capitalised words, then its content words."""
    body = note.split(": ", 1)[-1]
    capitalised = [w for w in _WORD.findall(body) if w[:1].isupper() and w.lower() not in STOP_WORDS]
    return list(dict.fromkeys([*capitalised, *_content_words(body)]))


def analysis_answer(request: dict[str, Any]) -> Answer:
    """A cooperative model: keywords and tags from the note's words, links to candidates that share
    one, and a tag added to the first linked candidate. Other requests (by the name of their JSON schema:
    the MemoryOS tiers, `respond`, entity aliases) get the answers of `_ANSWERS`."""
    name = ((request.get("response_format") or {}).get("json_schema") or {}).get("name", "")
    user = next(m["content"] for m in request["messages"] if m["role"] == "user")
    if name in _ANSWERS:
        return Answer(json.dumps(_ANSWERS[name](user), separators=(",", ":")))
    lines = user.splitlines()
    note = lines[0].removeprefix("NEW: ")
    words = _content_words(note.split(": ", 1)[-1]) or ["note"]
    links: list[dict[str, Any]] = []
    updates: list[dict[str, Any]] = []
    for line in lines[1:]:
        match = _CANDIDATE.match(line)
        if not match:
            continue
        theirs = {stem(w) for w in _content_words(match.group(2).split(" | ")[0])}
        shared = [w for w in words if stem(w) in theirs]
        if shared:
            links.append({"target_id": match.group(1), "type": "RELATES_TO",
                          "reason": f"both mention {shared[0]}", "confidence": 0.8})
            if not updates:
                updates.append({"id": match.group(1), "context": None, "add_tags": [shared[0]],
                                "remove_tags": [], "reason": f"the new note also mentions {shared[0]}"})
    answer = {
        "keywords": words[:5], "context": f"A note about {', '.join(words[:3])}.", "tags": words[:2],
        "links": links[:3], "neighbour_updates": updates,
        "entities": _names(note)[:5],
    }
    return Answer(json.dumps(answer, separators=(",", ":")))


def _turn_answer(user: str) -> dict[str, Any]:
    new = next(line for line in user.splitlines() if line.startswith("NEW: "))
    words = _content_words(new.removeprefix("NEW: ")) or ["turn"]
    return {"continues": not user.startswith("PREVIOUS: none"), "chain_summary": f"Talk about {', '.join(words[:3])}.",
            "keywords": words[:5]}


def _segment_answer(user: str) -> dict[str, Any]:
    words = _content_words(user.split("NEW: ", 1)[-1]) or ["topic"]
    return {"summary": f"The user talked about {', '.join(words[:4])}.", "keywords": words[:5]}


def _persona_answer(user: str) -> dict[str, Any]:
    facts = []
    for line in user.splitlines()[1:]:
        handle, _, text = line.partition(": ")
        said = text.removeprefix("user: ").split(" | ")[0]
        if said.lower().startswith(("i ", "i'm ", "my ")):
            facts.append({"kind": "profile", "text": said, "page": handle, "confidence": 0.9})
    return {"facts": facts}


def _alias_answer(user: str) -> dict[str, Any]:
    """The pairs whose two names start with the same word: "Caroline" and "Caroline Hill", not "icecream" and
    "ice cream" (a model that is not sure of a pair leaves it out)."""
    same = []
    for line in user.splitlines()[1:]:
        handle, _, pair = line.partition(": ")
        names = re.findall(r"'([^']*)' \(", pair)
        if len(names) == 2 and names[0].split()[:1] == names[1].split()[:1]:
            same.append(handle)
    return {"same": same}


_ANSWERS: dict[str, Callable[[str], dict[str, Any]]] = {
    "entity_alias": _alias_answer,
    "tier_turn": _turn_answer, "tier_segment": _segment_answer, "tier_persona": _persona_answer,
    "respond": lambda user: {"reply": f"You said: {user[:80]}"},
}


def slow_answer(seconds: float, answer: Callable[[dict[str, Any]], Reply] = analysis_answer,
                ) -> Callable[[dict[str, Any]], Reply]:
    """`answer`, after `seconds`: a model's latency."""
    def answering(request: dict[str, Any]) -> Reply:
        time.sleep(seconds)
        return answer(request)

    return answering


class Flaky:
    """A model that, one request in two, hangs past `timeout_s`, resets the connection, fails with 503 or is
    slow but within the timeout; the rest get `answer`. Seeded, safe for a threaded server, and counting
    what it served in `served`."""

    def __init__(self, timeout_s: float, seed: int = 5,
                 answer: Callable[[dict[str, Any]], Reply] = analysis_answer) -> None:
        self.timeout_s = timeout_s
        self.answer = answer
        self.served: Counter[str] = Counter()
        self._rng = random.Random(seed)
        self._lock = threading.Lock()

    def __call__(self, request: dict[str, Any]) -> Reply:
        with self._lock:
            roll = self._rng.random()
            kind = "hang" if roll < 0.1 else "reset" if roll < 0.25 else "503" if roll < 0.4 else \
                "slow" if roll < 0.5 else "answer"
            self.served[kind] += 1
        if kind == "hang":
            return Delay(self.timeout_s * 3, then=self.answer(request))
        if kind == "reset":
            return Reset()
        if kind == "503":
            return Fault(503)
        if kind == "slow":
            return Delay(self.timeout_s * 0.6, then=self.answer(request))
        return self.answer(request)


class ScriptedLLM:
    """`with ScriptedLLM() as llm:` serves on llm.base_url; `llm.script(...)` queues replies."""

    def __init__(self, responder: Callable[[dict[str, Any]], Reply] = analysis_answer) -> None:
        self.responder = responder
        self.requests: list[dict[str, Any]] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._script: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="scripted-llm", daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def script(self, *replies: Reply) -> None:
        """Replies for the next requests, in order; the responder answers once they are used up."""
        with self._lock:
            self._script.extend(replies)

    def __enter__(self) -> ScriptedLLM:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _next(self, request: dict[str, Any]) -> Reply:
        with self._lock:
            self.requests.append(request)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            if self._script:
                return self._script.popleft()
        return self.responder(request)

    def _done(self) -> None:
        with self._lock:
            self.in_flight -= 1

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        llm = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                if self.path.endswith("/models"):
                    self._send(200, {"object": "list", "data": [{"id": "scripted", "object": "model", "owned_by": "tests"}]})
                else:
                    self._send(404, {"error": {"message": f"no route {self.path}"}})

            def do_POST(self) -> None:
                if not self.path.endswith("/chat/completions"):
                    self._send(404, {"error": {"message": f"no route {self.path}"}})
                    return
                request = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                try:
                    reply = llm._next(request)
                    while isinstance(reply, Delay):
                        time.sleep(reply.seconds)
                        reply = reply.then or llm.responder(request)
                    if isinstance(reply, Reset):
                        self.close_connection = True
                        self.connection.shutdown(socket.SHUT_RDWR)
                    elif isinstance(reply, Fault):
                        headers = {"Retry-After": str(reply.retry_after)} if reply.retry_after is not None else {}
                        message = reply.message or f"scripted {reply.status}"
                        self._send(reply.status, {"error": {"message": message}}, headers)
                    elif isinstance(reply, Raw):
                        self._send_bytes(200, reply.body)
                    else:
                        self._send(200, completion(request, reply))
                except (BrokenPipeError, ConnectionResetError, OSError):
                    pass  # the client gave up (a timeout test)
                finally:
                    llm._done()

            def _send(self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> None:
                self._send_bytes(status, json.dumps(body).encode(), headers)

            def _send_bytes(self, status: int, data: bytes, headers: dict[str, str] | None = None) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

        return Handler


def completion(request: dict[str, Any], answer: Answer) -> dict[str, Any]:
    """The chat.completion object for `answer`, with usage counted as documented above."""
    prompt = count_prompt_tokens(request["messages"])
    if schema := (request.get("response_format") or {}).get("json_schema"):
        prompt += count_tokens(json.dumps(schema["schema"], separators=(",", ":")))
    body: dict[str, Any] = {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": request.get("model", "scripted"),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": answer.content, "refusal": answer.refusal},
                "finish_reason": answer.finish_reason,
            }
        ],
    }
    if answer.report_usage:
        completion_tokens = count_tokens(answer.content or "")
        body["usage"] = {
            "prompt_tokens": prompt, "completion_tokens": completion_tokens,
            "total_tokens": prompt + completion_tokens,
        }
    return body


@contextmanager
def served_apart(latency_s: float) -> Iterator[str]:
    """The cooperative model answering after `latency_s`, served by a process of its own (its work does not share
    this process's interpreter lock, as a remote model's would not); yields its base URL."""
    proc = subprocess.Popen([sys.executable, "-m", "amem_graph.bench.scripted_llm", str(latency_s)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        yield proc.stdout.readline().strip()
    finally:
        if proc.stdin is not None:
            proc.stdin.close()  # it serves until its input closes
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


if __name__ == "__main__":
    with ScriptedLLM(slow_answer(float(sys.argv[1]))) as served:
        print(served.base_url, flush=True)
        sys.stdin.read()
