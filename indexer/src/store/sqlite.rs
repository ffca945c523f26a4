//! Opening a SQLite database: the file, its lock while it is set up, its migrations
//! (`migrations/sqlite/`), the connection settings of the writer and the readers, the WAL
//! checkpoints, and online backups.

use super::checkpoint::Checkpointer;
use super::sqlite_guard;
use super::{OpenOptions, StoreError, StoreResult};
use sqlx::any::AnyPoolOptions;
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};
use sqlx::{AnyPool, Executor};
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

/// SQLite's migrations (`migrations/sqlite/`).
pub static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("../migrations/sqlite");

/// What only a SQLite store holds: a connection of its own for WAL checkpoints and backups,
/// the task that checkpoints, and the file's descriptor.
#[derive(Debug, Clone)]
pub(super) struct SqliteParts {
    pub(super) native: SqlitePool,
    pub(super) checkpointer: Checkpointer,
    /// The descriptor the set-up lock was taken on, kept open as long as the store: closing any
    /// descriptor of the database file drops every POSIX lock this process holds on it,
    /// SQLite's own included, and another process could then checkpoint and delete the
    /// write-ahead log under this one's connections (a corrupt database).
    _file: Arc<std::fs::File>,
}

/// The pools of an open SQLite store: the writer's one connection, the readers', and the rest.
pub(super) struct Opened {
    pub(super) write: AnyPool,
    pub(super) read: AnyPool,
    pub(super) read_low: Option<AnyPool>,
    pub(super) parts: SqliteParts,
}

/// Opens (creating if missing) and migrates the database at `url`; each statement of the read
/// pools is stopped `read_statement_timeout` after it starts (see `sqlite_guard`), and a
/// low-priority read pool is opened if `low_priority_readers` asks for one.
pub(super) async fn open(url: &str, open: &OpenOptions) -> StoreResult<Opened> {
    let read_limit = open.read_statement_timeout;
    let options = connect_options(url)?;
    let path = options.get_filename().to_path_buf();
    if let Some(parent) = path.parent()
        && !parent.as_os_str().is_empty()
    {
        std::fs::create_dir_all(parent).map_err(|e| StoreError::Url {
            url: url.into(),
            reason: format!("creating {}: {e}", parent.display()),
        })?;
    }
    let open_error = |source| StoreError::Open {
        url: url.into(),
        source,
    };
    // Two processes opening one new database at once (`index` and `serve` started together)
    // would both set it up and apply the first migration, and one would fail; an advisory lock
    // on the file (flock, which SQLite's own locks leave alone) makes the second wait until the
    // first has it migrated. The descriptor stays open with the store (see `_file`).
    let lock_path = path.clone();
    let lock = tokio::task::spawn_blocking(move || {
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&lock_path)?;
        file.lock()?;
        Ok::<_, std::io::Error>(file)
    })
    .await
    .map_err(std::io::Error::other)
    .and_then(|locked| locked)
    .map_err(|e| StoreError::Url {
        url: url.into(),
        reason: format!("locking the file while it is set up: {e}"),
    })?;
    // The native connection sets the file up (page size and WAL before the first table), runs
    // the migrations, and then serves checkpoints and backups.
    let native = SqlitePoolOptions::new()
        .max_connections(1)
        // Kept for the life of the store, as the other pools' are (`any_pool`).
        .idle_timeout(None)
        .max_lifetime(None)
        .connect_with(options.create_if_missing(true))
        .await
        .map_err(open_error)?;
    let migrated = MIGRATOR.run(&native).await;
    lock.unlock().map_err(|e| StoreError::Url {
        url: url.into(),
        reason: format!("unlocking the file after setting it up: {e}"),
    })?;
    migrated.map_err(|source| StoreError::Migrate {
        url: url.into(),
        source,
    })?;
    let file_url = format!("sqlite://{}", path.display());
    // Checkpoints run on the native connection (see `checkpoint`), never on the writer's.
    let wal_limit = format!("PRAGMA journal_size_limit = {WAL_SIZE_LIMIT_BYTES}");
    let write = any_pool(
        &file_url,
        "rw",
        Reads::Unlimited,
        1,
        &["PRAGMA wal_autocheckpoint = 0", &wal_limit],
    )
    .await
    .map_err(open_error)?;
    // Readers map the file: a page read is then a memory access, not a system call and a copy
    // into each connection's own cache.
    let mmap = format!("PRAGMA mmap_size = {READ_MMAP_BYTES}");
    let reader = [mmap.as_str(), READ_CACHE_PRAGMA];
    let read = any_pool(&file_url, "ro", Reads::limited(read_limit), 8, &reader)
        .await
        .map_err(open_error)?;
    let read_low = match open.low_priority_readers {
        0 => None,
        connections => {
            let low = Reads::LowPriority(read_limit);
            let pool = any_pool(&file_url, "ro", low, connections, &reader).await;
            Some(pool.map_err(open_error)?)
        }
    };
    let checkpointer = Checkpointer::spawn(native.clone());
    Ok(Opened {
        write,
        read,
        read_low,
        parts: SqliteParts {
            native,
            checkpointer,
            _file: Arc::new(lock),
        },
    })
}

/// How a pool's statements run.
#[derive(Debug, Clone, Copy)]
enum Reads {
    /// To their end, at the process's priority.
    Unlimited,
    /// Stopped this long after they start.
    Limited(Duration),
    /// On worker threads at the lowest priority, stopped after the time given, if any.
    LowPriority(Option<Duration>),
}

impl Reads {
    fn limited(limit: Option<Duration>) -> Self {
        limit.map_or(Self::Unlimited, Self::Limited)
    }
}

/// A pool of `connections` on the file at `url`, opened in `mode` (`rw` or `ro`), each
/// connection set up as the store's are and then by `extra`, and each of its statements
/// run as `reads` says.
async fn any_pool(
    url: &str,
    mode: &str,
    reads: Reads,
    connections: u32,
    extra: &[&str],
) -> sqlx::Result<AnyPool> {
    let settings: Vec<String> = CONNECTION_PRAGMAS
        .iter()
        .map(|pragma| pragma.to_string())
        .chain(extra.iter().map(|pragma| pragma.to_string()))
        .collect();
    let mut url = format!("{url}?mode={mode}");
    let (limit, low_priority) = match reads {
        Reads::Unlimited => (None, false),
        Reads::Limited(limit) => (Some(limit), false),
        Reads::LowPriority(limit) => (limit, true),
    };
    if let Some(limit) = limit {
        url = format!("{url}&{}", sqlite_guard::limit_parameter(limit));
    }
    if low_priority {
        url = format!("{url}&{}", sqlite_guard::low_priority_parameter());
    }
    AnyPoolOptions::new()
        .max_connections(connections)
        // A file has no connection to lose: sqlx's ping before handing out a connection is one
        // more round trip to its worker thread per statement, and the ping on release stays.
        .test_before_acquire(false)
        // Connections are kept for the life of the store. sqlx's defaults close a connection
        // idle for 10 minutes and any connection after 30, and each SQLite connection lives on
        // a thread of its own: a new thread every few minutes, each leaving behind the
        // allocator's pages that hold what it allocated and others still use (BENCHMARKS.md,
        // the soak: the churn is gone; whether the day's growth goes with it is not settled).
        .idle_timeout(None)
        .max_lifetime(None)
        .after_connect(move |conn, _| {
            let settings = settings.clone();
            Box::pin(async move {
                for pragma in &settings {
                    conn.execute(pragma.as_str()).await?;
                }
                Ok(())
            })
        })
        .connect(&url)
        .await
}

/// Writes a consistent copy of the database to `target` while indexing and serving go on: one
/// read transaction's snapshot, compacted (`VACUUM INTO`). Refuses an existing file.
pub(super) async fn backup(native: &SqlitePool, target: &std::path::Path) -> StoreResult<u64> {
    let failed = |reason: String| StoreError::Backup {
        target: target.display().to_string(),
        reason,
    };
    if target.exists() {
        return Err(failed("the file exists; a backup never overwrites".into()));
    }
    let name = target
        .to_str()
        .ok_or_else(|| failed("the path is not valid UTF-8".into()))?;
    sqlx::query("VACUUM INTO ?")
        .bind(name)
        .execute(native)
        .await
        .map_err(|e| failed(e.to_string()))?;
    std::fs::metadata(target)
        .map(|m| m.len())
        .map_err(|e| failed(e.to_string()))
}

/// Settings of every connection of the writer and the readers.
const CONNECTION_PRAGMAS: &[&str] = &[
    "PRAGMA busy_timeout = 30000",
    "PRAGMA synchronous = NORMAL",
    "PRAGMA cache_size = -16384",
];

/// Each reader's own page cache, after the settings every connection gets. A reader takes
/// pages of the file from its mapping, which costs no cache; the cache holds only the pages it
/// reads from the WAL (written since the last checkpoint) and so needs little. At the writer's
/// 16 MiB, up to eight readers filled theirs as a long-running indexer's WAL churned, and held
/// it: resident memory that grew in steps over hours (BENCHMARKS.md, the soak).
const READ_CACHE_PRAGMA: &str = "PRAGMA cache_size = -2048";

/// How much of the database file each reader maps into memory (address space, shared with
/// the operating system's page cache; not memory of its own): all of it, up to 1 TiB (SQLite
/// is built to allow that, `.cargo/config.toml`; its own default cap is 2 GiB).
const READ_MMAP_BYTES: &str = "1099511627776";

/// The page size of a new database (an existing one keeps its own). Twice SQLite's default:
/// a backfill appends rows in key order to every table, and larger pages mean fewer splits and
/// WAL frames per row (5% off the 210,000-event backfill; 16 KiB gained little more).
const PAGE_SIZE: u32 = 8192;

fn connect_options(url: &str) -> StoreResult<SqliteConnectOptions> {
    let path = url
        .strip_prefix("sqlite://")
        .ok_or_else(|| StoreError::Url {
            url: url.into(),
            reason: "expected sqlite://relative/path.db or sqlite:///absolute/path.db".into(),
        })?;
    if path.is_empty() {
        return Err(StoreError::Url {
            url: url.into(),
            reason: "no file path".into(),
        });
    }
    let options = SqliteConnectOptions::from_str(&format!("sqlite://{path}")).map_err(|e| {
        StoreError::Url {
            url: url.into(),
            reason: e.to_string(),
        }
    })?;
    Ok(options
        .journal_mode(SqliteJournalMode::Wal)
        .synchronous(SqliteSynchronous::Normal)
        .busy_timeout(Duration::from_secs(30))
        .page_size(PAGE_SIZE)
        .pragma("cache_size", "-16384")
        .pragma("journal_size_limit", WAL_SIZE_LIMIT_BYTES.to_string()))
}

/// The size the WAL file is cut back to when it starts over after a checkpoint. SQLite reuses
/// the file rather than shrink it, so without a limit one transaction of gigabytes (rules
/// adopted at a million agents: 6.8 GB) leaves a file that size for good; a backfill's WAL
/// between two checkpoints stays well under this.
const WAL_SIZE_LIMIT_BYTES: u64 = 64 << 20;

#[cfg(test)]
mod tests {
    /// Every reader maps as much of the file as asked: SQLite's build allows it (its own cap
    /// would silently hold each reader to 2 GiB); and keeps the small page cache it is given,
    /// not the writer's.
    #[tokio::test]
    async fn readers_map_as_much_of_the_file_as_asked() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let url = format!("sqlite://{}", dir.path().join("m.db").display());
        let store = super::super::Store::open(&url).await.expect("a store");
        let mapped: i64 = sqlx::query_scalar("PRAGMA mmap_size")
            .fetch_one(store.reader())
            .await
            .expect("the reader's mmap_size");
        assert_eq!(mapped.to_string(), super::READ_MMAP_BYTES);
        let cache: i64 = sqlx::query_scalar("PRAGMA cache_size")
            .fetch_one(store.reader())
            .await
            .expect("the reader's cache_size");
        assert_eq!(
            format!("PRAGMA cache_size = {cache}"),
            super::READ_CACHE_PRAGMA
        );
        store.close().await;
    }

    /// No pool of a SQLite store lets sqlx close its connections after a while: each ended
    /// connection ends a thread, and a new thread every few minutes left the allocator's pages
    /// of the old ones behind (see `any_pool`).
    #[tokio::test]
    async fn every_pool_keeps_its_connections() {
        super::super::install_drivers();
        let dir = tempfile::tempdir().expect("a temporary directory");
        let url = format!("sqlite://{}", dir.path().join("k.db").display());
        let options = super::OpenOptions {
            low_priority_readers: 1,
            ..super::OpenOptions::default()
        };
        let opened = super::open(&url, &options).await.expect("a store");
        let low = opened.read_low.as_ref().expect("a low-priority pool");
        let any_pools = [
            ("writer", &opened.write),
            ("readers", &opened.read),
            ("low", low),
        ];
        for (name, pool) in any_pools {
            assert_eq!(
                pool.options().get_idle_timeout(),
                None,
                "{name} idle timeout"
            );
            assert_eq!(pool.options().get_max_lifetime(), None, "{name} lifetime");
        }
        let native = opened.parts.native.options();
        assert_eq!(native.get_idle_timeout(), None, "native idle timeout");
        assert_eq!(native.get_max_lifetime(), None, "native lifetime");
    }

    /// After a transaction larger than the limit, the WAL file is cut back to the limit once a
    /// checkpoint copied it and the writer commits again.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_wal_file_is_cut_back_after_a_large_transaction() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let path = dir.path().join("w.db");
        let store = super::super::Store::open(&format!("sqlite://{}", path.display()))
            .await
            .expect("a store");
        let wal = || {
            let wal = path.with_extension("db-wal");
            std::fs::metadata(wal).map(|m| m.len()).unwrap_or(0)
        };
        let write = |sql: &'static str| sqlx::query(sql).execute(&store.write);
        write("CREATE TABLE bulk (payload BLOB)")
            .await
            .expect("a table");
        let rows = super::WAL_SIZE_LIMIT_BYTES / 4096 + 1024;
        sqlx::query(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $1) \
             INSERT INTO bulk (payload) SELECT randomblob(4000) FROM n",
        )
        .bind(i64::try_from(rows).expect("a row count"))
        .execute(&store.write)
        .await
        .expect("a transaction larger than the limit");
        let grown = wal();
        assert!(
            grown > super::WAL_SIZE_LIMIT_BYTES,
            "the WAL holds {grown} bytes"
        );
        let parts = store.sqlite.as_ref().expect("a SQLite store");
        parts.checkpointer.committed();
        assert!(
            parts
                .checkpointer
                .ran(2, std::time::Duration::from_secs(10))
                .await,
            "no checkpoint after the commit"
        );
        write("INSERT INTO bulk (payload) VALUES (x'00')")
            .await
            .expect("a small commit");
        let cut = wal();
        assert!(
            cut <= super::WAL_SIZE_LIMIT_BYTES,
            "the WAL file stayed at {cut} bytes (grown to {grown})"
        );
        store.close().await;
    }
}
