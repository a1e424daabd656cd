// Which of these (source, content_hash) keys already have a note in the tenant.
UNWIND $keys AS key
MATCH (n:Note {tenant: $tenant, source: key.source, content_hash: key.content_hash})
RETURN key.index AS index, n.id AS id
