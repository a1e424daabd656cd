// The text fields of notes by id, as the note_text index reads them ($fields: TEXT_FIELDS): what a write counts
// in or out of the tenant's statistics (store/neo4j_text.py).
UNWIND $ids AS id
MATCH (n:Note {id: id, tenant: $tenant})
RETURN n.id AS id, [field IN $fields | n[field]] AS texts
