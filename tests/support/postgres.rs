//! A real PostgreSQL server for the tests: started once per test process from the binaries
//! `scripts/install-tools` installs (Debian's `postgresql` package), in a temporary directory,
//! listening on a free loopback port and on a Unix socket in that directory, and stopped when the
//! process ends; each test gets a database of its own.
//!
//! The server runs under a small shell that holds a pipe from this process: when the process
//! exits (however it exits) the pipe closes, and the shell stops the server and removes its
//! directory. PostgreSQL refuses to run as root, so as root the server runs as the `postgres`
//! account the package creates.

use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// Whether this run tests the PostgreSQL backend (`AGENTINDEX_TEST_BACKEND=postgres`).
pub(crate) fn selected() -> bool {
    std::env::var("AGENTINDEX_TEST_BACKEND").is_ok_and(|backend| backend == "postgres")
}

/// The running server.
pub(crate) struct Server {
    port: u16,
    /// The directory of its Unix socket (and of its data).
    socket_dir: PathBuf,
    /// The shell holding the server; its stdin is the pipe that keeps the server up.
    _keeper: Mutex<Child>,
}

static SERVER: OnceLock<Server> = OnceLock::new();
static DATABASES: AtomicU64 = AtomicU64::new(0);

/// The user the tests connect as (trust authentication on loopback).
const USER: &str = "agentindex";

/// The test process's server, started on first use.
pub(crate) fn server() -> &'static Server {
    SERVER.get_or_init(|| Server::start().unwrap_or_else(|e| panic!("starting PostgreSQL: {e}")))
}

impl Server {
    /// The URL of database `name` on this server.
    pub(crate) fn url(&self, name: &str) -> String {
        format!("postgres://{USER}@127.0.0.1:{}/{name}", self.port)
    }

    /// The URL of database `name` through the server's Unix socket, as a process on the
    /// database's own machine connects.
    fn socket_url(&self, name: &str) -> String {
        format!(
            "postgres://{USER}@localhost:{}/{name}?host={}",
            self.port,
            self.socket_dir.display()
        )
    }

    /// Creates an empty database (see [`Server::create_database`]) and returns its URL.
    pub(crate) fn fresh_database(&self) -> String {
        let name = self.create_database();
        self.url(&name)
    }

    /// [`Server::fresh_database`], its URL through the server's Unix socket.
    pub(crate) fn fresh_database_on_socket(&self) -> String {
        let name = self.create_database();
        self.socket_url(&name)
    }

    /// Creates an empty database and returns its name, one at a time (each is a copy of the
    /// server's template); a failure says what psql said.
    fn create_database(&self) -> String {
        static CREATING: Mutex<()> = Mutex::new(());
        let _one_at_a_time = CREATING
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let name = format!(
            "test_{}_{}",
            std::process::id(),
            DATABASES.fetch_add(1, Ordering::Relaxed)
        );
        let output = Command::new(binary("psql").unwrap_or_else(|| PathBuf::from("psql")))
            .args([
                "-q",
                "-v",
                "ON_ERROR_STOP=1",
                "-d",
                &self.url("postgres"),
                "-c",
            ])
            .arg(format!("CREATE DATABASE {name}"))
            .output()
            .expect("psql runs");
        assert!(
            output.status.success(),
            "creating database {name}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        name
    }

    fn start() -> Result<Self, String> {
        let initdb = binary("initdb").ok_or("initdb not found: run scripts/install-tools")?;
        let postgres = binary("postgres").ok_or("postgres not found: run scripts/install-tools")?;
        let dir = std::env::temp_dir().join(format!("agentindex-pg-{}", std::process::id()));
        let data = dir.join("data");
        std::fs::create_dir_all(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
        let account = if running_as_root() {
            let (uid, gid) = postgres_account()?;
            chown(&dir, "postgres")?;
            Some((uid, gid))
        } else {
            None
        };
        let mut init = Command::new(&initdb);
        init.args(["-D"])
            .arg(&data)
            .args([
                "-U",
                USER,
                "--auth=trust",
                "-E",
                "UTF8",
                "--no-sync",
                "--locale=C",
            ])
            .stdout(Stdio::null());
        as_account(&mut init, account);
        let status = init.status().map_err(|e| format!("running initdb: {e}"))?;
        if !status.success() {
            return Err(format!("initdb failed ({status})"));
        }
        let port = free_port()?;
        // Durability is not what the tests check: a test database skips the disk flushes. The
        // benchmarks (BENCH_POSTGRES) keep them, committing as SQLite's WAL mode does: a commit
        // waits for no flush, so a power loss may lose the last commits, never consistency. A
        // benchmark may add settings of its own (BENCH_POSTGRES_SETTINGS, `-c name=value …`).
        let durability = if std::env::var_os("BENCH_POSTGRES").is_some() {
            let own = std::env::var("BENCH_POSTGRES_SETTINGS").unwrap_or_default();
            format!("-c synchronous_commit=off -c shared_buffers=1GB {own}")
        } else {
            "-c fsync=off -c synchronous_commit=off -c full_page_writes=off".to_string()
        };
        let script = format!(
            "'{postgres}' -D '{data}' -p {port} -k '{dir}' -c listen_addresses=127.0.0.1 \
             {durability} -c max_connections=400 >'{dir}/server.log' 2>&1 & pid=$!; \
             read _; kill -INT $pid; wait $pid; rm -rf '{dir}'",
            postgres = postgres.display(),
            data = data.display(),
            dir = dir.display(),
        );
        let mut keeper = Command::new("sh");
        keeper.args(["-c", &script]).stdin(Stdio::piped());
        as_account(&mut keeper, account);
        let keeper = keeper
            .spawn()
            .map_err(|e| format!("starting postgres: {e}"))?;
        let server = Self {
            port,
            socket_dir: dir.clone(),
            _keeper: Mutex::new(keeper),
        };
        server.wait_ready(&dir)?;
        Ok(server)
    }

    /// Waits until the server accepts connections (it replays nothing, so this is quick).
    fn wait_ready(&self, dir: &Path) -> Result<(), String> {
        let isready = binary("pg_isready").ok_or("pg_isready not found")?;
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let ready = Command::new(&isready)
                .args(["-q", "-h", "127.0.0.1", "-p", &self.port.to_string()])
                .status()
                .is_ok_and(|s| s.success());
            if ready {
                return Ok(());
            }
            if Instant::now() > deadline {
                let log = std::fs::read_to_string(dir.join("server.log")).unwrap_or_default();
                return Err(format!("the server did not start within 60 s:\n{log}"));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Ok(mut keeper) = self._keeper.lock()
            && let Some(stdin) = keeper.stdin.as_mut()
        {
            let _ = stdin.write_all(b"\n");
        }
    }
}

/// `name` from PATH, or from the newest PostgreSQL under /usr/lib/postgresql (Debian keeps the
/// server binaries there, off PATH).
pub(crate) fn binary(name: &str) -> Option<PathBuf> {
    let on_path = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join(name))
            .find(|path| path.is_file())
    });
    if on_path.is_some() && name != "postgres" && name != "initdb" {
        return on_path;
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let version = entry.file_name().to_str()?.parse().ok()?;
            let path = entry.path().join("bin").join(name);
            path.is_file().then_some((version, path))
        })
        .collect();
    versions.sort();
    versions.pop().map(|(_, path)| path).or(on_path)
}

fn running_as_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|out| String::from_utf8_lossy(&out.stdout).trim() == "0")
}

fn postgres_account() -> Result<(u32, u32), String> {
    let id = |flag: &str| -> Result<u32, String> {
        let out = Command::new("id")
            .args([flag, "postgres"])
            .output()
            .map_err(|e| e.to_string())?;
        String::from_utf8_lossy(&out.stdout)
            .trim()
            .parse()
            .map_err(|_| "no `postgres` account to run the server as (install postgresql)".into())
    };
    Ok((id("-u")?, id("-g")?))
}

fn chown(dir: &Path, user: &str) -> Result<(), String> {
    let status = Command::new("chown")
        .args(["-R", user])
        .arg(dir)
        .status()
        .map_err(|e| e.to_string())?;
    status
        .success()
        .then_some(())
        .ok_or_else(|| format!("chown {}", dir.display()))
}

fn as_account(command: &mut Command, account: Option<(u32, u32)>) {
    if let Some((uid, gid)) = account {
        command.uid(uid).gid(gid);
    }
}

fn free_port() -> Result<u16, String> {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|addr| addr.port())
        .map_err(|e| format!("finding a free port: {e}"))
}
