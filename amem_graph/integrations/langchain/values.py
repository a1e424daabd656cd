"""JSON values the adapters keep for their callers: serialising them and LangGraph-style filters on them."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ...errors import InvalidInput

OPERATORS = ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte")


def to_json(value: Any, what: str) -> str:
    """`value` as JSON, or a clear error naming what it was (callers check every item before writing)."""
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as err:
        raise InvalidInput(f"{what} must be JSON-serialisable: {err}") from None


def check_filter(condition: Any) -> None:
    """Refuse an operator `matches` does not know before anything is searched."""
    if isinstance(condition, Mapping):
        for key, value in condition.items():
            if str(key).startswith("$") and key not in OPERATORS:
                raise InvalidInput(f"unknown filter operator {key!r}; use one of {', '.join(OPERATORS)}")
            check_filter(value)


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
