// A tenant's BM25 statistics (store/neo4j_text.py): one Term per word of an index, MERGEd on this constraint.
CREATE CONSTRAINT term_unique IF NOT EXISTS FOR (t:Term) REQUIRE (t.tenant, t.index, t.term) IS UNIQUE
