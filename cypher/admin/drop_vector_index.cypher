// The note vector index has another dimension (a new embedding model): schema/050's CREATE ... IF NOT EXISTS
// would keep it, so it goes first.
DROP INDEX note_embedding IF EXISTS
