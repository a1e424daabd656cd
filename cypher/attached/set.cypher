// What an adapter keeps on a note beside the engine's fields: the caller's original object as JSON
// (a document's metadata, a chat message, a store item's value), which adapter owns it (`attached_by`:
// chat, document or item), a store key, when it was last set, and a vector made by the caller's own
// embedding model (any dimension, so searched by exact scan). That one adapter never overwrites another's,
// the engine checks first (attachments.py).
UNWIND $rows AS row
MATCH (n:Note {tenant: $tenant, id: row.id})
SET n.attached = row.attached, n.attached_by = $kind, n.store_key = row.store_key,
    n.external_vector = row.external_vector, n.attached_at = $now
RETURN n.id AS id
