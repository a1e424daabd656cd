// Who speaks in a tenant's notes: the names a question may be about.
MATCH (node:Note {tenant: $tenant})
WHERE node.speaker IS NOT NULL
RETURN DISTINCT node.speaker AS speaker
