// The notes that hold these (source, content_hash) identities in the tenant: what makes an add a repeat.
UNWIND $keys AS key
MATCH (node:Note {tenant: $tenant, source: key.source, content_hash: key.content_hash})
RETURN @note_map AS note
