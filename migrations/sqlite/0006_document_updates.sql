-- Updates that come from documents rather than the chain: each time what an agent's documents
-- say changes (profile or skills), the agent's profile takes the next `document_seq`, so the
-- API's change feed can report agents updated off-chain. `document_digest` is what was said, to
-- tell a real change from a recomputation that changed nothing.
ALTER TABLE agent_profiles ADD COLUMN document_digest TEXT;
ALTER TABLE agent_profiles ADD COLUMN document_seq INTEGER NOT NULL DEFAULT 0;
CREATE INDEX agent_profiles_document_seq ON agent_profiles (document_seq);
