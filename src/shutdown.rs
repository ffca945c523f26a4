//! The shutdown signal every long-running subcommand obeys: SIGTERM (what service managers and
//! container runtimes send) or SIGINT (Ctrl-C). The indexer finishes and commits the batch in
//! flight, the API stops accepting and drains, and the process exits 0.

use tokio::sync::watch;

/// A receiver that turns true on the first SIGTERM or SIGINT.
pub(crate) fn on_signal() -> watch::Receiver<bool> {
    let (stop, shutdown) = watch::channel(false);
    tokio::spawn(async move {
        let signal = received().await;
        tracing::info!(signal, "shutting down after the batch in flight");
        let _ = stop.send(true);
    });
    shutdown
}

#[cfg(unix)]
async fn received() -> &'static str {
    use tokio::signal::unix::{SignalKind, signal};
    match signal(SignalKind::terminate()) {
        Ok(mut terminate) => tokio::select! {
            _ = terminate.recv() => "SIGTERM",
            _ = tokio::signal::ctrl_c() => "SIGINT",
        },
        Err(error) => {
            tracing::warn!(%error, "cannot listen for SIGTERM; Ctrl-C only");
            let _ = tokio::signal::ctrl_c().await;
            "SIGINT"
        }
    }
}

#[cfg(not(unix))]
async fn received() -> &'static str {
    let _ = tokio::signal::ctrl_c().await;
    "Ctrl-C"
}
