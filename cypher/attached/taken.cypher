// Which of these note ids another tenant holds (ids are unique across the database).
UNWIND $ids AS id
MATCH (n:Note {id: id})
WHERE n.tenant <> $tenant
RETURN n.id AS id
