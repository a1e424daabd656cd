// Taken first by every claim of the analysis queue: claimers take turns, so the claim that follows reads the claims
// committed before it (AnalysisQueue.name is unique: MERGE locks one node).
MERGE (queue:AnalysisQueue {name: 'amem-graph'})
SET queue.claims = coalesce(queue.claims, 0) + 1
