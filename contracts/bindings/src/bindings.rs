//! Typed bindings to every contract, generated from the committed artifacts.
//!
//! Each contract is a module named after it, holding its calls, events, errors and (with
//! bytecode) a `deploy` function. Structs are scoped per contract: `AgentFactory::CardData` and
//! `AgentCard::CardData` are distinct Rust types with the same ABI shape.

// Generated code: the contracts' NatSpec is the documentation, and argument counts follow the ABI.
#![allow(missing_docs, clippy::too_many_arguments)]

use alloy::sol;

sol!(
    #[sol(rpc)]
    #[derive(Debug, PartialEq, Eq)]
    AgentCard,
    "../artifacts/AgentCard.json"
);
sol!(
    #[sol(rpc)]
    #[derive(Debug, PartialEq, Eq)]
    AgentFactory,
    "../artifacts/AgentFactory.json"
);
sol!(
    #[sol(rpc)]
    #[derive(Debug, PartialEq, Eq)]
    AgentRegistry,
    "../artifacts/AgentRegistry.json"
);
sol!(
    #[sol(rpc)]
    #[derive(Debug, PartialEq, Eq)]
    IdentityRegistry,
    "../artifacts/IdentityRegistry.json"
);
sol!(
    #[sol(rpc)]
    #[derive(Debug, PartialEq, Eq)]
    ReputationRegistry,
    "../artifacts/ReputationRegistry.json"
);
sol!(
    #[sol(rpc)]
    #[derive(Debug, PartialEq, Eq)]
    ValidationRegistry,
    "../artifacts/ValidationRegistry.json"
);
sol!(
    #[sol(rpc)]
    #[derive(Debug, PartialEq, Eq)]
    TestUSDC,
    "../artifacts/TestUSDC.json"
);
sol!(
    #[sol(rpc)]
    #[derive(Debug, PartialEq, Eq)]
    Seeder,
    "../artifacts/Seeder.json"
);
sol!(
    #[sol(rpc)]
    #[derive(Debug, PartialEq, Eq)]
    SeederClient,
    "../artifacts/SeederClient.json"
);
sol!(
    #[sol(rpc)]
    #[derive(Debug, PartialEq, Eq)]
    LegacyEmitter,
    "../artifacts/LegacyEmitter.json"
);

sol!(
    #[sol(rpc)]
    #[derive(Debug, PartialEq, Eq)]
    ForeignAgent,
    "../artifacts/ForeignAgent.json"
);
sol!(
    #[sol(rpc)]
    #[derive(Debug, PartialEq, Eq)]
    X402Permit2Proxy,
    "../artifacts/X402Permit2Proxy.json"
);
sol!(
    #[sol(rpc)]
    #[derive(Debug, PartialEq, Eq)]
    X402BatchSettlement,
    "../artifacts/X402BatchSettlement.json"
);
