// Each note's valid links to other notes, both directions: what the link budget weighs.
UNWIND $ids AS id
MATCH (n:Note {id: id, tenant: $tenant})-[r]-(:Note)
WHERE type(r) IN $link_types AND r.invalid_at IS NULL
RETURN id, startNode(r).id AS source_id, endNode(r).id AS target_id, type(r) AS type,
       coalesce(r.confidence, 1.0) AS confidence, r.created_at.epochMillis AS created_at
