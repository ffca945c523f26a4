//! Which endpoints each agent declares, brought in line with its documents: the cards it links
//! (each an `a2a_card`, at the URL the card was last served from; a card found from a base URL
//! once it was found), those cards' JSON-RPC and HTTP+JSON interfaces, its registration
//! file's MCP and web services, and the x402 resources its card's payment terms name. At most
//! [`PER_AGENT`] endpoints an agent, http(s) only. Endpoints no agent declares any more are
//! dropped with their state; new ones are due at once.

use super::summaries;
use crate::schema::{
    agent_capabilities, agent_documents, agent_liveness, documents, probe_daily, probe_endpoints,
    probe_results, probe_targets,
};
use crate::store::{Dialect, QueryContext, StoreResult};
use sqlx::AnyConnection;

/// Endpoints probed at most per agent: a registration that lists hundreds does not buy
/// hundreds of probes.
const PER_AGENT: i64 = 16;
/// Agents without a summary yet given one per sync at most (the rest at the next).
const NEW_SUMMARIES_PER_SYNC: i64 = 2_000;

/// What an endpoints sync did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Synced {
    /// Endpoints declared.
    pub(crate) declared: u64,
    /// False when agents were left without a summary (at most [`NEW_SUMMARIES_PER_SYNC`] get
    /// one per sync): the next sync gives them theirs.
    pub(crate) complete: bool,
}

/// Brings the endpoints in line with the documents when `declarations_changed` (see
/// [`retarget`]), then summarises agents that have none yet, at most
/// [`NEW_SUMMARIES_PER_SYNC`].
pub(crate) async fn sync(
    conn: &mut AnyConnection,
    now: i64,
    declarations_changed: bool,
) -> StoreResult<Synced> {
    if declarations_changed {
        retarget(conn, now).await?;
    }
    let complete = summarise_new(conn, now).await?;
    let declared: i64 = sqlx::query_scalar(&format!(
        "SELECT count(*) FROM {endpoints}",
        endpoints = probe_endpoints::NAME
    ))
    .fetch_one(&mut *conn)
    .await
    .context("counting endpoints to probe")?;
    Ok(Synced {
        declared: declared as u64,
        complete,
    })
}

/// Recomputes `probe_targets` from the documents, adds the new endpoints (due at `now`) and
/// drops what no agent declares. It reads every document an agent links, so the writer runs it
/// only when one of them or a link changed.
async fn retarget(conn: &mut AnyConnection, now: i64) -> StoreResult<()> {
    let dialect = Dialect::of(conn);
    for statement in [
        "CREATE TEMP TABLE IF NOT EXISTS wanted_probes \
         (agent_key TEXT, kind TEXT, url TEXT, source TEXT, protocol_version TEXT)",
        "DELETE FROM wanted_probes",
    ] {
        sqlx::query(statement)
            .execute(&mut *conn)
            .await
            .context("preparing the endpoints to probe")?;
    }
    // http(s) only, of a sane length (a longer one cannot be a key on PostgreSQL).
    let web = "((lower(substr(trim({u}), 1, 8)) = 'https://' OR lower(substr(trim({u}), 1, 7)) = 'http://') \
               AND length({u}) <= 2000)";
    let is_web = |column: &str| web.replace("{u}", column);
    let field = |value: &str, key: &str| dialect.json_field(value, key);
    let (url, binding, version) = (
        field("i.value", "url"),
        field("i.value", "binding"),
        field("i.value", "version"),
    );
    let (endpoint, name, service_version) = (
        field("s.value", "endpoint"),
        field("s.value", "name"),
        field("s.value", "version"),
    );
    let resource = field("p.value", "resource");
    let sql = format!(
        "INSERT INTO wanted_probes
         SELECT DISTINCT l.agent_key, 'a2a_card', trim(coalesce(d.source, l.uri)), 'card', NULL
           FROM {links} l
           LEFT JOIN {docs} d ON d.uri = l.uri AND d.expect = l.expect
           WHERE l.role = 'card' AND (d.source IS NOT NULL OR l.expect = 'card') AND {card_is_web}
         UNION
         SELECT DISTINCT l.agent_key,
             CASE upper({binding}) WHEN 'JSONRPC' THEN 'a2a_jsonrpc' ELSE 'a2a_rest' END,
             trim({url}), 'card', {version}
           FROM {links} l
           JOIN {docs} d ON d.uri = l.uri AND d.expect = l.expect AND d.kind = 'card'
             AND {readable}
           CROSS JOIN {interfaces}
           WHERE l.role = 'card' AND upper({binding}) IN ('JSONRPC', 'HTTP+JSON') AND {url_is_web}
         UNION
         SELECT DISTINCT l.agent_key, lower({name}), trim({endpoint}), 'registration', {service_version}
           FROM {links} l
           JOIN {docs} d ON d.uri = l.uri AND d.expect = l.expect AND d.kind = 'registration'
             AND {readable}
           CROSS JOIN {services}
           WHERE l.role IN ('registration', 'metadata') AND lower({name}) IN ('mcp', 'web')
             AND {endpoint_is_web}
         UNION
         SELECT DISTINCT l.agent_key, 'x402', trim({resource}), 'payment', NULL
           FROM {links} l
           JOIN {docs} d ON d.uri = l.uri AND d.expect = l.expect AND d.kind = 'card'
             AND {readable}
           CROSS JOIN {payments}
           WHERE l.role = 'card' AND {resource_is_web}",
        links = agent_documents::NAME,
        docs = documents::NAME,
        card_is_web = is_web("coalesce(d.source, l.uri)"),
        url_is_web = is_web(&url),
        endpoint_is_web = is_web(&endpoint),
        resource_is_web = is_web(&resource),
        // A projection holding an escaped NUL does not read as PostgreSQL's jsonb: skipped.
        readable = "d.projection NOT LIKE '%\\u0000%' ESCAPE '!'",
        interfaces = dialect.json_items("d.projection", "interfaces", "i"),
        services = dialect.json_items("d.projection", "services", "s"),
        payments = dialect.json_items("d.projection", "payments", "p"),
    );
    sqlx::query(&sql)
        .execute(&mut *conn)
        .await
        .context("listing the endpoints agents declare")?;
    // Each (agent, kind, url) once, then at most PER_AGENT an agent, one of each kind first.
    let capped = format!(
        "SELECT agent_key, kind, url, source, protocol_version
         FROM (SELECT d.*, ROW_NUMBER() OVER (PARTITION BY agent_key ORDER BY kind_rank, kind, url) AS n
               FROM (SELECT agent_key, kind, url, min(source) AS source,
                       min(protocol_version) AS protocol_version,
                       ROW_NUMBER() OVER (PARTITION BY agent_key, kind ORDER BY url) AS kind_rank
                     FROM wanted_probes GROUP BY agent_key, kind, url) d) ranked
         WHERE n <= {PER_AGENT}"
    );
    // Endpoints no agent declares any more: their outcomes go before they do.
    let orphans = format!(
        "SELECT e.kind, e.url FROM {endpoints} e WHERE NOT EXISTS
           (SELECT 1 FROM {targets} t WHERE t.kind = e.kind AND t.url = e.url)",
        endpoints = probe_endpoints::NAME,
        targets = probe_targets::NAME,
    );
    let statements = [
        (
            format!(
                "DELETE FROM {targets} WHERE (agent_key, kind, url) NOT IN
                   (SELECT agent_key, kind, url FROM ({capped}) wanted)",
                targets = probe_targets::NAME
            ),
            "dropping endpoints no longer declared",
            None,
        ),
        (
            format!(
                "INSERT INTO {targets} (agent_key, kind, url, source, protocol_version)
                 SELECT agent_key, kind, url, source, protocol_version FROM ({capped}) wanted WHERE true
                 ON CONFLICT (agent_key, kind, url) DO UPDATE
                   SET source = excluded.source, protocol_version = excluded.protocol_version",
                targets = probe_targets::NAME
            ),
            "adding declared endpoints",
            None,
        ),
        (
            format!(
                "INSERT INTO {endpoints} (kind, url, status, failures, next_probe_at, shuffle)
                 SELECT kind, url, 'pending', 0, $1, {shuffle}
                 FROM (SELECT DISTINCT t.kind, t.url FROM {targets} t
                 WHERE NOT EXISTS (SELECT 1 FROM {endpoints} e WHERE e.kind = t.kind AND e.url = t.url)) new",
                targets = probe_targets::NAME,
                endpoints = probe_endpoints::NAME,
                shuffle = dialect.random_below(1 << 30),
            ),
            "adding endpoints to probe",
            // Bound, not written into the text, so its compiled form is kept once, not once
            // per sync.
            Some(now),
        ),
        (
            format!(
                "DELETE FROM {results} WHERE (kind, url) IN ({orphans})",
                results = probe_results::NAME,
            ),
            "dropping the outcomes of endpoints no agent declares",
            None,
        ),
        (
            format!(
                "DELETE FROM {daily} WHERE (kind, url) IN ({orphans})",
                daily = probe_daily::NAME,
            ),
            "dropping the daily outcomes of endpoints no agent declares",
            None,
        ),
        (
            format!(
                "DELETE FROM {endpoints} WHERE NOT EXISTS
                   (SELECT 1 FROM {targets} t WHERE t.kind = {endpoints}.kind AND t.url = {endpoints}.url)",
                targets = probe_targets::NAME,
                endpoints = probe_endpoints::NAME,
            ),
            "dropping endpoints no agent declares",
            None,
        ),
        (
            format!(
                "DELETE FROM {summaries_table} WHERE agent_key NOT IN (SELECT agent_key FROM {targets})",
                summaries_table = agent_liveness::NAME,
                targets = probe_targets::NAME,
            ),
            "dropping the liveness of agents without endpoints",
            None,
        ),
        (
            format!(
                "DELETE FROM {tools} WHERE agent_key NOT IN (SELECT agent_key FROM {targets})",
                tools = agent_capabilities::NAME,
                targets = probe_targets::NAME,
            ),
            "dropping the capabilities of agents without endpoints",
            None,
        ),
    ];
    for (statement, context, due_at) in statements {
        let query = sqlx::query(&statement);
        let query = match due_at {
            Some(at) => query.bind(at),
            None => query,
        };
        query.execute(&mut *conn).await.context(context)?;
    }
    Ok(())
}

/// Summarises agents that have no summary yet, at most [`NEW_SUMMARIES_PER_SYNC`]; says
/// whether none is left without one.
async fn summarise_new(conn: &mut AnyConnection, now: i64) -> StoreResult<bool> {
    let unsummarised: Vec<String> = sqlx::query_scalar(&format!(
        "SELECT DISTINCT agent_key FROM {targets}
         WHERE agent_key NOT IN (SELECT agent_key FROM {summaries_table})
         ORDER BY agent_key LIMIT {NEW_SUMMARIES_PER_SYNC}",
        targets = probe_targets::NAME,
        summaries_table = agent_liveness::NAME,
    ))
    .fetch_all(&mut *conn)
    .await
    .context("listing agents without a liveness summary")?;
    summaries::recompute(conn, &unsummarised, now).await?;
    Ok(unsummarised.len() < NEW_SUMMARIES_PER_SYNC as usize)
}
