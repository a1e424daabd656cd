// Pending notes that no live claim holds, claimed by $worker until $until, fairly across tenants: a tenant with
// fewer live claims goes first, then each tenant's oldest notes, so one tenant's import of thousands of notes does
// not hold back another tenant's next one. Runs after cypher/analysis/lock.cypher in the same transaction.
MATCH (n:Note)
WHERE n.analysis = 'pending'
WITH n, n.claim_until IS NOT NULL AND n.claim_until > $now AS live
ORDER BY n.created_at, n.id
WITH n.tenant AS tenant, sum(CASE WHEN live THEN 1 ELSE 0 END) AS busy,
     [entry IN collect({note: n, live: live}) WHERE NOT entry.live][..$limit] AS free
UNWIND range(0, size(free) - 1) AS place
WITH free[place].note AS n, busy + place AS turn
ORDER BY turn, n.created_at, n.id
LIMIT $limit
SET n.claimed_by = $worker, n.claim_until = $until
RETURN n.tenant AS tenant, n.id AS id
