// What an adapter keeps on a note beside the engine's fields: the caller's original object as JSON
// (a document's metadata, a chat message, a store item's value), a store key, and a vector made by the
// caller's own embedding model (any dimension, so it is searched by exact scan, not the note index).
UNWIND $rows AS row
MATCH (n:Note {tenant: $tenant, id: row.id})
SET n.attached = row.attached, n.store_key = row.store_key, n.external_vector = row.external_vector
RETURN n.id AS id
