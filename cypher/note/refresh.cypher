// Derived data of notes changes without a version (a turn's neighbourhood, as later turns of its session arrive; the
// state of its analysis): the values apply, the note's version and update time stay, and when the neighbourhood
// changes the write's time joins `neighbourhood_after`, by which as-of reads cut the text back (core/timeline.py). Each row returns the note's text fields ($fields) as
// they were before it, for the tenant's BM25 statistics (store/neo4j_text.py).
UNWIND $revisions AS u
MATCH (n:Note {id: u.id, tenant: $tenant})
WITH n, u, [field IN $fields | n[field]] AS texts
SET n += u.values,
    n.neighbourhood_after = CASE WHEN u.values.neighbourhood IS NULL THEN n.neighbourhood_after
                                 ELSE coalesce(n.neighbourhood_after, []) + $now END
RETURN n.id AS note_id, n.version AS version, texts
