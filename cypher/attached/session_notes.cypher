// Every note a chat session wrote, attached or not (a write that failed between the note and its
// attachment leaves one without): what clearing the session deletes.
MATCH (n:Note {tenant: $tenant, session: $session})
WHERE n.source STARTS WITH $source_prefix
RETURN n.id AS id
