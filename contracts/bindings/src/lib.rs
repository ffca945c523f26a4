//! Rust side of agentindex's Solidity contracts.
//!
//! [`bindings`] binds every contract with alloy's `sol!` from the ABI and bytecode artifacts
//! committed under `contracts/artifacts/` (so building Rust never needs forge), [`artifacts`] keeps
//! those files equal to a fresh `forge build`, [`tools`] finds the pinned anvil and forge binaries,
//! and [`devnet`] starts anvil with every contract deployed for tests, benchmarks and
//! `agentindex dev`, tied to the process that starts it ([`tied`]) so it never outlives it.

mod anvil;
pub mod artifacts;
pub mod bindings;
mod confirm;
pub mod demo;
mod deploy;
pub mod devnet;
mod error;
mod gas_headroom;
pub mod network_load;
mod options;
pub mod signing;
pub mod tied;
pub mod tools;
pub mod workload;

pub use anvil::AnvilError;
pub use bindings::*;
pub use deploy::Deployment;
pub use devnet::{Devnet, DevnetError, DevnetOptions, confirm};
