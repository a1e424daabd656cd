// Notes ($ids) record which extractor found their mentions ($extractor): a re-extraction skips those it read.
UNWIND $ids AS id
MATCH (n:Note {tenant: $tenant, id: id})
SET n.extracted = $extractor
