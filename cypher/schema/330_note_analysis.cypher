// The analysis queue (cypher/analysis/) finds the pending notes of every tenant by their analysis.
CREATE RANGE INDEX note_analysis IF NOT EXISTS FOR (n:Note) ON (n.analysis)
