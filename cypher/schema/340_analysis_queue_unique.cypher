// The one node claimers of the analysis queue lock in turn (cypher/analysis/lock.cypher).
CREATE CONSTRAINT analysis_queue_unique IF NOT EXISTS
FOR (q:AnalysisQueue) REQUIRE q.name IS UNIQUE
