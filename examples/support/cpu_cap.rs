//! A CPU cap for a benchmarked process: a cgroup of its own whose CPU time is limited to a
//! share of the machine's cores, so that one process stands for a machine of that size. cgroup
//! v1 (`/sys/fs/cgroup/cpu`) or v2 (`/sys/fs/cgroup` with the `cpu` controller); needs root.

#![allow(dead_code)]

use std::path::PathBuf;

/// The scheduling period the cap is counted in, in microseconds.
const PERIOD_US: u64 = 100_000;

/// A capped cgroup; removed when dropped (once its processes have ended).
pub(crate) struct CpuCap {
    dir: PathBuf,
}

impl CpuCap {
    /// Creates (or reuses) cgroup `name` allowing `cpus` cores of CPU time.
    pub(crate) fn create(name: &str, cpus: f64) -> anyhow::Result<Self> {
        anyhow::ensure!(cpus > 0.0, "a CPU cap must be above zero cores, not {cpus}");
        let quota = (cpus * PERIOD_US as f64).round() as u64;
        let v1 = PathBuf::from("/sys/fs/cgroup/cpu");
        let (dir, limit, value) = if v1.join("cpu.cfs_quota_us").exists() {
            (v1.join(name), "cpu.cfs_quota_us", quota.to_string())
        } else {
            let v2 = PathBuf::from("/sys/fs/cgroup");
            let controllers = std::fs::read_to_string(v2.join("cgroup.controllers"))
                .map_err(|e| anyhow::anyhow!("no cgroup CPU controller to cap replicas: {e}"))?;
            anyhow::ensure!(
                controllers.split_whitespace().any(|c| c == "cpu"),
                "cgroup v2 offers no cpu controller here ({controllers:?})"
            );
            // Children get the cpu controller only when their parent hands it down.
            let _ = std::fs::write(v2.join("cgroup.subtree_control"), "+cpu");
            (v2.join(name), "cpu.max", format!("{quota} {PERIOD_US}"))
        };
        if !dir.exists() {
            std::fs::create_dir(&dir).map_err(|e| {
                anyhow::anyhow!("creating cgroup {} (root is needed): {e}", dir.display())
            })?;
        }
        if limit == "cpu.cfs_quota_us" {
            write(&dir, "cpu.cfs_period_us", &PERIOD_US.to_string())?;
        }
        write(&dir, limit, &value)?;
        Ok(CpuCap { dir })
    }

    /// Moves process `pid` (every thread of it) into the cap.
    pub(crate) fn enter(&self, pid: u32) -> anyhow::Result<()> {
        write(&self.dir, "cgroup.procs", &pid.to_string())
    }

    /// How many scheduling periods so far found the cap's processes out of CPU time.
    pub(crate) fn throttled(&self) -> anyhow::Result<u64> {
        let path = self.dir.join("cpu.stat");
        let stat = std::fs::read_to_string(&path)
            .map_err(|e| anyhow::anyhow!("reading {}: {e}", path.display()))?;
        stat.lines()
            .find_map(|line| line.strip_prefix("nr_throttled "))
            .and_then(|n| n.trim().parse().ok())
            .ok_or_else(|| anyhow::anyhow!("{} has no nr_throttled", path.display()))
    }
}

impl Drop for CpuCap {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.dir);
    }
}

fn write(dir: &std::path::Path, file: &str, value: &str) -> anyhow::Result<()> {
    let path = dir.join(file);
    std::fs::write(&path, value)
        .map_err(|e| anyhow::anyhow!("writing {value} to {}: {e}", path.display()))
}
