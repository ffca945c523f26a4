-- The place of each lint in its document's report (see migrations/sqlite/0013).
ALTER TABLE document_lints ADD COLUMN position BIGINT NOT NULL DEFAULT 0;
