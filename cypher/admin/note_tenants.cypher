// Which tenant holds each of these note ids (ids are unique across the database).
UNWIND $ids AS id
MATCH (n:Note {id: id})
RETURN n.id AS id, n.tenant AS tenant
