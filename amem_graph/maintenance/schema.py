"""Schema compatibility, for every store: a database built for another embedding model, dimension or a newer
schema is refused with an error that says what to do; a current one is left as it is."""

from __future__ import annotations

from ..embedding import canonical_model
from ..errors import SchemaMismatch
from ..store.base import SCHEMA_VERSION, NoteStore, SchemaState, SchemaWrite


def check(store: NoteStore, model: str, dimension: int) -> SchemaState:
    """Refuse to run against a database built for another model, dimension or schema version."""
    state = store.schema()
    for found in (state.index_dimension, state.dimension):
        if found is not None and int(found) != dimension:
            raise SchemaMismatch(
                f"the notes in {store.location} have {found}-dimension embeddings (vector index note_embedding), "
                f"but the embedding model gives {dimension}: use the model the notes were embedded with "
                "(AMEM_EMBEDDING_MODEL) or re-embed them (amem-graph consolidate)"
            )
    if state.consolidating:
        raise SchemaMismatch(
            f"a consolidation of {store.location} to {state.model!r} is under way (it stopped before its end): "
            f"run `amem-graph consolidate` with AMEM_EMBEDDING_MODEL={state.model} to finish it"
        )
    if state.version is not None and state.version > SCHEMA_VERSION:
        raise SchemaMismatch(
            f"{store.location} holds amem-graph schema version {state.version}, newer than this amem-graph "
            f"understands ({SCHEMA_VERSION}): upgrade amem-graph"
        )
    if state.model and state.model != canonical_model(model):
        raise SchemaMismatch(
            f"the notes in {store.location} were embedded with {state.model!r}, not {canonical_model(model)!r}: "
            f"set AMEM_EMBEDDING_MODEL={state.model}, or move the database to the new model with `amem-graph "
            "consolidate`, which embeds every vector again (vectors of different models are not comparable)"
        )
    store.dimension, store.model = dimension, canonical_model(model)
    return state


def ensure(store: NoteStore, model: str, dimension: int, *, force: bool = False) -> None:
    """Check, then create what is missing (idempotent). Without `force`, a database whose marker says the
    schema is current is left as it is: opening a memory costs a read, not a round of DDL."""
    state = check(store, model, dimension)
    current = state.version == SCHEMA_VERSION and state.index_dimension is not None
    if not current or force:
        store.schema(create=SchemaWrite(model, dimension, state.version))
