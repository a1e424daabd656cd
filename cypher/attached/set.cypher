// What an adapter keeps on a note beside the engine's fields: the caller's original object as JSON
// (a document's metadata, a chat message, a store item's value), which adapter owns it (`attached_by`:
// chat, document or item), a store key, when it was last set, and a vector made by the caller's own
// embedding model (any dimension, so searched by exact scan). That one adapter never overwrites another's,
// the engine checks first (write/attachments.py).
// The object it replaces is kept, so that a read as of an earlier time finds it (timeline.attached_at_time):
// `attached_before` holds the earlier objects, oldest first, and `attached_before_at` when each was set; an
// object put again unchanged is kept as '' (no JSON text is empty): "the same as the next one", which costs a
// time, not a copy. The vector keeps no history. The write's tenant lock (tenant/lock) orders writers, so
// no earlier object is lost to a concurrent put.
UNWIND $rows AS row
MATCH (n:Note {tenant: $tenant, id: row.id})
WITH n, row, n.attached AS was, n.attached_at AS was_at
SET n.attached_before = CASE WHEN was IS NULL THEN n.attached_before
                        ELSE coalesce(n.attached_before, []) + [CASE WHEN was = row.attached THEN '' ELSE was END] END,
    n.attached_before_at = CASE WHEN was IS NULL THEN n.attached_before_at
                           ELSE coalesce(n.attached_before_at, []) + [was_at] END,
    n.attached = row.attached, n.attached_by = $kind, n.store_key = row.store_key,
    n.external_vector = row.external_vector, n.attached_at = $now
RETURN n.id AS id
