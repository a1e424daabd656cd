"""JSON values the adapters keep for their callers: serialising them and LangGraph-style filters on them."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ...core import validation
from ...errors import InvalidInput

OPERATORS = ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte")
MAX_DEPTH = 64  # nesting of metadata, values and filters: deeper is refused before Python's recursion limit


def to_json(value: Any, what: str) -> str:
    """`value` as JSON, or a clear error naming what it was (callers check every item before writing)."""
    _check_depth(value, what)
    try:
        encoded = json.dumps(value, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as err:
        raise InvalidInput(f"{what} must be JSON-serialisable: {err}") from None
    return validation.text(encoded, what, len(encoded))


def check_filter(condition: Any) -> None:
    """Refuse an operator `matches` does not know, or nesting past MAX_DEPTH, before anything is searched."""
    _check_depth(condition, "a filter")
    _check_operators(condition)


def _check_operators(condition: Any) -> None:
    if isinstance(condition, Mapping):
        for key, value in condition.items():
            if str(key).startswith("$") and key not in OPERATORS:
                raise InvalidInput(f"unknown filter operator {key!r}; use one of {', '.join(OPERATORS)}")
            _check_operators(value)


def _check_depth(value: Any, what: str) -> None:
    """Walked without recursion: the point is to refuse what recursion cannot walk."""
    level: list[Any] = [value]
    for _ in range(MAX_DEPTH + 1):
        nested = [
            item for container in level if isinstance(container, Mapping | list | tuple)
            for item in (container.values() if isinstance(container, Mapping) else container)
        ]
        if not nested:
            return
        level = nested
    raise InvalidInput(f"{what} is nested more than {MAX_DEPTH} levels deep")


def matches(value: Any, condition: Any) -> bool:
    """Equality, nested mappings, and the operators $eq $ne $gt $gte $lt $lte (numbers compared as such)."""
    if isinstance(condition, Mapping) and any(str(k).startswith("$") for k in condition):
        return all(_compare(value, op, operand) for op, operand in condition.items())
    if isinstance(condition, Mapping):
        return isinstance(value, Mapping) and all(matches(value.get(k), v) for k, v in condition.items())
    return value == condition


def _compare(value: Any, op: str, operand: Any) -> bool:
    if op in ("$eq", "$ne"):
        return (value == operand) == (op == "$eq")
    try:
        left, right = float(value), float(operand)
    except (TypeError, ValueError):
        return False
    return {"$gt": left > right, "$gte": left >= right, "$lt": left < right, "$lte": left <= right}[op]
