// Consolidation after a change of embedding model: the old index has the old dimension, so it goes first.
DROP INDEX note_embedding IF EXISTS
