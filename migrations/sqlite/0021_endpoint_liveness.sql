-- Endpoint liveness (issue #33): what the prober saw of the endpoints agents declare. This
-- instance's observations, not chain facts: no stage writes these tables and a rewind leaves
-- them alone.
CREATE TABLE probe_targets (
    agent_key        TEXT NOT NULL,
    kind             TEXT NOT NULL,
    url              TEXT NOT NULL,
    source           TEXT NOT NULL,
    protocol_version TEXT,
    PRIMARY KEY (agent_key, kind, url)
) WITHOUT ROWID;
CREATE INDEX probe_targets_endpoint ON probe_targets (kind, url);

CREATE TABLE probe_endpoints (
    kind             TEXT    NOT NULL,
    url              TEXT    NOT NULL,
    status           TEXT    NOT NULL,
    reason           TEXT,
    error            TEXT,
    failures         INTEGER NOT NULL,
    checked_at       INTEGER,
    next_probe_at    INTEGER NOT NULL,
    shuffle          INTEGER NOT NULL,
    last_ok_at       INTEGER,
    latency_ms       INTEGER,
    http_status      INTEGER,
    protocol_version TEXT,
    detail           TEXT,
    PRIMARY KEY (kind, url)
) WITHOUT ROWID;
-- Due first, and among endpoints due at once in a random order (`shuffle`, drawn when the
-- endpoint is added), so a page of them spreads over many hosts.
CREATE INDEX probe_endpoints_due ON probe_endpoints (next_probe_at, shuffle);

CREATE TABLE probe_results (
    kind        TEXT    NOT NULL,
    url         TEXT    NOT NULL,
    checked_at  INTEGER NOT NULL,
    status      TEXT    NOT NULL,
    reason      TEXT,
    latency_ms  INTEGER,
    http_status INTEGER,
    PRIMARY KEY (kind, url, checked_at)
) WITHOUT ROWID;
CREATE INDEX probe_results_age ON probe_results (checked_at);

CREATE TABLE probe_daily (
    kind           TEXT    NOT NULL,
    url            TEXT    NOT NULL,
    day            INTEGER NOT NULL,
    probes         INTEGER NOT NULL,
    answered       INTEGER NOT NULL,
    latency_p50_ms INTEGER,
    latency_max_ms INTEGER,
    PRIMARY KEY (kind, url, day)
) WITHOUT ROWID;

CREATE TABLE agent_liveness (
    agent_key      TEXT    NOT NULL PRIMARY KEY,
    status         TEXT    NOT NULL,
    reachable      INTEGER NOT NULL,
    last_seen      INTEGER,
    checked_at     INTEGER,
    uptime_24h     REAL,
    uptime_7d      REAL,
    latency_p50_ms INTEGER,
    x402_live      INTEGER NOT NULL,
    x402_detail    TEXT,
    extended_card  TEXT
) WITHOUT ROWID;

CREATE TABLE agent_capabilities (
    agent_key   TEXT NOT NULL,
    kind        TEXT NOT NULL,
    key         TEXT NOT NULL,
    name        TEXT NOT NULL,
    description TEXT,
    PRIMARY KEY (agent_key, kind, key)
) WITHOUT ROWID;
CREATE INDEX agent_capabilities_lookup ON agent_capabilities (kind, key, agent_key);
