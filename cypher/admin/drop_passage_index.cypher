// Goes with the note vector index (admin/drop_vector_index): both are built again for the new dimension or
// for an index that filters by tenant.
DROP INDEX passage_embedding IF EXISTS
