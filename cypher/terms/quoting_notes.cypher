// The session's notes whose neighbourhood quotes $line (what note/erase_text.cypher changes), with their text
// fields.
MATCH (n:Note {tenant: $tenant, session: $session})
WHERE n.seq IS NOT NULL AND n.neighbourhood CONTAINS $line
RETURN n.id AS id, [field IN $fields | n[field]] AS texts
