// The exact passage search (note/passage_search_exact) reads one tenant's passages.
CREATE RANGE INDEX passage_tenant IF NOT EXISTS FOR (p:Passage) ON (p.tenant)
