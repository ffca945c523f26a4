"""Masumi registry transactions, shaped as the Masumi payment service builds them: registering
mints the agent's NFT under the registry policy to the node's wallet (v1 asset name
blake2b_256(tx id ++ output index as 4 bytes), v2 nonce 0x10 ++ blake2b_224(tx id ++ index) ++
3-byte version 000000, both from a UTxO the transaction consumes), with the agent's metadata
under CIP-25 label 721 ({policy id hex: {asset name hex: {...}}, "version": "1"}) and
674 {"msg": ["Masumi", "RegisterAgent"]}; a v2 update burns version n and mints n+1 in one
transaction (UpdateAction, "UpdateAgent"); deregistering burns the NFT (BurnAction,
"DeregisterAgent"). Redeemers: v1 MintAction 0 / BurnAction 1; v2 MintAction 0 / UpdateAction 1
/ BurnAction 2."""

import hashlib
import itertools

import plutus_data as pd
import values as val
from metadata_json import chunk_long_strings

V2_NONCE = 0x10
NFT_OUTPUT_LOVELACE = 1_500_000
REDEEMERS = {
    "v1": {"mint": pd.constr(0), "burn": pd.constr(1)},
    "v2": {"mint": pd.constr(0), "update": pd.constr(1), "burn": pd.constr(2)},
}


class RegistryError(ValueError):
    pass


def v1_asset_name(tx_id: bytes, index: int) -> bytes:
    return hashlib.blake2b(tx_id + index.to_bytes(4, "big"), digest_size=32).digest()


def v2_asset_name(tx_id: bytes, index: int, version: int = 0, nonce: int = V2_NONCE) -> bytes:
    root = hashlib.blake2b(tx_id + index.to_bytes(4, "big"), digest_size=28).digest()
    return bytes([nonce]) + root + version.to_bytes(3, "big")


def ledger_metadata(metadata: dict, raw: bool):
    return metadata if raw else chunk_long_strings(metadata)


class Registry:
    def __init__(self, chain, deployment, factory):
        self.chain = chain
        self.deployment = deployment
        self.factory = factory

    def contract_of(self, unit: str):
        for version, contract in self.deployment.registry.items():
            if unit.startswith(contract.script_hash.hex()):
                return version, contract
        raise RegistryError(f"{unit} is not under a registry policy")

    def register(self, metadata: dict, contract_version: str = "v2", holder=None, raw: bool = False) -> list:
        """Registers one agent; see register_many."""
        return self.register_many([metadata], contract_version, holder, raw)

    def register_many(self, metadatas: list, contract_version: str = "v2", holder=None, raw: bool = False):
        """Mints one NFT per metadata object in a single transaction (v2 batch minting; v1 mints
        one per transaction, so pass one). Returns (record, [unit, ...])."""
        if contract_version not in self.deployment.registry:
            raise RegistryError("contract must be v1 or v2")
        if contract_version == "v1" and len(metadatas) != 1:
            raise RegistryError("the v1 registry mints one asset per transaction")
        contract = self.deployment.registry[contract_version]
        holder = holder or self.deployment.wallet("node-wallet-0")
        seeds = self._seed_utxos(holder, len(metadatas))
        names = []
        for tx_hash, index in seeds:
            tx_id = bytes.fromhex(tx_hash)
            name = v1_asset_name(tx_id, index) if contract_version == "v1" else v2_asset_name(tx_id, index)
            names.append(name.hex())
        policy = contract.script_hash.hex()
        label_721 = {policy: {n: ledger_metadata(m, raw) for n, m in zip(names, metadatas)}, "version": "1"}
        outputs = [(holder.addr, {val.LOVELACE: NFT_OUTPUT_LOVELACE, policy + n: 1}, None) for n in names]
        record = self.factory.submit(
            holder,
            outputs,
            extra_inputs=seeds,
            mints=[(contract, {n: 1 for n in names}, REDEEMERS[contract_version]["mint"])],
            metadata={721: label_721, 674: {"msg": ["Masumi", "RegisterAgent"]}},
        )
        return record, [policy + n for n in names]

    def _seed_utxos(self, holder, count: int) -> list:
        """Lovelace-only UTxOs of the holder for the asset names to derive from (topped up when
        it has too few)."""
        keys = [k for k, _ in itertools.islice(self.chain.ada_utxos(holder.addr), count)]
        if len(keys) < count:
            top_up = self.factory.faucet.top_up(holder, 10_000_000, outputs=count - len(keys))
            keys += [(top_up.hash, i) for i in range(count - len(keys))]
        return keys

    def _locate(self, unit: str):
        key = self.chain.utxo_holding(unit)
        if key is None:
            raise RegistryError(f"no unspent output holds {unit} (never registered, or deregistered)")
        output = self.chain.utxo[key]
        holder = self._wallet_at(output.address)
        return key, holder

    def _wallet_at(self, address: str):
        wallet = self.deployment.wallet_at(address)
        if wallet is None:
            raise RegistryError(f"the NFT is held at {address}, not a wallet of this emulator")
        return wallet

    def update(self, unit: str, metadata: dict, raw: bool = False):
        version, contract = self.contract_of(unit)
        if version == "v1":
            raise RegistryError("the v1 registry has no update action: deregister and register again")
        key, holder = self._locate(unit)
        policy, old_name = unit[:56], bytes.fromhex(unit[56:])
        if len(old_name) != 32:
            raise RegistryError("a v2 registry asset name is 32 bytes")
        new_name = (old_name[:29] + (int.from_bytes(old_name[29:], "big") + 1).to_bytes(3, "big")).hex()
        record = self.factory.submit(
            holder,
            [(holder.addr, {val.LOVELACE: NFT_OUTPUT_LOVELACE, policy + new_name: 1}, None)],
            extra_inputs=[key],
            mints=[(contract, {old_name.hex(): -1, new_name: 1}, REDEEMERS["v2"]["update"])],
            metadata={
                721: {policy: {new_name: ledger_metadata(metadata, raw)}, "version": "1"},
                674: {"msg": ["Masumi", "UpdateAgent"]},
            },
        )
        return record, policy + new_name

    def deregister(self, unit: str):
        version, contract = self.contract_of(unit)
        key, holder = self._locate(unit)
        return self.factory.submit(
            holder,
            [],
            extra_inputs=[key],
            mints=[(contract, {unit[56:]: -1}, REDEEMERS[version]["burn"])],
            metadata={674: {"msg": ["Masumi", "DeregisterAgent"]}},
        )
