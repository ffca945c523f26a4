//! No orphans: a process that starts another (`agentindex dev` its anvil and its Blockfrost
//! emulator, a test the binary it drives) stops it however it ends, SIGKILL included, when no
//! destructor runs. The mechanism is
//! `agentindex_contracts::tied`, whose own tests cover SIGTERM, the SIGKILL fallback and a
//! program that exits first; this drives it through the real binary.

use crate::support::dev::Dev;
use crate::support::processes::children_of;
use std::time::Duration;

#[test]
fn agentindex_dev_killed_by_sigkill_leaves_no_anvil_or_emulator_behind() {
    let mut dev = Dev::start();
    let children = children_of(dev.pid());
    let anvils: Vec<_> = children.iter().filter(|c| c.name == "anvil").collect();
    let [anvil] = anvils.as_slice() else {
        panic!("agentindex dev runs one anvil: {children:?}");
    };
    // The Blockfrost emulator of the Masumi demo (Python), which exits when its stdin closes.
    let emulators: Vec<_> = children
        .iter()
        .filter(|c| c.name.starts_with("python"))
        .collect();
    let [emulator] = emulators.as_slice() else {
        panic!("agentindex dev runs one Blockfrost emulator: {children:?}");
    };
    assert!(anvil.running() && emulator.running());

    dev.kill();
    for (what, process) in [("anvil", anvil), ("the Blockfrost emulator", emulator)] {
        assert!(
            process.gone_within(Duration::from_secs(10)),
            "{what} (pid {}) still runs 10 s after agentindex dev was killed",
            process.pid
        );
    }
}
