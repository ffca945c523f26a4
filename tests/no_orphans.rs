//! No orphans: a process that starts another (`agentindex dev` its anvil, a test the binary it
//! drives) stops it however it ends, SIGKILL included, when no destructor runs. The mechanism is
//! `agentindex_contracts::tied`, whose own tests cover SIGTERM, the SIGKILL fallback and a
//! program that exits first; this drives it through the real binary.

use crate::support::dev::Dev;
use crate::support::processes::children_of;
use std::time::Duration;

#[test]
fn agentindex_dev_killed_by_sigkill_leaves_no_anvil_behind() {
    let mut dev = Dev::start();
    let anvils: Vec<_> = children_of(dev.pid())
        .into_iter()
        .filter(|child| child.name == "anvil")
        .collect();
    let [anvil] = anvils.as_slice() else {
        panic!("agentindex dev runs one anvil: {anvils:?}");
    };
    assert!(anvil.running());

    dev.kill();
    assert!(
        anvil.gone_within(Duration::from_secs(10)),
        "anvil (pid {}) still runs 10 s after agentindex dev was killed",
        anvil.pid
    );
}
