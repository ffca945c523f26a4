-- Endpoint liveness (issue #33): what the prober saw of the endpoints agents declare. This
-- instance's observations, not chain facts: no stage writes these tables and a rewind leaves
-- them alone.
CREATE TABLE probe_targets (
    agent_key        TEXT COLLATE "C" NOT NULL,
    kind             TEXT COLLATE "C" NOT NULL,
    url              TEXT COLLATE "C" NOT NULL,
    source           TEXT COLLATE "C" NOT NULL,
    protocol_version TEXT COLLATE "C",
    PRIMARY KEY (agent_key, kind, url)
);
CREATE INDEX probe_targets_endpoint ON probe_targets (kind, url);

CREATE TABLE probe_endpoints (
    kind             TEXT COLLATE "C"    NOT NULL,
    url              TEXT COLLATE "C"    NOT NULL,
    status           TEXT COLLATE "C"    NOT NULL,
    reason           TEXT COLLATE "C",
    error            TEXT COLLATE "C",
    failures         BIGINT NOT NULL,
    checked_at       BIGINT,
    next_probe_at    BIGINT NOT NULL,
    shuffle          BIGINT NOT NULL,
    last_ok_at       BIGINT,
    latency_ms       BIGINT,
    http_status      BIGINT,
    protocol_version TEXT COLLATE "C",
    detail           TEXT COLLATE "C",
    PRIMARY KEY (kind, url)
);
-- Due first, and among endpoints due at once in a random order (`shuffle`, drawn when the
-- endpoint is added), so a page of them spreads over many hosts.
CREATE INDEX probe_endpoints_due ON probe_endpoints (next_probe_at, shuffle);

CREATE TABLE probe_results (
    kind        TEXT COLLATE "C"    NOT NULL,
    url         TEXT COLLATE "C"    NOT NULL,
    checked_at  BIGINT NOT NULL,
    status      TEXT COLLATE "C"    NOT NULL,
    reason      TEXT COLLATE "C",
    latency_ms  BIGINT,
    http_status BIGINT,
    PRIMARY KEY (kind, url, checked_at)
);
CREATE INDEX probe_results_age ON probe_results (checked_at);

CREATE TABLE probe_daily (
    kind           TEXT COLLATE "C"    NOT NULL,
    url            TEXT COLLATE "C"    NOT NULL,
    day            BIGINT NOT NULL,
    probes         BIGINT NOT NULL,
    answered       BIGINT NOT NULL,
    latency_p50_ms BIGINT,
    latency_max_ms BIGINT,
    PRIMARY KEY (kind, url, day)
);

CREATE TABLE agent_liveness (
    agent_key      TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    status         TEXT COLLATE "C"    NOT NULL,
    reachable      BIGINT NOT NULL,
    last_seen      BIGINT,
    checked_at     BIGINT,
    uptime_24h     DOUBLE PRECISION,
    uptime_7d      DOUBLE PRECISION,
    latency_p50_ms BIGINT,
    x402_live      BIGINT NOT NULL,
    x402_detail    TEXT COLLATE "C",
    extended_card  TEXT COLLATE "C"
);

CREATE TABLE agent_capabilities (
    agent_key   TEXT COLLATE "C" NOT NULL,
    kind        TEXT COLLATE "C" NOT NULL,
    key         TEXT COLLATE "C" NOT NULL,
    name        TEXT COLLATE "C" NOT NULL,
    description TEXT COLLATE "C",
    PRIMARY KEY (agent_key, kind, key)
);
CREATE INDEX agent_capabilities_lookup ON agent_capabilities (kind, key, agent_key);
