"""What a transaction's primitives (notes.py, entities.py, tiers.py, attached.py) read of their store beside
the graph: notes as the engine's type, the tenant's unit vectors and BM25 scores. The store (store.py) is one."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

import numpy as np

from ...models import Note
from ..bm25 import Statistics
from .graph import Node, PropertyGraph


class StoreView(Protocol):
    graph: PropertyGraph

    def note_node(self, tenant: str, note_id: str) -> Node | None: ...

    def to_note(self, node: Node, *, links: bool = False, with_embedding: bool = False) -> Note: ...

    def vectors(self, label: str, tenant: str) -> tuple[list[int], np.ndarray]: ...

    def note_scores(self, tenant: str, words: Sequence[str], fields: Mapping[str, float] | None) -> dict[int, float]: ...

    def page_scores(self, tenant: str, words: Sequence[str], fields: Mapping[str, float] | None) -> dict[int, float]: ...

    def statistics(self, index: str, tenant: str) -> Statistics: ...
