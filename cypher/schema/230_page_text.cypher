// Pages by their words (Lucene's English analyzer), so a context finds a turn in any segment, not only in
// the few segments closest to the query; `neighbourhood` (the turns around a page) as for notes.
CREATE FULLTEXT INDEX page_text IF NOT EXISTS FOR (p:Page) ON EACH [p.user_text, p.assistant_text, p.neighbourhood]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'english'}}
