//! Off-chain EIP-712 signatures the contracts verify: EIP-3009 transfer authorisations (what an
//! x402 client signs to pay) and the ERC-8004 agentWallet consent. Signed with alloy's own EIP-712
//! code, so tests check the contracts against an independent implementation.

use alloy::primitives::{Address, B256, Signature, U256};
use alloy::signers::SignerSync;
use alloy::signers::local::PrivateKeySigner;
use alloy::sol;
use alloy::sol_types::{Eip712Domain, SolStruct, eip712_domain};

sol! {
    /// EIP-3009 `transferWithAuthorization` consent.
    #[derive(Debug)]
    struct TransferWithAuthorization {
        address from;
        address to;
        uint256 value;
        uint256 validAfter;
        uint256 validBefore;
        bytes32 nonce;
    }

    /// ERC-8004 consent of a wallet to become an agent's payment wallet.
    #[derive(Debug)]
    struct AgentWalletSet {
        uint256 agentId;
        address newWallet;
        address owner;
        uint256 deadline;
    }
}

/// The EIP-712 domain of USDC on Ethereum and Base, which `TestUSDC` shares.
pub fn usdc_domain(chain_id: u64, token: Address) -> Eip712Domain {
    eip712_domain! {
        name: "USD Coin",
        version: "2",
        chain_id: chain_id,
        verifying_contract: token,
    }
}

/// The EIP-712 domain of the ERC-8004 Identity Registry.
pub fn identity_domain(chain_id: u64, registry: Address) -> Eip712Domain {
    eip712_domain! {
        name: "ERC8004IdentityRegistry",
        version: "1",
        chain_id: chain_id,
        verifying_contract: registry,
    }
}

/// Signs an EIP-3009 authorisation with the payer's key.
pub fn sign_transfer_authorization(
    payer: &PrivateKeySigner,
    domain: &Eip712Domain,
    authorization: &TransferWithAuthorization,
) -> Signature {
    payer
        .sign_hash_sync(&authorization.eip712_signing_hash(domain))
        .expect("local keys always sign")
}

/// Signs the wallet's consent to be `agent_id`'s agentWallet until `deadline`.
pub fn sign_agent_wallet(
    wallet: &PrivateKeySigner,
    domain: &Eip712Domain,
    agent_id: U256,
    owner: Address,
    deadline: U256,
) -> Signature {
    let consent = AgentWalletSet {
        agentId: agent_id,
        newWallet: wallet.address(),
        owner,
        deadline,
    };
    wallet
        .sign_hash_sync(&consent.eip712_signing_hash(domain))
        .expect("local keys always sign")
}

/// A nonce that is unique per `(payer, seed)`, for tests that need many authorisations.
pub fn nonce(seed: &str) -> B256 {
    alloy::primitives::keccak256(seed.as_bytes())
}
