// Lucene's English analyzer: stemming and stop words. keywords and tags are string lists, indexed per item.
CREATE FULLTEXT INDEX note_text IF NOT EXISTS FOR (n:Note) ON EACH [n.content, n.context, n.keywords, n.tags]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'english'}}
