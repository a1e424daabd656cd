"""Structured log lines: one JSON object per event, so operators can grep and parse why something happened."""

from __future__ import annotations

import json
import logging
from typing import Any

logger = logging.getLogger("amem_graph")


def event(name: str, level: int = logging.WARNING, **fields: Any) -> None:
    """Log `{"event": name, ...fields}` as one line."""
    if logger.isEnabledFor(level):
        logger.log(level, json.dumps({"event": name, **fields}, default=str, ensure_ascii=False, sort_keys=True))
