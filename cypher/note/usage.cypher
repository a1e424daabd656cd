// What a retention policy weighs, for each note of the tenant not archived (superseded ones too): when it was added and
// last recalled, how often it was recalled, and how many valid links it has.
MATCH (n:Note {tenant: $tenant})
WHERE n.created_at IS NOT NULL AND n.archived_at IS NULL
RETURN n.id AS id, n.created_at.epochMillis AS created_at, n.last_accessed.epochMillis AS last_accessed,
       coalesce(n.retrieval_count, 0) AS recalls,
       COUNT { (n)-[r]-(:Note) WHERE type(r) IN $link_types AND r.invalid_at IS NULL } AS links
ORDER BY n.id
