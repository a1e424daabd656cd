"""A tolerant reader of LLM answers: strict JSON, JSON in code fences or prose, or plain sections."""

from __future__ import annotations

import json
import re
from typing import Any

from ..errors import LLMError

_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)
_SECTION = re.compile(r"^\s*[*#\-\s]*([A-Za-z_ ]+?)\s*[*]*\s*:\s*(.*)$")
_LINK_LINE = re.compile(
    r"^\s*[-*]?\s*(?P<target>[A-Za-z]*\d+)\s*[:,\-]?\s*(?P<type>[A-Za-z_ ]+?)\s*"
    r"(?:\((?P<conf>[0-9.]+)\)|[,\s]+(?P<conf2>0?\.\d+|1(?:\.0+)?))?\s*(?:[:\-–—]\s*(?P<reason>.*))?$"
)
_LIST_FIELDS = {"keywords", "tags"}


def parse_answer(text: str) -> dict[str, Any]:
    """The JSON object in an answer; falls back to `Keywords: ...` style sections. LLMError('malformed') if neither."""
    if not text or not text.strip():
        raise LLMError("malformed", "empty answer")
    for candidate in _json_candidates(text):
        try:
            value = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    if sections := _sections(text):
        return sections
    # The answer is not quoted: it may repeat the memories it was shown, and errors reach the logs.
    raise LLMError("malformed", f"no JSON object or sections in the answer ({len(text)} characters)")


def _json_candidates(text: str) -> list[str]:
    stripped = text.strip()
    found = [stripped, *(m.strip() for m in _FENCE.findall(text))]
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        found.append(text[start : end + 1])
    return found


def _sections(text: str) -> dict[str, Any]:
    """`Keywords: a, b` / `Context: ...` / `Tags: ...` / `Links:` followed by `- c1 RELATES_TO (0.8): reason` lines."""
    out: dict[str, Any] = {}
    current: str | None = None
    for line in text.splitlines():
        match = _SECTION.match(line)
        name = match.group(1).strip().lower().replace(" ", "_") if match else None
        if match and name in ("keywords", "tags", "context", "links"):
            current = name
            value = match.group(2).strip()
            if name in _LIST_FIELDS:
                out[name] = [v.strip(" .\"'") for v in re.split(r"[,;]", value) if v.strip(" .\"'")]
            elif name == "context":
                out[name] = value
            else:
                out.setdefault("links", [])
            continue
        if current == "links" and (link := _LINK_LINE.match(line)):
            conf = link.group("conf") or link.group("conf2")
            out["links"].append(
                {
                    "target_id": link.group("target"),
                    "type": link.group("type").strip(),
                    "confidence": float(conf) if conf else None,
                    "reason": (link.group("reason") or "").strip(),
                }
            )
        elif current == "context" and line.strip():
            out["context"] = f"{out['context']} {line.strip()}".strip()
    return out if {"keywords", "context"} <= out.keys() else {}
