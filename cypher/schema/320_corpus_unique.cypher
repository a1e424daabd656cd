// One Corpus (a tenant's document and term counts of one fulltext index) per tenant and index.
CREATE CONSTRAINT corpus_unique IF NOT EXISTS FOR (c:Corpus) REQUIRE (c.tenant, c.index) IS UNIQUE
