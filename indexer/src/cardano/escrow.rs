//! Reading Masumi's payment contract (the escrow): what a transaction did to the escrows it
//! touched. Pure: the follower fetches the transaction's inputs and outputs, this decodes the
//! inline datums and says, for each escrow, whether it was locked, moved to another state, or
//! paid out, and how.
//!
//! An escrow keeps its identity across states: its buyer, seller, nonces and input hash never
//! change, so a spent output and the output continuing it carry the same key. A spend with no
//! continuation pays the escrow out, and the state it leaves from says to whom: from
//! `ResultSubmitted` or `WithdrawAuthorized` the seller was paid (released), from `FundsLocked`,
//! `RefundRequested` or `RefundAuthorized` the buyer got it back (refunded), from `Disputed` the
//! admins split it (disputed); those are the only payouts the contract allows from each state.

use super::plutus_data::{self, PlutusData};
use super::registry::agent_of;
use super::source::{TxPlace, TxUtxos, Utxo};
use crate::config::{EscrowContract, RegistryPolicy};
use crate::primitives::{AgentKey, POLICY_BYTES};
use sha2::{Digest, Sha256};

/// The states the contract knows, by their number in the datum.
pub const STATES: [&str; 6] = [
    "FundsLocked",
    "ResultSubmitted",
    "RefundRequested",
    "Disputed",
    "WithdrawAuthorized",
    "RefundAuthorized",
];

/// The fields of an escrow datum agentindex reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EscrowDatum {
    /// The buyer's payment credential (key or script hash).
    pub buyer: Vec<u8>,
    /// The seller's payment credential.
    pub seller: Vec<u8>,
    /// What identifies the purchase: the nonces and the input hash.
    pub seller_nonce: Vec<u8>,
    /// The buyer's nonce.
    pub buyer_nonce: Vec<u8>,
    /// The hash of the job's input.
    pub input_hash: Vec<u8>,
    /// V2: the agent paid (its registry unit).
    pub agent_identifier: Option<Vec<u8>>,
    /// Lovelace returned to the buyer beside the price.
    pub collateral_return_lovelace: i128,
    /// The state number.
    pub state: u64,
}

impl EscrowDatum {
    /// The escrow's key: the same in every state of one purchase.
    pub fn key(&self) -> String {
        let mut hash = Sha256::new();
        for part in [
            &self.buyer,
            &self.seller,
            &self.seller_nonce,
            &self.buyer_nonce,
            &self.input_hash,
        ] {
            hash.update((part.len() as u32).to_be_bytes());
            hash.update(part);
        }
        alloy::hex::encode(hash.finalize())
    }

    /// The agent's registry unit: V2 says it; V1's seller nonce carries it after 32 random
    /// bytes, as Masumi's payment service writes it.
    pub fn agent_unit(&self) -> Option<&[u8]> {
        match &self.agent_identifier {
            Some(unit) => Some(unit),
            None => self
                .seller_nonce
                .get(32..)
                .filter(|unit| unit.len() > POLICY_BYTES),
        }
    }
}

/// Why a datum at the contract is not an escrow.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not an escrow datum: {0}")]
pub struct DatumError(String);

/// Reads an escrow datum from its CBOR (hex, as Blockfrost gives inline datums).
pub fn parse_datum(cbor_hex: &str) -> Result<EscrowDatum, DatumError> {
    let bytes = alloy::hex::decode(cbor_hex).map_err(|e| DatumError(format!("hex: {e}")))?;
    let data = plutus_data::decode(&bytes).map_err(|e| DatumError(e.to_string()))?;
    let fields = data
        .fields_of(0)
        .ok_or_else(|| DatumError("not constructor 0".into()))?;
    // V1: 16 fields; V2 adds the return addresses after buyer and seller, and the agent.
    let (buyer, seller, seller_nonce, buyer_nonce, agent, collateral, input_hash, state) =
        match fields.len() {
            16 => (0, 1, 4, 5, None, 6, 7, 15),
            19 => (0, 2, 6, 7, Some(8), 9, 10, 18),
            n => {
                return Err(DatumError(format!(
                    "{n} fields, neither 16 (V1) nor 19 (V2)"
                )));
            }
        };
    let bytes_at = |i: usize, name: &str| {
        fields[i]
            .bytes()
            .map(<[u8]>::to_vec)
            .ok_or_else(|| DatumError(format!("{name} is not bytes")))
    };
    Ok(EscrowDatum {
        buyer: credential(&fields[buyer])
            .ok_or_else(|| DatumError("buyer is not an address".into()))?,
        seller: credential(&fields[seller])
            .ok_or_else(|| DatumError("seller is not an address".into()))?,
        seller_nonce: bytes_at(seller_nonce, "seller_nonce")?,
        buyer_nonce: bytes_at(buyer_nonce, "buyer_nonce")?,
        input_hash: bytes_at(input_hash, "input_hash")?,
        agent_identifier: agent.map(|i| bytes_at(i, "agent_identifier")).transpose()?,
        collateral_return_lovelace: fields[collateral]
            .int()
            .ok_or_else(|| DatumError("collateral_return_lovelace is not an integer".into()))?,
        state: match &fields[state] {
            PlutusData::Constr { tag, fields } if fields.is_empty() && *tag < 6 => *tag,
            _ => return Err(DatumError("state is not one of the six".into())),
        },
    })
}

/// The payment credential of a Plutus `Address` (`Constr 0 [credential, stake]`, the
/// credential `Constr 0 [key hash]` or `Constr 1 [script hash]`).
fn credential(address: &PlutusData) -> Option<Vec<u8>> {
    let credential = address.fields_of(0)?.first()?;
    let PlutusData::Constr { tag: 0 | 1, fields } = credential else {
        return None;
    };
    fields.first()?.bytes().map(<[u8]>::to_vec)
}

/// What happened to one escrow in a transaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EscrowAction {
    /// The escrow (see [`EscrowDatum::key`]); for an unreadable datum, its output reference.
    pub escrow_key: String,
    /// Which contract: 1 or 2.
    pub contract_version: u8,
    /// The agent paid, when the datum names a registry entry agentindex follows.
    pub agent: Option<AgentKey>,
    /// The buyer's payment credential, hex.
    pub buyer: String,
    /// The seller's payment credential, hex.
    pub seller: String,
    /// `lovelace`, or the token's unit.
    pub unit: String,
    /// The price, in the unit's smallest amount.
    pub amount: u128,
    /// `locked`, `moved`, `released`, `refunded`, `disputed`, or `unreadable`.
    pub event: &'static str,
    /// The state it is in after (for a payout, the state it left).
    pub state: Option<&'static str>,
    /// The output holding it after, for a lock or a move.
    pub output_index: Option<u32>,
    /// Why its datum could not be read (`unreadable`).
    pub error: Option<String>,
    /// Its place among the transaction's escrow actions.
    pub position: u32,
}

/// The escrow actions of one transaction, for the contracts in `contracts` (invalid
/// transactions moved nothing).
pub fn escrow_actions(
    chain_id: u64,
    place: &TxPlace,
    utxos: &TxUtxos,
    contracts: &[EscrowContract],
    policies: &[RegistryPolicy],
) -> Vec<EscrowAction> {
    if !place.valid {
        return Vec::new();
    }
    let spent = at_contract(&utxos.inputs, contracts, true);
    let created = at_contract(&utxos.outputs, contracts, false);
    let key_of = |d: &Result<EscrowDatum, DatumError>| d.as_ref().ok().map(EscrowDatum::key);
    let mut actions = Vec::new();
    for (version, utxo, datum) in &created {
        let output_index = Some(utxo.output_index);
        match datum {
            Ok(datum) => {
                let key = datum.key();
                let moved = spent
                    .iter()
                    .any(|(_, _, d)| key_of(d).as_ref() == Some(&key));
                actions.push(action(
                    chain_id,
                    *version,
                    utxo,
                    datum,
                    policies,
                    if moved { "moved" } else { "locked" },
                    output_index,
                ));
            }
            Err(error) => actions.push(unreadable(*version, utxo, error)),
        }
    }
    for (version, utxo, datum) in &spent {
        let Ok(datum) = datum else {
            // A spent output whose datum could not be read was reported when it was created.
            continue;
        };
        let key = datum.key();
        if created
            .iter()
            .any(|(_, _, d)| key_of(d).as_ref() == Some(&key))
        {
            continue;
        }
        let event = match datum.state {
            1 | 4 => "released",
            3 => "disputed",
            _ => "refunded",
        };
        actions.push(action(
            chain_id, *version, utxo, datum, policies, event, None,
        ));
    }
    for (position, action) in actions.iter_mut().enumerate() {
        action.position = position as u32;
    }
    actions
}

/// The outputs among `utxos` at one of `contracts` (spent ones: not collateral nor only
/// referenced), with their contract's version and their datum read.
fn at_contract<'a>(
    utxos: &'a [Utxo],
    contracts: &[EscrowContract],
    spent: bool,
) -> Vec<(u8, &'a Utxo, Result<EscrowDatum, DatumError>)> {
    utxos
        .iter()
        .filter(|u| !(u.collateral || (spent && u.reference)))
        .filter_map(|u| {
            let contract = contracts.iter().find(|c| c.address == u.address)?;
            let datum = u
                .inline_datum
                .as_deref()
                .ok_or_else(|| DatumError("no inline datum".into()))
                .and_then(parse_datum);
            Some((contract.version, u, datum))
        })
        .collect()
}

fn action(
    chain_id: u64,
    version: u8,
    utxo: &Utxo,
    datum: &EscrowDatum,
    policies: &[RegistryPolicy],
    event: &'static str,
    output_index: Option<u32>,
) -> EscrowAction {
    let agent = datum.agent_unit().and_then(|unit| {
        let (policy, name) = unit.split_at(POLICY_BYTES);
        let policy_hex = alloy::hex::encode(policy);
        let registry = policies.iter().find(|p| p.policy_id == policy_hex)?;
        agent_of(chain_id, registry, &alloy::hex::encode(name))
    });
    let token = utxo.amounts.iter().find(|a| a.unit != "lovelace");
    let (unit, amount) = match token {
        Some(token) => (token.unit.clone(), token.quantity),
        None => {
            let lovelace = utxo
                .amounts
                .iter()
                .find(|a| a.unit == "lovelace")
                .map_or(0, |a| a.quantity);
            let collateral = u128::try_from(datum.collateral_return_lovelace).unwrap_or(0);
            ("lovelace".to_string(), lovelace.saturating_sub(collateral))
        }
    };
    EscrowAction {
        escrow_key: datum.key(),
        contract_version: version,
        agent,
        buyer: alloy::hex::encode(&datum.buyer),
        seller: alloy::hex::encode(&datum.seller),
        unit,
        amount,
        event,
        state: usize::try_from(datum.state)
            .ok()
            .and_then(|s| STATES.get(s))
            .copied(),
        output_index,
        error: None,
        position: 0,
    }
}

fn unreadable(version: u8, utxo: &Utxo, error: &DatumError) -> EscrowAction {
    EscrowAction {
        escrow_key: format!("{}#{}", alloy::hex::encode(utxo.tx_hash), utxo.output_index),
        contract_version: version,
        agent: None,
        buyer: String::new(),
        seller: String::new(),
        unit: String::new(),
        amount: 0,
        event: "unreadable",
        state: None,
        output_index: Some(utxo.output_index),
        error: Some(error.to_string()),
        position: 0,
    }
}

#[cfg(test)]
mod tests;
