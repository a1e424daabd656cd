// The objects each of these notes' attachment held before its current one, with when each was set, oldest
// first ('' for one put again unchanged: see attached/set); notes without earlier ones are left out.
UNWIND $ids AS id
MATCH (node:Note {tenant: $tenant, id: id})
WHERE node.attached_before IS NOT NULL
RETURN id, node.attached_before AS attached, [at IN node.attached_before_at | at.epochMillis] AS at
