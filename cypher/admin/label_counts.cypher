// Nodes per label, of one tenant or of the database; a tenant's BM25 statistics (Term, Corpus: derived data, as
// a fulltext index is) are not counted, as the embedded store keeps them in no node.
MATCH (n)
WHERE ($tenant IS NULL OR n.tenant = $tenant) AND NOT n:Term AND NOT n:Corpus
UNWIND labels(n) AS label
RETURN label, count(*) AS count
ORDER BY label
