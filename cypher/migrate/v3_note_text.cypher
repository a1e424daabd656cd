// Schema 3 indexes `neighbourhood` too: the older fulltext index is dropped, then made anew by schema/.
DROP INDEX note_text IF EXISTS
