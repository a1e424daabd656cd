// The last two pages of a session (whose neighbourhood a new page's turn joins: page/create.cypher), with their
// text fields.
MATCH (p:Page {tenant: $tenant, session_id: $session_id})
WHERE p.seq IS NOT NULL
WITH p ORDER BY p.seq DESC LIMIT 2
RETURN p.id AS id, [field IN $fields | p[field]] AS texts
