"""amem-graph: agentic memory for LLM agents as a Zettelkasten of linked, evolving notes in Neo4j."""

from .aio import AsyncAgenticMemory
from .api import AgenticMemory
from .core import moved
from .core.tuning import Tuning
from .errors import (
    AmemError,
    EntityNotFound,
    InvalidInput,
    NoteNotFound,
    SchemaMismatch,
    ServerError,
    StoreError,
    StoreUnavailable,
)
from .models import LINK_TYPES, Archival, Entity, Link, Note, NoteInput, RetentionPolicy, SearchHit
from .settings import Settings

__all__ = [
    "LINK_TYPES",
    "AgenticMemory",
    "AmemError",
    "Archival",
    "AsyncAgenticMemory",
    "Entity",
    "EntityNotFound",
    "InvalidInput",
    "Link",
    "Note",
    "NoteInput",
    "NoteNotFound",
    "RetentionPolicy",
    "SchemaMismatch",
    "SearchHit",
    "ServerError",
    "Settings",
    "StoreError",
    "StoreUnavailable",
    "Tuning",
]
__version__ = "0.1.0"

moved.install()
