// The adapter that owned `node` at $as_of (recorded time; now when null), or null: an adapter writes its note a
// moment before the attachment, and a note holds no adapter's object before its oldest kept one was set.
// Mirrored by store/embedded/attached.py (`owner_then`); the value held then is timeline.attached_at_time's.
CASE WHEN $as_of IS NULL OR coalesce(node.attached_before_at[0], node.attached_at) <= $as_of THEN node.attached_by END
