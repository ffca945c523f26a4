//! The attack benchmark's floor (`ATTACK_FLOOR`): a server that answers every request with a
//! bare 429 and nothing else, on a runtime of its own at normal priority, for the attackers to
//! aim at instead of agentindex. What the legitimate load loses then is what the attack traffic
//! costs this machine whatever answers it (the attackers' client, the kernel's sockets, the
//! cheapest possible refusal), the part no server can win back on two shared cores.

#![allow(dead_code)]

use axum::http::StatusCode;

/// A running floor server, stopped when dropped.
pub(crate) struct FloorServer {
    runtime: Option<tokio::runtime::Runtime>,
    /// `http://127.0.0.1:PORT`.
    pub(crate) base: String,
}

/// Starts the floor server on two threads of its own, listening on a free loopback port.
pub(crate) fn start() -> anyhow::Result<FloorServer> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("floor-server")
        .enable_all()
        .build()?;
    // Bound here, handed to the runtime's task: the caller may itself be inside a runtime.
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    listener.set_nonblocking(true)?;
    let base = format!("http://{}", listener.local_addr()?);
    let app = axum::Router::new().fallback(|| async { StatusCode::TOO_MANY_REQUESTS });
    runtime.spawn(async move {
        let served = match tokio::net::TcpListener::from_std(listener) {
            Ok(listener) => axum::serve(listener, app).await,
            Err(error) => Err(error),
        };
        if let Err(error) = served {
            eprintln!("the floor server stopped: {error}");
        }
    });
    Ok(FloorServer {
        runtime: Some(runtime),
        base,
    })
}

impl Drop for FloorServer {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}
