//! Opening a PostgreSQL database: its migrations (`migrations/postgres/`), the writer's and the
//! readers' pools, and the advisory lock that keeps a chain to one writer.
//!
//! One `index` process writes a chain; any number of `serve` processes, on any machine, read.
//! The writer takes a session-level advisory lock per chain when it starts the chain, on its
//! one connection, and checks it again inside every batch's transaction: a second writer is
//! refused at its start (after a few seconds' wait, in which a crashed predecessor's
//! connection finishes closing), and a writer whose connection was replaced (and lost its
//! lock) finds out before it writes.
//!
//! Writers of different chains share one database, and two tables of every chain: each
//! process's documents worker rewrites the profiles (skills and tags, and so the term lists of
//! `agent_terms`) of every agent, and each chain's writer rescores its own. The term lists
//! carry a copy of each agent's score, kept by triggers, and two such transactions run side by
//! side under READ COMMITTED can each miss the other's rows (a profile rewritten with the old
//! score while the score changes). So every transaction that writes scores or profiles first
//! waits for its turn ([`take_scores_turn`]): one at a time across every process.

use super::{QueryContext, StoreError, StoreResult};
use sqlx::any::AnyPoolOptions;
use sqlx::{AnyConnection, AnyPool, Connection};
use std::time::Duration;

/// PostgreSQL's migrations (`migrations/postgres/`).
pub(super) static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("../migrations/postgres");

/// The first key of agentindex's advisory locks (the second is the chain id): "agix".
const LOCK_NAMESPACE: i32 = 0x6167_6978;

/// The advisory lock (its two keys) that transactions writing agents' scores or profiles take in
/// turn on PostgreSQL, held to the transaction's end ([`take_scores_turn`]). A tool that writes
/// either outside agentindex takes it too.
pub const SCORES_TURN_LOCK: (i32, i32) = (LOCK_NAMESPACE + 1, 0);

/// Connections of the read pool of each process.
const READ_CONNECTIONS: u32 = 16;

/// How long a connection may take to open.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// A read connection idle at least this long is checked (one round trip to the server) before
/// it is handed out; one in steady use is not. sqlx checks every connection at every hand-out
/// by default, a round trip per statement: at thousands of lookups a second a third of the
/// server's messages. A server restarted drops every connection and is down for longer than
/// this, so the connections it dropped are checked and replaced before use.
const READ_IDLE_CHECK: Duration = Duration::from_secs(1);

/// The pools of an open PostgreSQL store.
pub(super) struct Opened {
    pub(super) write: AnyPool,
    pub(super) read: AnyPool,
}

/// Connects to the database at `url` and brings its schema up to date. Migrations hold
/// PostgreSQL's own advisory lock while they run, so processes started together wait for one
/// another.
pub(super) async fn open(url: &str, read_timeout: Option<Duration>) -> StoreResult<Opened> {
    let open_error = |source| StoreError::Open {
        url: crate::redact::url(url),
        source,
    };
    // One attempt first: a refused connection, an unknown host or a wrong password is said at
    // once, where the pool would try again until its acquire timeout.
    match tokio::time::timeout(CONNECT_TIMEOUT, AnyConnection::connect(url)).await {
        Ok(Ok(first)) => drop(first.close().await),
        Ok(Err(refused)) => return Err(open_error(refused)),
        Err(_) => {
            let silent = std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                format!("no answer within {CONNECT_TIMEOUT:?}"),
            );
            return Err(open_error(sqlx::Error::Io(silent)));
        }
    }
    // The writer's one connection lives as long as the store: it holds the chains' locks.
    let write = AnyPoolOptions::new()
        .after_connect(|conn, _| Box::pin(settle_connection(conn)))
        .max_connections(1)
        .min_connections(1)
        .idle_timeout(None)
        .max_lifetime(None)
        .acquire_timeout(CONNECT_TIMEOUT)
        .connect(url)
        .await
        .map_err(open_error)?;
    MIGRATOR
        .run(&write)
        .await
        .map_err(|source| StoreError::Migrate {
            url: crate::redact::url(url),
            source,
        })?;
    let read = AnyPoolOptions::new()
        .after_connect(move |conn, _| {
            Box::pin(async move {
                read_pages(conn).await?;
                match read_timeout {
                    Some(limit) => limit_statements(conn, limit).await,
                    None => Ok(()),
                }
            })
        })
        .test_before_acquire(false)
        .before_acquire(|conn, held| {
            Box::pin(async move {
                if held.idle_for >= READ_IDLE_CHECK {
                    conn.ping().await?;
                }
                Ok(true)
            })
        })
        .max_connections(READ_CONNECTIONS)
        .acquire_timeout(CONNECT_TIMEOUT)
        .connect(url)
        .await
        .map_err(open_error)?;
    Ok(Opened { write, read })
}

/// Sets up the writer's connection: every statement planned for its own values. sqlx prepares
/// each statement once per connection, and after five runs PostgreSQL may settle on a plan made
/// for no values in particular: for the store's lookups of a few hundred agents (`token_id IN
/// (…)`) that plan scans the table, 300 ms a batch late in a backfill instead of a fraction of
/// a millisecond through the index. (Read connections keep PostgreSQL's own choice, see
/// [`read_pages`].)
async fn settle_connection(conn: &mut AnyConnection) -> sqlx::Result<()> {
    sqlx::query("SET plan_cache_mode = force_custom_plan")
        .execute(conn)
        .await
        .map(|_| ())
}

/// Sets up a connection of the read pool (the API's, and the indexer's own reads): each
/// statement planned without parallel workers. A request's statements read a page; starting
/// workers for them costs more than it saves (milliseconds each), and at hundreds of requests
/// a second the workers only take cores from the other requests. Plans are left to
/// PostgreSQL's own choice (`plan_cache_mode = auto`): a statement whose plan does not depend on
/// its values is planned once per connection instead of at every request (planning took twice
/// as long as running a lookup by id, 0.2 ms against 0.1), so the API's statements are written
/// to be read by key whatever values they are planned for (`api/src/read/ranked_search.rs`), or
/// sent unprepared, planned at every run, where the best plan turns on the values
/// (`api/src/read/agents.rs`).
async fn read_pages(conn: &mut AnyConnection) -> sqlx::Result<()> {
    sqlx::query("SET max_parallel_workers_per_gather = 0")
        .execute(conn)
        .await
        .map(|_| ())
}

/// Makes the server cancel any statement of this connection that runs longer than `limit`
/// (SQLSTATE 57014, "canceling statement due to statement timeout"); the connection stays
/// usable for the next statement.
async fn limit_statements(conn: &mut AnyConnection, limit: Duration) -> sqlx::Result<()> {
    // SET takes no bind parameters; the value is a number of milliseconds we formatted.
    sqlx::query(&format!("SET statement_timeout = {}", limit.as_millis()))
        .execute(conn)
        .await
        .map(|_| ())
}

/// How long a writer waits for a chain's lock before it refuses to start: a writer restarted
/// right after a crash finds its predecessor's connection still closing on the server.
const LOCK_WAIT: Duration = Duration::from_secs(5);
/// How often the lock is asked for meanwhile.
const LOCK_RETRY: Duration = Duration::from_millis(100);

/// Takes the lock that makes this connection `chain_id`'s only writer, or says who holds it.
pub(super) async fn lock_chain(conn: &mut AnyConnection, chain_id: u64) -> StoreResult<()> {
    let chain = chain_key(chain_id);
    let deadline = tokio::time::Instant::now() + LOCK_WAIT;
    loop {
        let taken: bool = sqlx::query_scalar("SELECT pg_try_advisory_lock($1, $2)")
            .bind(LOCK_NAMESPACE)
            .bind(chain)
            .fetch_one(&mut *conn)
            .await
            .context("taking the chain's writer lock")?;
        if taken {
            return Ok(());
        }
        if tokio::time::Instant::now() >= deadline {
            break;
        }
        tokio::time::sleep(LOCK_RETRY).await;
    }
    let holder: Option<(i32, Option<String>, Option<String>)> = sqlx::query_as(
        "SELECT a.pid, a.client_addr::text, a.application_name
           FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
          WHERE l.locktype = 'advisory' AND l.classid = $1::oid AND l.objid = $2::oid
            AND l.granted
          LIMIT 1",
    )
    .bind(i64::from(LOCK_NAMESPACE))
    .bind(i64::from(chain_id as u32))
    .fetch_optional(&mut *conn)
    .await
    .context("finding the chain's writer")?;
    Err(StoreError::SecondWriter {
        chain_id,
        holder: holder.map_or_else(
            || "another process".to_string(),
            |(pid, addr, _)| match addr {
                Some(addr) => format!("process {pid} (connected from {addr})"),
                None => format!("process {pid} (on the database's own machine)"),
            },
        ),
    })
}

/// Checks, inside a batch's transaction, that this connection still holds `chain_id`'s lock,
/// and takes it again if the connection was replaced and nobody else took it meanwhile.
pub(super) async fn still_writer(conn: &mut AnyConnection, chain_id: u64) -> StoreResult<()> {
    let held: bool = sqlx::query_scalar(
        "SELECT EXISTS (SELECT 1 FROM pg_locks
                         WHERE locktype = 'advisory' AND pid = pg_backend_pid()
                           AND classid = $1::oid AND objid = $2::oid AND granted)",
    )
    .bind(i64::from(LOCK_NAMESPACE))
    .bind(i64::from(chain_id as u32))
    .fetch_one(&mut *conn)
    .await
    .context("checking the chain's writer lock")?;
    if held {
        Ok(())
    } else {
        lock_chain(conn, chain_id).await
    }
}

/// Waits, at the start of a transaction that writes agents' scores or profiles, until no other
/// such transaction of any process runs, and holds the turn to the transaction's end. Taken
/// before the transaction locks any row, so two turns never wait on each other's rows.
pub(super) async fn take_scores_turn(conn: &mut AnyConnection) -> StoreResult<()> {
    sqlx::query("SELECT pg_advisory_xact_lock($1, $2)")
        .bind(SCORES_TURN_LOCK.0)
        .bind(SCORES_TURN_LOCK.1)
        .execute(conn)
        .await
        .context("waiting for the turn to write scores and profiles")?;
    Ok(())
}

/// The lock's second key: the chain id, folded into 32 bits (chain ids above 2^31 share a lock
/// with another chain's, which only costs them running side by side).
fn chain_key(chain_id: u64) -> i32 {
    (chain_id as u32) as i32
}
