-- Each agent's score beside its key, so that collecting the agents with a skill or tag and
-- ordering them by reputation reads this small index instead of every agent's whole row (whose
-- evaluation JSON is most of it).
CREATE INDEX agent_reputation_key_score ON agent_reputation (agent_key, score);
