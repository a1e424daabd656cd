// Past the capacity of a kind (of each assistant, for assistant knowledge), the least used facts (then the
// oldest) are archived: kept, out of use.
MATCH (f:Fact {tenant: $tenant})
WHERE f.archived_at IS NULL AND f.invalid_at IS NULL
WITH f ORDER BY f.uses + f.mentions DESC, f.updated_at DESC
WITH f.kind AS kind, CASE WHEN f.kind = 'assistant_knowledge' THEN f.assistant END AS assistant, collect(f) AS ranked
UNWIND ranked[$capacity..] AS f
SET f.archived_at = $now
RETURN f.id AS id
