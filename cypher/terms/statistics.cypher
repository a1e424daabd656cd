// The tenant's statistics of one fulltext index ($index) as kept: per field, documents holding it and terms in it
// (Corpus), and per term, the documents holding it in each field (Term). What `check` recounts from the texts.
OPTIONAL MATCH (c:Corpus {tenant: $tenant, index: $index})
CALL () {
  MATCH (t:Term {tenant: $tenant, index: $index})
  WHERE t.term IS NOT NULL  // the (tenant, index, term) index then serves it
  RETURN collect([t.term, t.df]) AS terms
}
RETURN c.docs AS docs, c.tokens AS tokens, terms
