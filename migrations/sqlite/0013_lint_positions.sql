-- The place of each lint in its document's report, so every database lists them in the order
-- the checker found them (SQLite's rowid did that alone; PostgreSQL has no such order).
ALTER TABLE document_lints ADD COLUMN position INTEGER NOT NULL DEFAULT 0;
