-- Each word of each agent's search text with its weight (issue #36): a full-text search ranks
-- its best matches by reading each word's heaviest agents first, instead of scoring every agent
-- that matches (bm25 over 6,559 matches of "translate tag7" took 17 ms at a million agents).
-- Written with the search row by the documents' writer (`documents/search_postings.rs` says how
-- words are weighed); filled here from the full-text index itself, its own words and fields.
-- Agents are numbered (`search_agents`) so the lists hold small integers, not keys: looking
-- an agent up in a word's list costs half as much, and ties in relevance go to the lower number.
CREATE TABLE search_agents (
    doc       INTEGER PRIMARY KEY,
    agent_key TEXT NOT NULL UNIQUE
);

-- Kept in word order, so looking agents up in one word's list reads neighbouring pages;
-- `agent_postings_impact` reads a word's agents heaviest first, `agent_postings_doc` finds an
-- agent's words to replace them.
CREATE TABLE agent_postings (
    doc    INTEGER NOT NULL,
    term   TEXT NOT NULL,
    weight INTEGER NOT NULL,
    PRIMARY KEY (term, doc)
) WITHOUT ROWID;

CREATE INDEX agent_postings_impact ON agent_postings (term, weight DESC, doc);
CREATE INDEX agent_postings_doc ON agent_postings (doc);

INSERT OR IGNORE INTO search_agents (doc, agent_key)
SELECT rowid, agent_key FROM agent_search ORDER BY rowid;

CREATE VIRTUAL TABLE temp.agent_search_instances USING fts5vocab(main, agent_search, instance);

INSERT OR IGNORE INTO agent_postings (doc, term, weight)
SELECT v.doc, v.term,
       CAST(round(1000.0 * v.name * 2.2 / (v.name + 1.2)
                  + 400.0 * v.listed * 2.2 / (v.listed + 1.2)
                  + 200.0 * v.described * 2.2 / (v.described + 1.2)) AS INTEGER)
  FROM (SELECT doc, term,
               sum(col = 'name') AS name,
               sum(col IN ('skills', 'tags')) AS listed,
               sum(col = 'description') AS described
          FROM temp.agent_search_instances
         GROUP BY doc, term) v
 WHERE v.doc IN (SELECT doc FROM search_agents);

DROP TABLE temp.agent_search_instances;
