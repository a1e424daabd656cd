// The tenant's statistics of one fulltext index ($index) move by what a write changed: per field, documents
// holding it and terms in it (Corpus), and per term, the documents holding it in each field (Term; one gone to
// zero everywhere is deleted). The deltas come from store/neo4j_text.py, terms in order, under the tenant's lock.
MERGE (c:Corpus {tenant: $tenant, index: $index})
ON CREATE SET c.docs = [field IN $fields | 0], c.tokens = [field IN $fields | 0]
SET c.docs = [i IN range(0, size($fields) - 1) | c.docs[i] + $docs[i]],
    c.tokens = [i IN range(0, size($fields) - 1) | c.tokens[i] + $tokens[i]]
WITH c
UNWIND $terms AS row
MERGE (t:Term {tenant: $tenant, index: $index, term: row.term})
ON CREATE SET t.df = [field IN $fields | 0]
SET t.df = [i IN range(0, size($fields) - 1) | t.df[i] + row.df[i]]
WITH t WHERE all(held IN t.df WHERE held = 0)
DELETE t
