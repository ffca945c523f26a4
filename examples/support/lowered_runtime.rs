//! A runtime of two threads at the lowest priority, for what a benchmark runs on this machine
//! in place of other machines (the attack benchmark's attackers, the liveness benchmark's
//! probed hosts): on the server's own cores their work would take time from the server and
//! from the load's client, which no remote machine can. What the server spends on them is
//! untouched: that is what is measured.

/// A runtime whose two threads, named `name`, run at nice 19 unless the environment variable
/// `normal_priority` is set.
pub(crate) fn lowered_runtime(name: &str, normal_priority: &str) -> anyhow::Result<LoweredRuntime> {
    let lowered = std::env::var_os(normal_priority).is_none();
    let what = format!("{name}'s thread");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name(name)
        .on_thread_start(move || {
            if lowered {
                agentindex_indexer::priority::lower_this_thread(&what);
            }
        })
        .enable_all()
        .build()?;
    Ok(LoweredRuntime(Some(runtime)))
}

/// The runtime, shut down without waiting when dropped: a benchmark drops it from its own
/// async code (on every way out, an error's too), where a runtime may not block.
pub(crate) struct LoweredRuntime(Option<tokio::runtime::Runtime>);

impl LoweredRuntime {
    /// Where to spawn.
    pub(crate) fn handle(&self) -> &tokio::runtime::Handle {
        self.0.as_ref().expect("present until dropped").handle()
    }
}

impl Drop for LoweredRuntime {
    fn drop(&mut self) {
        if let Some(runtime) = self.0.take() {
            runtime.shutdown_background();
        }
    }
}
