// Lucene's English analyzer: stemming and stop words. keywords and tags are string lists, indexed per item.
// `neighbourhood` (the turns around a note in its session) lets a word said just before or after match.
CREATE FULLTEXT INDEX note_text IF NOT EXISTS FOR (n:Note) ON EACH [n.content, n.context, n.keywords, n.tags, n.neighbourhood]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'english'}}
