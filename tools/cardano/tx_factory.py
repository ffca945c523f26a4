"""Builds, balances and signs real pycardano `Transaction`s against the emulated UTxO set, and
turns each into the `TxRecord` the chain indexes: inputs sorted as the ledger orders them,
redeemer pointers computed from that order, Plutus V3 scripts in the witness set, inline
datums, CIP-25/674 metadata as auxiliary data, a fee from the size and execution units, change
back to the paying wallet, and a faucet (a genesis output) that tops wallets up on demand. The
transaction id is the one pycardano computes over the serialised body."""

import contextlib
import math

import cbor2
from pycardano import (
    Address,
    AlonzoMetadata,
    AuxiliaryData,
    ExecutionUnits,
    Metadata,
    MultiAsset,
    Redeemer,
    RedeemerTag,
    ScriptDataHash,
    TransactionBody,
    TransactionId,
    TransactionInput,
    TransactionOutput,
    TransactionWitnessSet,
    VerificationKeyHash,
    VerificationKeyWitness,
)
from pycardano.plutus import COST_MODELS
from pycardano.serialization import CBORSerializable, RawCBOR, default_encoder

import plutus_data as pd
import values as val
from chain_store import GENESIS_TIME, OutputRecord, RedeemerRecord, TxRecord, blake2b
from metadata_json import check_ledger_limits, to_blockfrost_json

MIN_CHANGE = 1_000_000
FAUCET_TOP_UP = 5_000_000_000
MINT_EX_UNITS = (1_250_000, 420_000_000)
SPEND_EX_UNITS = (2_600_000, 850_000_000)
_COST_MODELS_CBOR = cbor2.dumps(COST_MODELS, default=default_encoder, canonical=True)


def execution_fee(mem: int, steps: int) -> int:
    return math.ceil(mem * 0.0577 + steps * 0.0000721)


@contextlib.contextmanager
def without_type_checks():
    """pycardano re-checks every field's type on each serialisation; the bulk builder, whose
    objects are all made here, skips that to build hundreds of thousands of transactions."""
    original = CBORSerializable.validate
    CBORSerializable.validate = lambda self: None
    try:
        yield
    finally:
        CBORSerializable.validate = original


class TxFactory:
    def __init__(self, chain, deployment, faucet):
        self.chain = chain
        self.deployment = deployment
        self.faucet = faucet
        self._addresses: dict = {}

    def address(self, bech32: str) -> Address:
        if bech32 not in self._addresses:
            self._addresses[bech32] = Address.from_primitive(bech32)
        return self._addresses[bech32]

    def posix_ms(self, seconds_from_now: int = 0) -> int:
        return (GENESIS_TIME + self.chain.next_slot() + seconds_from_now) * 1000

    def build(self, payer, outputs, *, script_spends=(), extra_inputs=(), mints=(), metadata=None, signers=()):
        """outputs: [(address str, value dict, inline datum CBOR or None)];
        script_spends: [(utxo key, Contract, redeemer Plutus Data)];
        extra_inputs: [utxo key] spent with the payer's (or a signer's) key;
        mints: [(Contract, {asset name hex: quantity}, redeemer Plutus Data)];
        metadata: {label: ledger metadatum}; signers: extra wallets whose keys sign."""
        chain = self.chain
        with chain.lock:
            fixed = [key for key, _, _ in script_spends] + list(extra_inputs)
            value_in = val.add(*(chain.utxo[key].value for key in fixed))
            minted = {}
            for contract, names, _ in mints:
                for name, quantity in names.items():
                    minted[contract.script_hash.hex() + name] = quantity
            value_out = val.add(*(value for _, value, _ in outputs))
            aux = self._auxiliary_data(metadata)
            redeemer_count = len(script_spends) + len(mints)
            size_guess = 300 + 45 * (len(fixed) + 2) + 90 * (len(outputs) + 1)
            size_guess += sum(len(c.script) for c in self._scripts(script_spends, mints))
            size_guess += len(aux.to_cbor()) if aux else 0
            exec_fee = len(script_spends) * execution_fee(*SPEND_EX_UNITS) + len(mints) * execution_fee(*MINT_EX_UNITS)
            fee = 155_381 + 44 * size_guess + exec_fee
            available = val.add(value_in, minted)
            shortfall = value_out.get(val.LOVELACE, 0) + fee + MIN_CHANGE - available.get(val.LOVELACE, 0)
            selected = self._select(payer, shortfall, need_collateral=redeemer_count > 0)
            inputs = sorted(set(fixed) | {key for key, _ in selected})
            change = val.subtract(val.add(available, *(chain.utxo[k].value for k, _ in selected)), value_out)
            change = val.subtract(change, {val.LOVELACE: fee})
            if any(q < 0 for q in change.values()):
                raise ValueError(f"transaction does not balance: {change}")
            all_outputs = list(outputs) + [(payer.addr, change, None)]
            return self._assemble(payer, inputs, all_outputs, script_spends, mints, minted, aux, fee, selected, signers)

    def _scripts(self, script_spends, mints):
        contracts = {c.script_hash: c for _, c, _ in script_spends}
        contracts.update({c.script_hash: c for c, _, _ in mints})
        return [contracts[h] for h in sorted(contracts)]

    def _auxiliary_data(self, metadata):
        if not metadata:
            return None
        for label, value in metadata.items():
            check_ledger_limits(value, f"/{label}")
        return AuxiliaryData(AlonzoMetadata(metadata=Metadata(metadata)))

    def _select(self, payer, shortfall: int, need_collateral: bool) -> list:
        address = payer.addr
        for attempt in range(2):
            chosen, total = [], 0
            for key, lovelace in self.chain.ada_utxos(address):
                if total >= shortfall and (chosen or not need_collateral):
                    break
                chosen.append((key, lovelace))
                total += lovelace
            if total >= shortfall and (chosen or not need_collateral):
                return chosen
            if attempt == 0:
                self.faucet.top_up(payer, max(FAUCET_TOP_UP, shortfall + MIN_CHANGE))
        raise ValueError(f"wallet {payer.name} cannot pay {shortfall} lovelace")

    def _assemble(self, payer, inputs, outputs, script_spends, mints, minted, aux, fee, selected, signers):
        chain = self.chain
        position = {key: i for i, key in enumerate(inputs)}
        redeemers = []
        records = []
        for key, contract, data in script_spends:
            redeemers.append((RedeemerTag.SPEND, position[key], contract, data, SPEND_EX_UNITS))
        policies = sorted({c.script_hash for c, _, _ in mints})
        for contract, _, data in mints:
            redeemers.append((RedeemerTag.MINT, policies.index(contract.script_hash), contract, data, MINT_EX_UNITS))
        redeemers.sort(key=lambda r: (r[0].value, r[1]))
        witness_redeemers = []
        for tag, index, contract, data, (mem, steps) in redeemers:
            data_cbor = pd.to_cbor(data)
            redeemer = Redeemer(RawCBOR(data_cbor), ExecutionUnits(mem, steps))
            redeemer.tag, redeemer.index = tag, index
            witness_redeemers.append(redeemer)
            records.append(
                RedeemerRecord(
                    "spend" if tag == RedeemerTag.SPEND else "mint", index, contract.script_hash.hex(), data_cbor,
                    blake2b(data_cbor).hex(), mem, steps, execution_fee(mem, steps),
                )
            )
        tx_outputs = []
        for address, value, datum in outputs:
            extra = {"datum": RawCBOR(datum)} if datum is not None else {}
            tx_outputs.append(TransactionOutput(self.address(address), val.to_pycardano(value), **extra))
        slot = chain.next_slot()
        required = [w for w in signers if w.key_hash != payer.key_hash]
        body = TransactionBody(
            inputs=[TransactionInput(TransactionId(bytes.fromhex(h)), i) for h, i in inputs],
            outputs=tx_outputs,
            fee=fee,
            ttl=slot + 3600,
            validity_start=slot - 60,
            auxiliary_data_hash=aux.hash() if aux else None,
            mint=self._mint_value(minted),
        )
        collateral = []
        if witness_redeemers:
            collateral = [selected[0][0]] if selected else [next(iter(chain.ada_utxos(payer.addr)))[0]]
            body.collateral = [TransactionInput(TransactionId(bytes.fromhex(h)), i) for h, i in collateral]
            body.required_signers = [VerificationKeyHash(w.key_hash) for w in [payer] + required]
            body.script_data_hash = self._script_data_hash(witness_redeemers)
        body_cbor = body.to_cbor()
        body_hash = blake2b(body_cbor)
        keys = {payer.key_hash: payer.signing_key}
        keys.update({w.key_hash: w.signing_key for w in required})
        witnesses = TransactionWitnessSet(
            vkey_witnesses=[VerificationKeyWitness(k.to_verification_key(), k.sign(body_hash)) for k in keys.values()]
        )
        if witness_redeemers:
            witnesses.plutus_v3_script = [c.script for c in self._scripts(script_spends, mints)]
            witnesses.redeemer = witness_redeemers
        # The Transaction array [body, witnesses, is_valid, auxiliary data], as pycardano's
        # Transaction.to_cbor writes it, with the body serialised once (for its hash and here).
        tx_cbor = b"\x84" + body_cbor + witnesses.to_cbor() + b"\xf5" + (aux.to_cbor() if aux else b"\xf6")
        tx_hash = body_hash.hex()
        output_records = []
        for index, (address, value, datum) in enumerate(outputs):
            script_hash = self.address(address).payment_part
            is_script = self.deployment.contract_by_script_hash(bytes(script_hash)) is not None
            output_records.append(
                OutputRecord(
                    tx_hash, index, address, value, datum, blake2b(datum).hex() if datum is not None else None,
                    bytes(script_hash).hex() if is_script else None,
                )
            )
        metadata = [(label, to_blockfrost_json(value)) for label, value in sorted((aux.data.metadata if aux else {}).items())]
        return TxRecord(
            hash=tx_hash, cbor=tx_cbor, fee=fee, inputs=inputs, collateral=collateral, outputs=output_records,
            mint=list(minted.items()), metadata=metadata, redeemers=records,
            invalid_before=slot - 60, invalid_hereafter=slot + 3600,
        )

    @staticmethod
    def _mint_value(minted: dict) -> MultiAsset | None:
        return val.multi_asset(minted) if minted else None

    @staticmethod
    def _script_data_hash(redeemers) -> ScriptDataHash:
        encoded = bytearray(pd._head(4, len(redeemers)))
        for r in redeemers:
            encoded += bytes([0x84]) + cbor2.dumps(r.tag.value) + cbor2.dumps(r.index) + r.data.cbor
            encoded += cbor2.dumps([r.ex_units.mem, r.ex_units.steps])
        return ScriptDataHash(blake2b(bytes(encoded) + _COST_MODELS_CBOR))

    def submit(self, payer, outputs, **kwargs) -> TxRecord:
        record = self.build(payer, outputs, **kwargs)
        self.chain.submit(record)
        return record


class Faucet:
    """A genesis output holding most of the test ada and a supply of the network's stablecoin,
    paying wallets on demand (each payment a transaction of its own)."""

    def __init__(self, chain, deployment):
        self.chain = chain
        self.deployment = deployment
        self.wallet = deployment.wallet("faucet")
        self.factory = None
        self.key = chain.add_genesis_output(
            self.wallet.addr, {val.LOVELACE: 40_000_000_000_000_000, deployment.stablecoin_unit: 10**15}
        )

    def top_up(self, wallet, lovelace: int, tokens: dict | None = None, outputs: int = 1) -> TxRecord:
        """Pays the wallet `outputs` outputs of `lovelace` (the first also holding `tokens`)."""
        values = [{val.LOVELACE: lovelace, **(tokens or {})}] + [{val.LOVELACE: lovelace}] * (outputs - 1)
        return self._pay(wallet, values)

    def _pay(self, wallet, values: list) -> TxRecord:
        chain = self.chain
        key = self.key
        if key not in chain.utxo:  # a rollback dropped the faucet's newest change
            key = next(k for k, r in reversed(list(chain.utxo.items())) if r.address == self.wallet.addr)
        source = chain.utxo[key]
        fee = 180_000 + 5_000 * len(values)
        change = val.subtract(source.value, val.add(*values, {val.LOVELACE: fee}))
        outputs = [(wallet.addr, value, None) for value in values] + [(self.wallet.addr, change, None)]
        record = self.factory._assemble(self.wallet, [key], outputs, (), (), {}, None, fee, [(key, 0)], ())
        chain.submit(record)
        self.key = (record.hash, len(values))
        return record
