// The current version of each note an evolution will touch; missing ids are simply absent.
UNWIND $ids AS id
MATCH (n:Note {id: id, tenant: $tenant})
RETURN n.id AS id, n.version AS version
