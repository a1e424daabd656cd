// A worker hands back the notes it claimed and did not analyse (it is closing): another may take them at once.
UNWIND $ids AS id
MATCH (n:Note {id: id})
WHERE n.claimed_by = $worker
REMOVE n.claimed_by, n.claim_until
