//! Payment facts: which addresses are bound to which agent from when, the payments credited
//! through those bindings (token transfers, and claims on x402 batch-settlement channels, which
//! are the channel's payer paying its receiver), and the transfers out of bound addresses
//! (outflows, once per transfer however many agents its sender is bound to).

use crate::reputation::crediting;
use crate::reputation::funding_trail::Move;
use crate::schema::{outflows, payment_bindings, payments, x402_channels};
use crate::sources::payments::Settlement;
use crate::sources::{Decoded, hex_address, hex_b256};
use crate::store::Dialect;
use crate::store::batch::{ChainContext, EventRecord};
use crate::store::decode;
use crate::store::decode::int;
use crate::store::packed_row::{PackedRow, packed_row};
use crate::store::rows::Rows;
use crate::store::{QueryContext, StoreResult};
use alloy::primitives::{Address, U256};
use sqlx::{Any, AnyConnection, QueryBuilder};
use std::collections::{BTreeMap, BTreeSet};

/// Recipient addresses per bindings query.
const ADDRESSES_PER_QUERY: usize = 500;

/// Stores each token Transfer as the payments and outflows `crediting::credit_transfer` finds
/// for it against the bindings of its sender and recipient (reputation discounts payers the
/// agent funded), and only then, so what is stored never depends on how ranges were cut. Every
/// binding of the batch must be written before this runs.
pub(super) async fn credit_transfers<'e>(
    conn: &mut AnyConnection,
    rows: &mut Rows,
    chain: &ChainContext,
    transfers: &'e [EventRecord],
) -> StoreResult<Credited<'e>> {
    let addresses: BTreeSet<String> = transfers
        .iter()
        .filter_map(|ev| match &ev.decoded {
            Ok(Decoded::TokenTransfer { from, to, .. }) => {
                Some([hex_address(from), hex_address(to)])
            }
            _ => None,
        })
        .flatten()
        .collect();
    let bindings = bindings_of(conn, chain.chain_id, &addresses).await?;
    let mut credited = Credited::default();
    for ev in transfers {
        let Ok(Decoded::TokenTransfer { from, to, value }) = &ev.decoded else {
            continue;
        };
        let at = (
            int("block_number", ev.block_number)?,
            int("log_index", ev.log_index)?,
        );
        let credit = crediting::credit_transfer(
            &bindings,
            hex_address(from).as_str(),
            hex_address(to).as_str(),
            &at,
        );
        for agent_key in &credit.payees {
            insert_payment(
                rows,
                chain.chain_id,
                ev,
                agent_key,
                &ev.address,
                from,
                to,
                value,
                Via::Transfer(ev.settlement),
            )?;
        }
        if !credit.senders.is_empty() {
            insert_outflow(rows, chain.chain_id, ev, from, to, value)?;
        }
        if !credit.payees.is_empty() && *from != Address::ZERO {
            credited.payments.push(Move {
                account: *from,
                block: ev.block_number,
                log_index: ev.log_index,
                paid_block: ev.block_number,
            });
        }
        if !credit.is_empty() {
            credited.stored.push(ev);
        }
    }
    Ok(credited)
}

/// What crediting a batch's transfers found.
#[derive(Default)]
pub(super) struct Credited<'e> {
    /// The transfers stored (they paid an agent or left one's side).
    pub(super) stored: Vec<&'e EventRecord>,
    /// The payments among them, as moves of their payers (where a funding trail begins).
    pub(super) payments: Vec<Move>,
}

/// Records a batch-settlement channel as it opened.
pub(super) fn open_channel(
    rows: &mut Rows,
    chain: &ChainContext,
    ev: &EventRecord,
    decoded: &Decoded,
) -> StoreResult<()> {
    let Decoded::ChannelCreated {
        channel,
        payer,
        receiver,
        token,
    } = decoded
    else {
        return Ok(());
    };
    rows.insert(x402_channels::Row {
        chain_id: int("chain_id", chain.chain_id)?,
        block_number: int("block_number", ev.block_number)?,
        log_index: int("log_index", ev.log_index)?,
        channel_id: hex_b256(channel),
        payer: hex_address(payer),
        receiver: hex_address(receiver),
        token: hex_address(token),
    });
    Ok(())
}

packed_row! {
    /// An `x402_channels` row, read by name.
    #[derive(sqlx::FromRow)]
    struct StoredChannel {
        channel_id: String = x402_channels::channel_id,
        block_number: i64 = x402_channels::block_number,
        log_index: i64 = x402_channels::log_index,
        payer: String = x402_channels::payer,
        receiver: String = x402_channels::receiver,
        token: String = x402_channels::token,
    }
}

/// A channel as stored.
struct Channel {
    payer: Address,
    receiver: Address,
    token: Address,
}

/// Each channel id's channels in chain order, with the position each opened at.
type ChannelsById = BTreeMap<String, Vec<((i64, i64), Channel)>>;

/// Credits each claim on a batch-settlement channel whose receiver is bound to an agent at the
/// claim as a payment by the channel's payer, of the amount claimed, in the channel's token (the
/// channel and the agents as `crediting` finds them). Every channel of the batch must be written
/// before this runs.
pub(super) async fn credit_claims(
    conn: &mut AnyConnection,
    rows: &mut Rows,
    chain: &ChainContext,
    claims: &[EventRecord],
) -> StoreResult<()> {
    if claims.is_empty() {
        return Ok(());
    }
    let ids: BTreeSet<String> = claims
        .iter()
        .filter_map(|ev| match &ev.decoded {
            Ok(Decoded::ChannelClaimed { channel, .. }) => Some(hex_b256(channel)),
            _ => None,
        })
        .collect();
    let mut channels = ChannelsById::new();
    let ids: Vec<&String> = ids.iter().collect();
    for chunk in ids.chunks(ADDRESSES_PER_QUERY) {
        let mut query = QueryBuilder::<Any>::new(format!(
            "SELECT {} FROM {x402_channels_table} WHERE chain_id = ",
            StoredChannel::named_select_list(Dialect::of(conn)),
            x402_channels_table = x402_channels::NAME
        ));
        query.push_bind(int("chain_id", chain.chain_id)?);
        query.push(" AND channel_id");
        crate::store::in_list::push_in(&mut query, chunk.iter().map(|s| s.as_str()));
        query.push(" ORDER BY block_number, log_index");
        let found: Vec<StoredChannel> = Dialect::of(conn)
            .portable(query)
            .build_query_as()
            .fetch_all(&mut *conn)
            .await
            .context("reading x402 channels")?;
        let table = x402_channels::NAME;
        for row in found {
            let channel = Channel {
                payer: decode::parse(table, x402_channels::payer.name, &row.payer)?,
                receiver: decode::parse(table, x402_channels::receiver.name, &row.receiver)?,
                token: decode::parse(table, x402_channels::token.name, &row.token)?,
            };
            channels
                .entry(row.channel_id)
                .or_default()
                .push(((row.block_number, row.log_index), channel));
        }
    }
    let receivers: BTreeSet<String> = channels
        .values()
        .flatten()
        .map(|(_, c)| hex_address(&c.receiver))
        .collect();
    let bindings = bindings_of(conn, chain.chain_id, &receivers).await?;
    for ev in claims {
        let Ok(Decoded::ChannelClaimed { channel, amount }) = &ev.decoded else {
            continue;
        };
        let at = (
            int("block_number", ev.block_number)?,
            int("log_index", ev.log_index)?,
        );
        let Some(opened) = channels
            .get(&hex_b256(channel))
            .and_then(|openings| crediting::channel_at(openings, &at))
        else {
            continue;
        };
        let receiver = hex_address(&opened.receiver);
        for agent_key in crediting::bound_agents(&bindings, receiver.as_str(), &at) {
            insert_payment(
                rows,
                chain.chain_id,
                ev,
                agent_key,
                &opened.token,
                &opened.payer,
                &opened.receiver,
                amount,
                Via::BatchClaim,
            )?;
        }
    }
    Ok(())
}

/// Each agent's payment addresses in chain order, with the position each took effect.
type BindingHistory = BTreeMap<String, Vec<((i64, i64), String)>>;

packed_row! {
    /// A `payment_bindings` row, read by name.
    #[derive(sqlx::FromRow)]
    struct Binding {
        agent_key: String = payment_bindings::agent_key,
        address: String = payment_bindings::address,
        block_number: i64 = payment_bindings::block_number,
        log_index: i64 = payment_bindings::log_index,
    }
}

/// Binding history of every agent ever bound to one of `addresses`.
async fn bindings_of(
    conn: &mut AnyConnection,
    chain_id: u64,
    addresses: &BTreeSet<String>,
) -> StoreResult<BindingHistory> {
    let mut history = BindingHistory::new();
    let addresses: Vec<&String> = addresses.iter().collect();
    for chunk in addresses.chunks(ADDRESSES_PER_QUERY) {
        let mut query = QueryBuilder::<Any>::new(format!(
            "SELECT {} FROM {payment_bindings_table}
             WHERE agent_key IN (SELECT agent_key FROM {payment_bindings_table} WHERE chain_id = ",
            Binding::named_select_list(Dialect::of(conn)),
            payment_bindings_table = payment_bindings::NAME
        ));
        query.push_bind(int("chain_id", chain_id)?);
        query.push(" AND address");
        crate::store::in_list::push_in(&mut query, chunk.iter().map(|a| a.as_str()));
        query.push(") ORDER BY block_number, log_index");
        let rows: Vec<Binding> = Dialect::of(conn)
            .portable(query)
            .build_query_as()
            .fetch_all(&mut *conn)
            .await
            .context("reading the bindings of payment addresses")?;
        for row in rows {
            history
                .entry(row.agent_key)
                .or_default()
                .push(((row.block_number, row.log_index), row.address));
        }
    }
    Ok(history)
}

/// Records that `agent_key` receives payments at `address` from `ev` on.
pub(super) fn bind_payments(
    rows: &mut Rows,
    chain_id: u64,
    agent_key: &str,
    address: &str,
    ev: &EventRecord,
) -> StoreResult<()> {
    rows.insert(payment_bindings::Row {
        chain_id: int("chain_id", chain_id)?,
        agent_key: agent_key.to_string(),
        address: address.to_string(),
        block_number: int("block_number", ev.block_number)?,
        log_index: int("log_index", ev.log_index)?,
    });
    Ok(())
}

/// How a credited payment was made.
#[derive(Debug, Clone, Copy)]
pub(super) enum Via {
    /// A token transfer (or native coin), settled by x402 or not.
    Transfer(Option<Settlement>),
    /// A claim on an x402 batch-settlement channel.
    BatchClaim,
}

impl Via {
    /// `payments.scheme`.
    fn scheme(self) -> Option<&'static str> {
        match self {
            Via::Transfer(settlement) => settlement.map(Settlement::scheme),
            Via::BatchClaim => Some("batch"),
        }
    }

    /// The EIP-3009 nonce, for an EIP-3009 settlement.
    fn nonce(self) -> Option<alloy::primitives::B256> {
        match self {
            Via::Transfer(settlement) => settlement.and_then(Settlement::nonce),
            Via::BatchClaim => None,
        }
    }
}

/// Records a payment credited to `agent_key`.
#[allow(clippy::too_many_arguments)]
pub(super) fn insert_payment(
    rows: &mut Rows,
    chain_id: u64,
    ev: &EventRecord,
    agent_key: &str,
    token: &Address,
    payer: &Address,
    payee: &Address,
    amount: &U256,
    via: Via,
) -> StoreResult<()> {
    let nonce = via.nonce();
    rows.insert(payments::Row {
        chain_id: int("chain_id", chain_id)?,
        block_number: int("block_number", ev.block_number)?,
        log_index: int("log_index", ev.log_index)?,
        agent_key: agent_key.to_string(),
        tx_hash: hex_b256(&ev.tx_hash),
        token: hex_address(token),
        payer: hex_address(payer),
        payee: hex_address(payee),
        amount: amount.to_string(),
        eip3009: i64::from(nonce.is_some()),
        nonce: nonce.as_ref().map(hex_b256),
        timestamp: int("block_timestamp", ev.block_timestamp)?,
        scheme: via.scheme().map(str::to_string),
    });
    Ok(())
}

/// Records a transfer out of `from`, an address bound to at least one agent: once, however many
/// agents it is bound to (reputation matches them when it reads the outflow).
fn insert_outflow(
    rows: &mut Rows,
    chain_id: u64,
    ev: &EventRecord,
    from: &Address,
    to: &Address,
    amount: &U256,
) -> StoreResult<()> {
    rows.insert(outflows::Row {
        chain_id: int("chain_id", chain_id)?,
        block_number: int("block_number", ev.block_number)?,
        log_index: int("log_index", ev.log_index)?,
        from_address: hex_address(from),
        token: hex_address(&ev.address),
        to_address: hex_address(to),
        amount: amount.to_string(),
        timestamp: int("block_timestamp", ev.block_timestamp)?,
    });
    Ok(())
}
