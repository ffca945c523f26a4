"""Blockfrost's JSON shapes for the emulated chain's blocks, transactions, UTxOs, metadata,
redeemers, datums and assets, with the field semantics db-sync gives them (confirmations from
the tip, utxo_count = inputs + outputs, CIP-14 fingerprints, an asset's on-chain metadata from
its newest mint)."""

import chain_store as cs
import metadata_json
import plutus_data as pd
import values as val


def block_json(chain, block) -> dict:
    tip = chain.tip
    following = chain.block_at(block.height + 1)
    return {
        "time": block.time,
        "height": block.height,
        "hash": block.hash,
        "slot": block.slot,
        "epoch": block.slot // cs.EPOCH_LENGTH,
        "epoch_slot": block.slot % cs.EPOCH_LENGTH,
        "slot_leader": block.slot_leader,
        "size": block.size,
        "tx_count": len(block.txs),
        "output": str(block.output) if block.txs else None,
        "fees": str(block.fees) if block.txs else None,
        "block_vrf": block.block_vrf,
        "op_cert": block.op_cert,
        "op_cert_counter": str(block.op_cert_counter),
        "previous_block": block.previous,
        "next_block": following.hash if following else None,
        "confirmations": tip.height - block.height,
    }


def tx_json(chain, record) -> dict:
    block = chain.block_at(record.block_height)
    output_amount = val.add(*(o.value for o in record.outputs))
    return {
        "hash": record.hash,
        "block": block.hash,
        "block_height": block.height,
        "block_time": block.time,
        "slot": block.slot,
        "index": record.index,
        "output_amount": val.blockfrost_amount(output_amount),
        "fees": str(record.fee),
        "deposit": "0",
        "size": len(record.cbor),
        "invalid_before": None if record.invalid_before is None else str(record.invalid_before),
        "invalid_hereafter": None if record.invalid_hereafter is None else str(record.invalid_hereafter),
        "utxo_count": len(record.inputs) + len(record.outputs),
        "withdrawal_count": 0,
        "mir_cert_count": 0,
        "delegation_count": 0,
        "stake_cert_count": 0,
        "pool_update_count": 0,
        "pool_retire_count": 0,
        "asset_mint_or_burn_count": len(record.mint),
        "redeemer_count": len(record.redeemers),
        "valid_contract": True,
        "treasury_donation": "0",
    }


def _output_fields(output) -> dict:
    return {
        "address": output.address,
        "amount": val.blockfrost_amount(output.value),
        "data_hash": output.data_hash,
        "inline_datum": output.datum_cbor.hex() if output.datum_cbor is not None else None,
        "reference_script_hash": None,
    }


def utxos_json(chain, record) -> dict:
    inputs = []
    for key, output in zip(record.inputs, record.resolved_inputs):
        inputs.append({**_output_fields(output), "tx_hash": key[0], "output_index": key[1], "collateral": False, "reference": False})
    for key, output in zip(record.collateral, record.resolved_collateral):
        inputs.append({**_output_fields(output), "tx_hash": key[0], "output_index": key[1], "collateral": True, "reference": False})
    outputs = [
        {**_output_fields(o), "output_index": o.index, "collateral": False, "consumed_by_tx": chain.consumed_by.get((record.hash, o.index))}
        for o in record.outputs
    ]
    return {"hash": record.hash, "inputs": inputs, "outputs": outputs}


def metadata_json_list(record) -> list:
    return [{"label": str(label), "json_metadata": value} for label, value in record.metadata]


def tx_redeemers_json(record) -> list:
    return [
        {
            "tx_index": r.index,
            "purpose": r.purpose,
            "script_hash": r.script_hash,
            "redeemer_data_hash": r.data_hash,
            "datum_hash": r.data_hash,
            "unit_mem": str(r.mem),
            "unit_steps": str(r.steps),
            "fee": str(r.fee),
        }
        for r in record.redeemers
    ]


def script_redeemer_json(tx_hash: str, r) -> dict:
    return {
        "tx_hash": tx_hash,
        "tx_index": r.index,
        "purpose": r.purpose,
        "redeemer_data_hash": r.data_hash,
        "datum_hash": r.data_hash,
        "unit_mem": str(r.mem),
        "unit_steps": str(r.steps),
        "fee": str(r.fee),
    }


def datum_json(cbor: bytes) -> dict:
    return {"json_value": pd.to_detailed_json(pd.from_cbor(cbor))}


def fingerprint(unit: str) -> str:
    """CIP-14: bech32 "asset" of blake2b-160(policy id ++ asset name)."""
    return cs.bech32("asset", cs.blake2b(bytes.fromhex(unit), 20))


def asset_json(chain, unit: str) -> dict:
    events = chain.asset_events[unit]
    onchain, standard = None, None
    for tx_hash, quantity in reversed(events):
        if quantity <= 0:
            continue
        labels = dict(chain.txs[tx_hash].metadata)
        if 721 in labels:
            entry = metadata_json.cip25_entry(labels[721], unit[:56], unit[56:])
            if entry is not None:
                onchain = entry if isinstance(entry, dict) else {"value": entry}
                standard = metadata_json.cip25_standard(labels[721], entry)
        break
    return {
        "asset": unit,
        "policy_id": unit[:56],
        "asset_name": unit[56:] or None,
        "fingerprint": fingerprint(unit),
        "quantity": str(sum(q for _, q in events)),
        "initial_mint_tx_hash": events[0][0],
        "mint_or_burn_count": len(events),
        "onchain_metadata": onchain,
        "onchain_metadata_standard": standard,
        "onchain_metadata_extra": None,
        "metadata": None,
    }


def asset_history_json(chain, unit: str) -> list:
    return [
        {"tx_hash": tx_hash, "action": "minted" if q > 0 else "burned", "amount": str(abs(q))}
        for tx_hash, q in chain.asset_events[unit]
    ]


def asset_addresses_json(chain, unit: str) -> list:
    return [{"address": a, "quantity": str(q)} for a, q in chain.asset_holders.get(unit, {}).items()]


def policy_assets_json(chain, units: list) -> list:
    return [{"asset": u, "quantity": str(sum(q for _, q in chain.asset_events[u]))} for u in units]
