-- Each word of each agent's search text with its weight (issue #36): a full-text search ranks
-- its best matches by reading each word's heaviest agents first, instead of scoring every agent
-- that matches. Written with the search row by the documents' writer
-- (`documents/search_postings.rs` says how words are weighed); filled here from the weighted
-- tsvector of each search row (A the name, B skills and tags, C the description). Its words are
-- PostgreSQL's parser's until the agent's profile is next rebuilt. Agents are numbered
-- (`search_agents`) so the lists hold small integers, not keys; ties in relevance go to the
-- lower number.
CREATE TABLE search_agents (
    doc       BIGINT PRIMARY KEY,
    agent_key TEXT COLLATE "C" NOT NULL UNIQUE
);

CREATE TABLE agent_postings (
    doc    BIGINT NOT NULL,
    term   TEXT COLLATE "C" NOT NULL,
    weight BIGINT NOT NULL,
    PRIMARY KEY (term, doc)
);

-- A word's agents heaviest first; an agent's words, to replace them.
CREATE INDEX agent_postings_impact ON agent_postings (term, weight DESC, doc);
CREATE INDEX agent_postings_doc ON agent_postings (doc);

INSERT INTO search_agents (doc, agent_key)
SELECT row_number() OVER (ORDER BY agent_key), agent_key
  FROM (SELECT DISTINCT agent_key FROM agent_search) k;

INSERT INTO agent_postings (doc, term, weight)
SELECT d.doc, u.lexeme,
       CAST(round(CAST(1000.0 * c.name * 2.2 / (c.name + 1.2)
                       + 400.0 * c.listed * 2.2 / (c.listed + 1.2)
                       + 200.0 * c.described * 2.2 / (c.described + 1.2) AS NUMERIC)) AS BIGINT)
  FROM agent_search s
  JOIN search_agents d ON d.agent_key = s.agent_key
 CROSS JOIN LATERAL unnest(s.document) u
 CROSS JOIN LATERAL (
       SELECT count(*) FILTER (WHERE w = 'A') AS name,
              count(*) FILTER (WHERE w = 'B') AS listed,
              count(*) FILTER (WHERE w IN ('C', 'D')) AS described
         FROM unnest(u.weights) w) c
ON CONFLICT DO NOTHING;
