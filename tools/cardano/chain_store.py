"""The emulated chain: the UTxO set the transaction builders spend from, the pending pool,
the blocks (height, slot, time, hash chained over the previous hash and the transaction ids),
and the indexes Blockfrost's endpoints read (address -> transactions, asset -> mints and burns
and holders, policy -> assets, script -> redeemers, datum hash -> datum); rollback undoes all of
it exactly.

A submitted transaction changes the UTxO set at once (so the next action can spend its outputs)
but is visible through Blockfrost only once a block includes it, as on a real chain."""

import hashlib
import threading
from dataclasses import dataclass, field

from pycardano.crypto.bech32 import Encoding, bech32_encode, convertbits

import values as val

GENESIS_TIME = 1767225600  # 2026-01-01T00:00:00Z: block time = GENESIS_TIME + slot
SECONDS_PER_BLOCK = 20
EPOCH_LENGTH = 432000


def blake2b(data: bytes, size: int = 32) -> bytes:
    return hashlib.blake2b(data, digest_size=size).digest()


def bech32(hrp: str, data: bytes) -> str:
    return bech32_encode(hrp, convertbits(data, 8, 5), Encoding.BECH32)


@dataclass
class OutputRecord:
    tx_hash: str
    index: int
    address: str
    value: dict
    datum_cbor: bytes | None = None
    data_hash: str | None = None
    payment_script_hash: str | None = None  # set when the address is a script address


@dataclass
class RedeemerRecord:
    purpose: str  # "spend" | "mint"
    index: int
    script_hash: str
    data_cbor: bytes
    data_hash: str
    mem: int
    steps: int
    fee: int


@dataclass
class TxRecord:
    hash: str
    cbor: bytes
    fee: int
    inputs: list  # [(tx_hash, index)], ledger order
    collateral: list
    outputs: list  # [OutputRecord]
    mint: list  # [(unit, quantity)]
    metadata: list  # [(label, json)]
    redeemers: list  # [RedeemerRecord]
    invalid_before: int | None
    invalid_hereafter: int | None
    resolved_inputs: list = field(default_factory=list)  # [OutputRecord]
    resolved_collateral: list = field(default_factory=list)
    block_height: int | None = None
    index: int | None = None


@dataclass
class Block:
    height: int
    hash: str
    slot: int
    time: int
    previous: str | None
    txs: list
    size: int
    output: int
    fees: int
    slot_leader: str
    block_vrf: str
    op_cert: str
    op_cert_counter: int


class Chain:
    def __init__(self, seed: int, start_height: int = 1):
        self.lock = threading.RLock()
        self.seed = seed
        self.start_height = start_height
        self.utxo: dict = {}
        self.ada_only: dict = {}  # address -> {key: lovelace} of unspent lovelace-only outputs
        self.token_utxos: dict = {}  # unit -> {key: None} of unspent outputs holding it
        self.outputs: dict = {}  # every output ever created, for resolving inputs
        self.txs: dict = {}
        self.applied: list = []  # tx hashes in application order (mined, then pending)
        self.pending: list = []
        self.blocks: list = []
        self.block_by_hash: dict = {}
        self.consumed_by: dict = {}  # (tx, index) -> tx hash (mined)
        self.address_txs: dict = {}  # address -> [(height, index, tx hash)]
        self.asset_events: dict = {}  # unit -> [(tx hash, quantity)]
        self.asset_holders: dict = {}  # unit -> {address: quantity}
        self.policy_assets: dict = {}  # policy -> [unit] by first mint
        self.script_redeemers: dict = {}  # script hash -> [(tx hash, RedeemerRecord)]
        self.datums: dict = {}  # datum hash -> [cbor, reference count]
        self.known_scripts: set = set()
        self.generation = 0  # bumped by every rollback (response caches key on it)

    # ---- genesis and the UTxO set -------------------------------------------------------
    def add_genesis_output(self, address: str, value: dict) -> tuple:
        key = (blake2b(f"genesis/{self.seed}/{address}".encode()).hex(), 0)
        record = OutputRecord(key[0], 0, address, dict(value))
        self.outputs[key] = record
        self._add_utxo(key, record)
        return key

    def _add_utxo(self, key: tuple, record: OutputRecord) -> None:
        self.utxo[key] = record
        if set(record.value) == {val.LOVELACE} and record.datum_cbor is None:
            self.ada_only.setdefault(record.address, {})[key] = record.value[val.LOVELACE]
        for unit in record.value:
            if unit != val.LOVELACE:
                self.token_utxos.setdefault(unit, {})[key] = None

    def _remove_utxo(self, key: tuple) -> OutputRecord:
        record = self.utxo.pop(key)
        self.ada_only.get(record.address, {}).pop(key, None)
        for unit in record.value:
            if unit != val.LOVELACE:
                self.token_utxos[unit].pop(key, None)
        return record

    def utxo_holding(self, unit: str) -> tuple | None:
        """The newest unspent output holding a unit (for an NFT: where it is)."""
        keys = self.token_utxos.get(unit)
        return next(reversed(keys)) if keys else None

    def ada_utxos(self, address: str):
        """Unspent lovelace-only outputs of an address, newest first: (key, lovelace) pairs
        (an iterator: do not change the UTxO set while reading it)."""
        return reversed(self.ada_only.get(address, {}).items())

    def utxos_at(self, address: str) -> list:
        return [(k, r) for k, r in self.utxo.items() if r.address == address]

    # ---- submission ---------------------------------------------------------------------
    def submit(self, record: TxRecord) -> None:
        with self.lock:
            record.resolved_inputs = [self.utxo[key] for key in record.inputs]
            record.resolved_collateral = [self.outputs[key] for key in record.collateral]
            for key in record.inputs:
                self._remove_utxo(key)
            for output in record.outputs:
                key = (record.hash, output.index)
                self.outputs[key] = output
                self._add_utxo(key, output)
            self.txs[record.hash] = record
            self.applied.append(record.hash)
            self.pending.append(record.hash)

    def _unapply(self, tx_hash: str) -> None:
        record = self.txs.pop(tx_hash)
        for output in record.outputs:
            key = (record.hash, output.index)
            self._remove_utxo(key)
            del self.outputs[key]
        for key, resolved in zip(record.inputs, record.resolved_inputs):
            self._add_utxo(key, resolved)
        assert self.applied.pop() == tx_hash

    # ---- blocks -------------------------------------------------------------------------
    @property
    def tip(self) -> Block | None:
        return self.blocks[-1] if self.blocks else None

    def next_slot(self) -> int:
        height = self.start_height + len(self.blocks)
        return height * SECONDS_PER_BLOCK

    def mine(self, count: int = 1, max_txs: int | None = None) -> list:
        with self.lock:
            mined = []
            for _ in range(count):
                take = self.pending if max_txs is None else self.pending[:max_txs]
                self.pending = self.pending[len(take):]
                mined.append(self._mine_block(take))
            return mined

    def _mine_block(self, tx_hashes: list) -> Block:
        height = self.start_height + len(self.blocks)
        slot = height * SECONDS_PER_BLOCK
        previous = self.tip.hash if self.tip else None
        header = (previous or "").encode() + height.to_bytes(8, "big") + slot.to_bytes(8, "big")
        block_hash = blake2b(header + b"".join(bytes.fromhex(h) for h in tx_hashes)).hex()
        pool = blake2b(f"pool/{self.seed}/{height % 7}".encode(), 28)
        records = [self.txs[h] for h in tx_hashes]
        block = Block(
            height=height,
            hash=block_hash,
            slot=slot,
            time=GENESIS_TIME + slot,
            previous=previous,
            txs=list(tx_hashes),
            size=1000 + sum(len(r.cbor) for r in records),
            output=sum(o.value.get(val.LOVELACE, 0) for r in records for o in r.outputs),
            fees=sum(r.fee for r in records),
            slot_leader=bech32("pool", pool),
            block_vrf=bech32("vrf_vk", blake2b(b"vrf" + pool)),
            op_cert=blake2b(b"opcert" + pool + height.to_bytes(8, "big")).hex(),
            op_cert_counter=height % 13,
        )
        self.blocks.append(block)
        self.block_by_hash[block_hash] = block
        for index, record in enumerate(records):
            record.block_height, record.index = height, index
            self._index(record)
        return block

    def block_at(self, height: int) -> Block | None:
        position = height - self.start_height
        return self.blocks[position] if 0 <= position < len(self.blocks) else None

    # ---- Blockfrost indexes ---------------------------------------------------------------
    def _index(self, record: TxRecord) -> None:
        entry = (record.block_height, record.index, record.hash)
        addresses = dict.fromkeys([o.address for o in record.resolved_inputs] + [o.address for o in record.outputs])
        for address in addresses:
            self.address_txs.setdefault(address, []).append(entry)
        for key in record.inputs:
            self.consumed_by[key] = record.hash
        for unit, quantity in record.mint:
            events = self.asset_events.setdefault(unit, [])
            if not events:
                self.policy_assets.setdefault(unit[:56], []).append(unit)
            events.append((record.hash, quantity))
        for output in record.resolved_inputs:
            self._hold(output, -1)
        for output in record.outputs:
            self._hold(output, 1)
            if output.data_hash:
                self.datums.setdefault(output.data_hash, [output.datum_cbor, 0])[1] += 1
        for redeemer in record.redeemers:
            self.script_redeemers.setdefault(redeemer.script_hash, []).append((record.hash, redeemer))
            self.known_scripts.add(redeemer.script_hash)

    def _unindex(self, record: TxRecord) -> None:
        for redeemer in reversed(record.redeemers):
            self.script_redeemers[redeemer.script_hash].pop()
        for output in reversed(record.outputs):
            if output.data_hash:
                entry = self.datums[output.data_hash]
                entry[1] -= 1
                if entry[1] == 0:
                    del self.datums[output.data_hash]
            self._hold(output, -1)
        for output in record.resolved_inputs:
            self._hold(output, 1)
        for unit, _ in reversed(record.mint):
            events = self.asset_events[unit]
            events.pop()
            if not events:
                del self.asset_events[unit]
                self.policy_assets[unit[:56]].remove(unit)
                self.asset_holders.pop(unit, None)
        for key in record.inputs:
            self.consumed_by.pop(key, None)
        addresses = dict.fromkeys([o.address for o in record.resolved_inputs] + [o.address for o in record.outputs])
        for address in addresses:
            entries = self.address_txs[address]
            assert entries[-1][2] == record.hash
            entries.pop()
            if not entries:
                del self.address_txs[address]
        record.block_height = record.index = None

    def _hold(self, output: OutputRecord, sign: int) -> None:
        for unit, quantity in output.value.items():
            if unit == val.LOVELACE:
                continue
            holders = self.asset_holders.setdefault(unit, {})
            left = holders.get(output.address, 0) + sign * quantity
            if left:
                holders[output.address] = left
            else:
                holders.pop(output.address, None)

    # ---- rollback -----------------------------------------------------------------------
    def rollback(self, depth: int) -> dict:
        """Drops the pending pool and the newest `depth` blocks with their transactions."""
        with self.lock:
            depth = min(depth, len(self.blocks))
            dropped_txs = []
            for tx_hash in reversed(self.pending):
                self._unapply(tx_hash)
                dropped_txs.append(tx_hash)
            self.pending = []
            dropped_blocks = []
            for _ in range(depth):
                block = self.blocks.pop()
                del self.block_by_hash[block.hash]
                for tx_hash in reversed(block.txs):
                    self._unindex(self.txs[tx_hash])
                    self._unapply(tx_hash)
                    dropped_txs.append(tx_hash)
                dropped_blocks.append(block.hash)
            self.generation += 1
            return {"dropped_blocks": dropped_blocks, "dropped_txs": dropped_txs}
