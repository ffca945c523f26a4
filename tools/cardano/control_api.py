"""The emulator's own control API under /_emulator/ (JSON in, JSON out; never counted as
Blockfrost traffic nor rate limited): what is deployed, registry and escrow actions, mining,
rollback, fault injection, statistics and bulk building. Each action is mined in a block of its
own unless the body says "mine": false, in which case it waits in the pending pool for
POST /_emulator/blocks."""

import values as val
from bulk_builder import build_bulk
from masumi_escrow import STATE_NAMES, EscrowError
from masumi_registry import RegistryError


class ControlError(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


def _wallet(emulator, given, default_name: str):
    if not given:
        return emulator.deployment.wallet(default_name)
    for wallet in list(emulator.deployment._wallets.values()) + emulator.deployment.admins:
        if given in (wallet.name, wallet.addr):
            return wallet
    if not given.startswith("addr"):
        return emulator.deployment.wallet(given)  # a new named wallet
    raise ControlError(400, f"{given} is not a wallet of this emulator (give a wallet name or a listed address)")


def _amount(body) -> dict:
    amount = body.get("amount") or [{"unit": "lovelace", "quantity": "10000000"}]
    try:
        value = val.add(*({a["unit"]: int(a["quantity"])} for a in amount))
    except (KeyError, TypeError, ValueError):
        raise ControlError(400, 'amount must be [{"unit": "lovelace" | token unit, "quantity": "…"}]')
    if not value or any(q <= 0 for q in value.values()):
        raise ControlError(400, "amount must be positive")
    return value


def _finish(emulator, body, result: dict) -> dict:
    if body.get("mine", True):
        block = emulator.chain.mine(1)[0]
        result["block_height"] = block.height
        result["block_hash"] = block.hash
    else:
        result["block_height"] = None
    return result


def info(emulator, body):
    d, chain = emulator.deployment, emulator.chain
    wallets = ["node-wallet-0", "node-wallet-1", "node-wallet-2", "buyer-0", "buyer-1", "buyer-2"]
    return {
        "network": d.network_name,
        "project_id": emulator.traffic.project_id,
        "policy_ids": {v: c.script_hash.hex() for v, c in d.registry.items()},
        "escrow": {v: {"address": c.addr, "script_hash": c.script_hash.hex()} for v, c in d.escrow.items()},
        "stablecoin_unit": d.stablecoin_unit,
        "tip": {"height": chain.tip.height, "hash": chain.tip.hash} if chain.tip else None,
        "wallets": {name: str(d.wallet(name).address) for name in wallets},
        "admins": [a.addr for a in d.admins],
        "fee_receiver": d.fee_wallet.addr,
        "pending_txs": len(chain.pending),
    }


def register(emulator, body):
    if not isinstance(body.get("metadata"), dict):
        raise ControlError(400, "metadata must be a JSON object")
    holder = _wallet(emulator, body.get("holder"), "node-wallet-0")
    record, units = emulator.registry.register(body["metadata"], body.get("contract", "v2"), holder, bool(body.get("raw")))
    unit = units[0]
    return _finish(emulator, body, {"unit": unit, "policy_id": unit[:56], "asset_name": unit[56:], "tx_hash": record.hash, "holder": holder.addr})


def update(emulator, body):
    if not isinstance(body.get("metadata"), dict) or not body.get("unit"):
        raise ControlError(400, "unit and metadata are required")
    record, unit = emulator.registry.update(body["unit"], body["metadata"], bool(body.get("raw")))
    return _finish(emulator, body, {"unit": unit, "previous_unit": body["unit"], "tx_hash": record.hash})


def deregister(emulator, body):
    if not body.get("unit"):
        raise ControlError(400, "unit is required")
    record = emulator.registry.deregister(body["unit"])
    return _finish(emulator, body, {"tx_hash": record.hash})


def lock(emulator, body):
    agent_unit = body.get("agent_unit")
    if not agent_unit:
        raise ControlError(400, "agent_unit is required")
    seller = None
    if body.get("seller"):
        seller = _wallet(emulator, body["seller"], "node-wallet-0")
    else:
        holding = emulator.chain.utxo_holding(agent_unit)
        address = emulator.chain.utxo[holding].address if holding else None
        seller = emulator.deployment.wallet_at(address) if address else None
    buyer = _wallet(emulator, body.get("buyer"), "buyer-0")
    escrow = emulator.escrows.lock(agent_unit, _amount(body), body.get("contract", "v2"), buyer, seller)
    result = {"escrow_id": escrow.escrow_id, "tx_hash": escrow.key[0], "output_index": escrow.key[1]}
    return _finish(emulator, body, result)


def escrow_action(action: str):
    def handler(emulator, body):
        escrow = emulator.escrows.get(body.get("escrow_id", ""))
        if action == "dispute" and not escrow.fields["result_hash"]:
            raise ControlError(409, "a dispute needs a submitted result (call submit_result first)")
        record = emulator.escrows.step([escrow], "request_refund" if action == "dispute" else action)
        return _finish(emulator, body, {"tx_hash": record.hash, "state": STATE_NAMES[escrow.state] if escrow.key else "PaidOut"})

    return handler


def settle(emulator, body):
    escrow = emulator.escrows.get(body.get("escrow_id", ""))
    records = emulator.escrows.settle(escrow, body.get("outcome", ""))
    return _finish(emulator, body, {"tx_hashes": [r.hash for r in records], "tx_hash": records[-1].hash})


def escrow_status(emulator, body):
    escrow = emulator.escrows.get(body.get("escrow_id", ""))
    return {
        "escrow_id": escrow.escrow_id,
        "contract": escrow.version,
        "state": STATE_NAMES[escrow.state] if escrow.key else "PaidOut",
        "utxo": f"{escrow.key[0]}#{escrow.key[1]}" if escrow.key else None,
        "buyer": escrow.buyer.addr,
        "seller": escrow.seller.addr,
        "agent_unit": escrow.agent_unit,
        "amount": val.blockfrost_amount(escrow.value),
        "tx_hashes": [h for h, _, _ in escrow.history],
    }


def blocks(emulator, body):
    count = int(body.get("count", 1))
    if not 1 <= count <= 100_000:
        raise ControlError(400, "count must be 1..100000")
    mined = emulator.chain.mine(count)
    return {"blocks": [{"height": b.height, "hash": b.hash, "tx_count": len(b.txs)} for b in mined]}


def rollback(emulator, body):
    depth = int(body.get("depth", 1))
    if depth < 1:
        raise ControlError(400, "depth must be at least 1")
    result = emulator.chain.rollback(depth)
    emulator.escrows.forget_rolled_back()
    tip = emulator.chain.tip
    result["tip"] = {"height": tip.height, "hash": tip.hash} if tip else None
    return result


def faults(emulator, body):
    status = int(body.get("status", 0))
    if status not in (402, 403, 418, 425, 429, 500, 503):
        raise ControlError(400, "status must be one of 402, 403, 418, 425, 429, 500, 503")
    emulator.traffic.add_fault(status, int(body.get("count", 1)), body.get("path_prefix"))
    return {"ok": True}


def stats(emulator, body):
    return emulator.traffic.stats()


def reset_stats(emulator, body):
    emulator.traffic.reset_stats()
    return {"ok": True}


def bulk(emulator, body):
    return build_bulk(emulator, body)


GET = {"/_emulator/info": info, "/_emulator/stats": stats}
POST = {
    "/_emulator/registry/register": register,
    "/_emulator/registry/update": update,
    "/_emulator/registry/deregister": deregister,
    "/_emulator/escrow/lock": lock,
    "/_emulator/escrow/settle": settle,
    "/_emulator/escrow/status": escrow_status,
    "/_emulator/blocks": blocks,
    "/_emulator/rollback": rollback,
    "/_emulator/faults": faults,
    "/_emulator/stats/reset": reset_stats,
    "/_emulator/bulk": bulk,
}
for _action in ("submit_result", "release", "request_refund", "refund", "dispute", "resolve_dispute",
                "authorize_refund", "authorize_withdrawal", "cancel_refund_request"):
    POST[f"/_emulator/escrow/{_action}"] = escrow_action(_action)


def handle(emulator, method: str, path: str, body) -> tuple:
    table = GET if method == "GET" else POST
    handler = table.get(path) or (POST.get(path) if method == "GET" and path == "/_emulator/info" else None)
    if handler is None:
        return 404, {"error": f"no control endpoint {method} {path}"}
    if not isinstance(body, dict):
        return 400, {"error": "the body must be a JSON object"}
    try:
        with emulator.chain.lock:
            return 200, handler(emulator, body)
    except ControlError as error:
        return error.status, {"error": str(error)}
    except (RegistryError, EscrowError) as error:
        return 409, {"error": str(error)}
    except ValueError as error:
        return 400, {"error": str(error)}
