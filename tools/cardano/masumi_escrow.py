"""Masumi escrow payments (the "vested_pay" payment contract, v1 and v2), built as the Masumi
payment service builds them: a lock is an output at the contract address holding the price
(lovelace or the stablecoin) with an inline datum; every later step spends that output with a
redeemer, either continuing it at the address with the next datum or paying it out.

Datum v1 (constructor 0, 16 fields): buyer, seller, reference_key, reference_signature,
seller_nonce, buyer_nonce, collateral_return_lovelace, input_hash, result_hash, pay_by_time,
submit_result_time, unlock_time, external_dispute_unlock_time, seller_cooldown_time,
buyer_cooldown_time, state. Datum v2 (19 fields) adds buyer_return_address and
seller_return_address (Option<Address>, after buyer and seller) and agent_identifier (after
buyer_nonce). seller_nonce is 32 random bytes followed by the agent's identifier (policy id ++
asset name), as the service's blockchain identifier encodes it. Times are POSIX milliseconds.
States: FundsLocked 0, ResultSubmitted 1, RefundRequested 2, Disputed 3, v2 WithdrawAuthorized 4,
RefundAuthorized 5. Redeemers: Withdraw 0, SetRefundRequested 1, v1 UnSetRefundRequested 2 /
v2 AuthorizeWithdrawal 2, WithdrawRefund 3, WithdrawDisputed 4 (v2 with buyer and seller values
and admin signatures), SubmitResult 5, AuthorizeRefund 6."""

import hashlib
from dataclasses import dataclass, field

import plutus_data as pd
import values as val
from masumi_contracts import COOLDOWN_MS, FEE_PERMILLE

FUNDS_LOCKED, RESULT_SUBMITTED, REFUND_REQUESTED, DISPUTED, WITHDRAW_AUTHORIZED, REFUND_AUTHORIZED = range(6)
STATE_NAMES = ["FundsLocked", "ResultSubmitted", "RefundRequested", "Disputed", "WithdrawAuthorized", "RefundAuthorized"]
WITHDRAW, SET_REFUND_REQUESTED, UNSET_OR_AUTHORIZE_WITHDRAWAL, WITHDRAW_REFUND, WITHDRAW_DISPUTED, SUBMIT_RESULT, AUTHORIZE_REFUND = range(7)
TOKEN_LOCK_LOVELACE = 2_000_000
MINUTE_MS = 60_000


class EscrowError(ValueError):
    pass


@dataclass
class Escrow:
    escrow_id: str
    version: str
    buyer: object
    seller: object
    agent_unit: str
    fields: dict
    key: tuple  # the unspent output at the contract address, or None once paid out
    value: dict
    history: list = field(default_factory=list)  # [(tx hash, fields, key)] for rollback

    @property
    def state(self) -> int:
        return self.fields["state"]


def datum(version: str, f: dict) -> bytes:
    state = pd.constr(f["state"])
    if version == "v1":
        body = [
            f["buyer"], f["seller"], f["reference_key"], f["reference_signature"], f["seller_nonce"], f["buyer_nonce"],
            f["collateral_return_lovelace"], f["input_hash"], f["result_hash"], f["pay_by_time"],
            f["submit_result_time"], f["unlock_time"], f["external_dispute_unlock_time"],
            f["seller_cooldown_time"], f["buyer_cooldown_time"], state,
        ]
    else:
        body = [
            f["buyer"], pd.NONE, f["seller"], pd.NONE, f["reference_key"], f["reference_signature"],
            f["seller_nonce"], f["buyer_nonce"], f["agent_identifier"], f["collateral_return_lovelace"],
            f["input_hash"], f["result_hash"], f["pay_by_time"], f["submit_result_time"], f["unlock_time"],
            f["external_dispute_unlock_time"], f["seller_cooldown_time"], f["buyer_cooldown_time"], state,
        ]
    return pd.to_cbor(pd.constr(0, *body))


def asset_value_data(value: dict) -> pd.PlutusMap:
    """A value as Plutus `Pairs<policy, Pairs<name, Int>>` (lovelace under the empty policy)."""
    policies: dict = {}
    for unit, quantity in value.items():
        policy, name = (b"", b"") if unit == val.LOVELACE else (bytes.fromhex(unit[:56]), bytes.fromhex(unit[56:]))
        policies.setdefault(policy, []).append((name, quantity))
    return pd.PlutusMap(tuple((p, pd.PlutusMap(tuple(names))) for p, names in policies.items()))


class Escrows:
    def __init__(self, chain, deployment, factory):
        self.chain = chain
        self.deployment = deployment
        self.factory = factory
        self.escrows: dict = {}
        self.counter = 0
        self.token_stock: dict = {}  # buyer address -> the UTxO holding its stablecoins

    def _token_stock(self, buyer, tokens: dict) -> tuple:
        """A UTxO of the buyer holding at least `tokens` (a faucet payment when it has none)."""
        key = self.token_stock.get(buyer.addr)
        if key is None or key not in self.chain.utxo or not val.covers(self.chain.utxo[key].value, tokens):
            stock = {unit: max(q, 10**12) for unit, q in tokens.items()}
            key = (self.factory.faucet.top_up(buyer, TOKEN_LOCK_LOVELACE, stock).hash, 0)
            self.token_stock[buyer.addr] = key
        return key

    def _random(self, label: str) -> bytes:
        self.counter += 1
        return hashlib.blake2b(f"{self.deployment.seed}/{label}/{self.counter}".encode(), digest_size=32).digest()

    def get(self, escrow_id: str) -> Escrow:
        if escrow_id not in self.escrows:
            raise EscrowError(f"no escrow {escrow_id}")
        return self.escrows[escrow_id]

    def lock(self, agent_unit: str, amount: dict, version: str = "v2", buyer=None, seller=None) -> Escrow:
        return self.lock_many([(agent_unit, amount, buyer, seller)], version)[0]

    def lock_many(self, purchases: list, version: str = "v2") -> list:
        """Locks several purchases in one transaction (as the service's batched payments do):
        purchases = [(agent unit, value dict, buyer wallet or None, seller wallet or None)];
        every purchase in one batch has the same buyer (the first's)."""
        if version not in self.deployment.escrow:
            raise EscrowError("contract must be v1 or v2")
        contract = self.deployment.escrow[version]
        buyer = purchases[0][2] or self.deployment.wallet("buyer-0")
        now = self.factory.posix_ms()
        outputs, prepared, extra_inputs, tokens = [], [], [], {}
        for agent_unit, value, _, seller in purchases:
            seller = seller or self.deployment.wallet("node-wallet-0")
            value = dict(value)
            if set(value) != {val.LOVELACE}:
                value[val.LOVELACE] = max(value.get(val.LOVELACE, 0), TOKEN_LOCK_LOVELACE)
                tokens = val.add(tokens, {u: q for u, q in value.items() if u != val.LOVELACE})
            agent = bytes.fromhex(agent_unit)
            fields = {
                "buyer": buyer.as_plutus_address(), "seller": seller.as_plutus_address(),
                "reference_key": self._random("key"), "reference_signature": self._random("sig") * 2,
                "seller_nonce": self._random("seller") + agent, "buyer_nonce": self._random("buyer"),
                "agent_identifier": agent, "collateral_return_lovelace": 0,
                "input_hash": self._random("input"), "result_hash": b"",
                "pay_by_time": now + 10 * MINUTE_MS, "submit_result_time": now + 60 * MINUTE_MS,
                "unlock_time": now + 180 * MINUTE_MS, "external_dispute_unlock_time": now + 360 * MINUTE_MS,
                "seller_cooldown_time": 0, "buyer_cooldown_time": 0, "state": FUNDS_LOCKED,
            }
            outputs.append((contract.addr, value, datum(version, fields)))
            prepared.append((agent_unit, seller, fields, value))
        if tokens:
            extra_inputs.append(self._token_stock(buyer, tokens))
        record = self.factory.submit(
            buyer, outputs, extra_inputs=extra_inputs, metadata={674: {"msg": ["Masumi", "PaymentBatched"]}}
        )
        if tokens:  # the change output carries the buyer's remaining tokens
            self.token_stock[buyer.addr] = (record.hash, len(record.outputs) - 1)
        escrows = []
        for index, (agent_unit, seller, fields, value) in enumerate(prepared):
            escrow_id = f"{record.hash}#{index}"
            escrow = Escrow(escrow_id, version, buyer, seller, agent_unit, fields, (record.hash, index), value)
            escrow.history.append((record.hash, dict(fields), escrow.key))
            self.escrows[escrow_id] = escrow
            escrows.append(escrow)
        return escrows

    # ---- single steps (each one transaction) ---------------------------------------------
    def step(self, escrows: list, action: str):
        """Applies one action to one or more escrows of the same contract in one transaction
        (v2 allows several script inputs per transaction; v1 exactly one)."""
        if not escrows:
            raise EscrowError("no escrow given")
        version = escrows[0].version
        if any(e.version != version for e in escrows) or (version == "v1" and len(escrows) > 1):
            raise EscrowError("one v1 escrow per transaction; v2 escrows may be batched")
        if any(e.key is None for e in escrows):
            raise EscrowError("escrow already paid out")
        contract = self.deployment.escrow[version]
        spends, outputs, updates, signers = [], [], [], []
        payer = None
        for escrow in escrows:
            redeemer, next_fields, payouts, signer, cosigners = self._plan(escrow, action)
            payer = payer or signer
            signers += cosigners
            if signer is not payer:
                signers.append(signer)
            spends.append((escrow.key, contract, redeemer))
            position = None
            if next_fields is not None:
                position = len(outputs)
                outputs.append((contract.addr, escrow.value, datum(version, next_fields)))
            outputs += payouts
            updates.append((escrow, next_fields, position))
        kinds = {"submit_result": "SubmitResult", "release": "Withdraw", "request_refund": "SetRefundRequested",
                 "refund": "WithdrawRefund", "resolve_dispute": "WithdrawDisputed", "authorize_refund": "AuthorizeRefund",
                 "authorize_withdrawal": "AuthorizeWithdrawal", "cancel_refund_request": "UnSetRefundRequested"}
        record = self.factory.submit(
            payer, outputs, script_spends=spends, signers=signers,
            metadata={674: {"msg": ["Masumi"] + [kinds[action]] * len(escrows)}},
        )
        for escrow, next_fields, position in updates:
            if next_fields is None:
                escrow.key = None
            else:
                escrow.fields, escrow.key = next_fields, (record.hash, position)
            escrow.history.append((record.hash, dict(escrow.fields), escrow.key))
        return record

    def _plan(self, escrow: Escrow, action: str):
        f, v, state = dict(escrow.fields), escrow.version, escrow.state
        now = self.factory.posix_ms()
        seller, buyer = escrow.seller, escrow.buyer

        def require(allowed, why=""):
            if state not in allowed:
                raise EscrowError(f"{action} needs state {[STATE_NAMES[s] for s in allowed]}, escrow is {STATE_NAMES[state]}{why}")

        if action == "submit_result":
            f.update(result_hash=self._random("result"), seller_cooldown_time=now + COOLDOWN_MS, buyer_cooldown_time=0)
            f["state"] = RESULT_SUBMITTED if state in (FUNDS_LOCKED, RESULT_SUBMITTED) else DISPUTED
            return pd.constr(SUBMIT_RESULT), f, [], seller, []
        if action == "request_refund":
            require((FUNDS_LOCKED, RESULT_SUBMITTED, DISPUTED))
            f.update(seller_cooldown_time=0, buyer_cooldown_time=now + COOLDOWN_MS)
            f["state"] = REFUND_REQUESTED if not f["result_hash"] else DISPUTED
            return pd.constr(SET_REFUND_REQUESTED), f, [], buyer, []
        if action == "cancel_refund_request":
            if v != "v1":
                raise EscrowError("cancel_refund_request is a v1 action (v2 has authorize_withdrawal)")
            require((REFUND_REQUESTED, DISPUTED))
            f.update(seller_cooldown_time=0, buyer_cooldown_time=now + COOLDOWN_MS)
            f["state"] = FUNDS_LOCKED if not f["result_hash"] else RESULT_SUBMITTED
            return pd.constr(UNSET_OR_AUTHORIZE_WITHDRAWAL), f, [], buyer, []
        if action == "authorize_withdrawal":
            if v != "v2":
                raise EscrowError("authorize_withdrawal is a v2 action")
            require((DISPUTED,))
            f.update(buyer_cooldown_time=now + COOLDOWN_MS, state=WITHDRAW_AUTHORIZED)
            return pd.constr(UNSET_OR_AUTHORIZE_WITHDRAWAL), f, [], buyer, []
        if action == "authorize_refund":
            if v != "v2":
                raise EscrowError("authorize_refund is a v2 action")
            require((FUNDS_LOCKED, RESULT_SUBMITTED, REFUND_REQUESTED, DISPUTED))
            f.update(result_hash=b"", seller_cooldown_time=now + COOLDOWN_MS, buyer_cooldown_time=0, state=REFUND_AUTHORIZED)
            return pd.constr(AUTHORIZE_REFUND), f, [], seller, []
        if action == "release":
            require((RESULT_SUBMITTED,) if v == "v1" else (RESULT_SUBMITTED, WITHDRAW_AUTHORIZED))
            return pd.constr(WITHDRAW), None, self._seller_payouts(escrow), seller, []
        if action == "refund":
            require((FUNDS_LOCKED, REFUND_REQUESTED) if v == "v1" else (FUNDS_LOCKED, REFUND_REQUESTED, REFUND_AUTHORIZED))
            if f["result_hash"]:
                raise EscrowError("refund needs no submitted result")
            return pd.constr(WITHDRAW_REFUND), None, [(buyer.addr, escrow.value, None)], buyer, []
        if action == "resolve_dispute":
            require((DISPUTED,))
            return self._dispute_resolution(escrow)
        raise EscrowError(f"unknown escrow action {action}")

    def _seller_payouts(self, escrow: Escrow) -> list:
        if escrow.version == "v2":
            return [(escrow.seller.addr, escrow.value, None)]
        fee = {u: q * FEE_PERMILLE // 1000 for u, q in escrow.value.items()}
        fee[val.LOVELACE] = max(fee.get(val.LOVELACE, 0), 1_000_000)
        own_ref = pd.to_cbor(pd.output_reference_data(bytes.fromhex(escrow.key[0]), escrow.key[1]))
        seller_value = {u: q - fee.get(u, 0) for u, q in escrow.value.items()}
        seller_value[val.LOVELACE] = max(seller_value[val.LOVELACE], 1_000_000)
        return [(self.deployment.fee_wallet.addr, fee, own_ref), (escrow.seller.addr, seller_value, None)]

    def _dispute_resolution(self, escrow: Escrow):
        """The admins split the value: half (rounded down) to the buyer, the rest to the seller,
        each side at least 1 ada (the admin paying any top-up)."""
        half = {u: q // 2 for u, q in escrow.value.items()}
        rest = val.subtract(escrow.value, half)
        buyer_value = {**half, val.LOVELACE: max(half.get(val.LOVELACE, 0), 1_000_000)}
        seller_value = {**rest, val.LOVELACE: max(rest.get(val.LOVELACE, 0), 1_000_000)}
        admins = self.deployment.admins[:2]
        payouts = [(escrow.buyer.addr, buyer_value, None), (escrow.seller.addr, seller_value, None)]
        if escrow.version == "v1":
            return pd.constr(WITHDRAW_DISPUTED), None, payouts, admins[0], admins[1:]
        own_ref = pd.output_reference_data(bytes.fromhex(escrow.key[0]), escrow.key[1])
        message = pd.to_cbor(pd.constr(0, own_ref, asset_value_data(buyer_value), asset_value_data(seller_value)))
        signatures = [
            pd.constr(0, a.signing_key.to_verification_key().payload, b"", a.signing_key.sign(message)) for a in admins
        ]
        redeemer = pd.constr(WITHDRAW_DISPUTED, asset_value_data(buyer_value), asset_value_data(seller_value), signatures)
        return redeemer, None, payouts, admins[0], []

    def forget_rolled_back(self) -> None:
        """After a rollback: every escrow back to its newest step still applied, escrows whose
        lock was dropped forgotten."""
        for escrow_id in list(self.escrows):
            escrow = self.escrows[escrow_id]
            while escrow.history and escrow.history[-1][0] not in self.chain.txs:
                escrow.history.pop()
            if not escrow.history:
                del self.escrows[escrow_id]
                continue
            _, fields, key = escrow.history[-1]
            escrow.fields, escrow.key = dict(fields), key

    def settle(self, escrow: Escrow, outcome: str) -> list:
        """The whole sequence from a fresh lock to an outcome: released (submit result,
        withdraw), refunded (withdraw refund), disputed (submit result, request refund ->
        Disputed, admins withdraw). A refund needs no request once the result
        deadline has passed without a result; the step-by-step endpoints offer the other paths."""
        plans = {
            "released": ["submit_result", "release"],
            "refunded": ["refund"],
            "disputed": ["submit_result", "request_refund", "resolve_dispute"],
        }
        if outcome not in plans:
            raise EscrowError("outcome must be released, refunded or disputed")
        return [self.step([escrow], action) for action in plans[outcome]]
