"""The emulated Masumi deployment: the wallets (deterministic pycardano keys derived from the
seed) and the four Plutus V3 scripts (registry minting policy v1 and v2, escrow "vested_pay"
payment contract v1 and v2) with their parameters applied as the Masumi payment service applies
them, their script hashes (policy ids) and their addresses on the chosen network.

The scripts are our own stand-ins, not Masumi's compiled validators (their code is not ours to
ship): each is a small always-succeeding UPLC program (`\\label params... ctx -> ()`) encoded
with tools/cardano/flat_uplc.py, applied to a label naming the contract and then to the same
parameters Masumi applies to the real one (v1 escrow: required admin signatures, admin key
hashes, fee address, fee permille, cooldown; v2 escrow: required signatures, admin key hashes,
cooldown; v1 registry: the v1 escrow address; v2 registry: none). Nothing here evaluates a
script, so their hashes are real script hashes of real programs, and every policy id, address
and asset name derived from them is computed exactly as the chain would."""

import hashlib
from dataclasses import dataclass

from pycardano import (
    Address,
    Network,
    PaymentSigningKey,
    PlutusV3Script,
    StakeSigningKey,
    plutus_script_hash,
)

import flat_uplc
import plutus_data as pd

STABLECOIN_UNITS = {
    # Masumi's stablecoins: tUSDM on preprod, USDM on mainnet (policy id ++ CIP-67 (333) name).
    "preprod": "16a55b2a349361ff88c03788f93e1e966e5d689605d044fef722ddde0014df10745553444d",
    "mainnet": "c48cbb3d5e57ed56e276bc45f99ab39abe94e6cd7ac39fb402da47ad0014df105553444d",
}
REQUIRED_ADMIN_SIGNATURES = 2
FEE_PERMILLE = 50
COOLDOWN_MS = 7 * 60 * 1000


def network_of(name: str) -> Network:
    return Network.MAINNET if name == "mainnet" else Network.TESTNET


@dataclass
class Wallet:
    name: str
    signing_key: PaymentSigningKey
    stake_key: StakeSigningKey
    address: Address
    addr: str = ""  # the address in bech32, computed once

    def __post_init__(self):
        self.addr = str(self.address)
        self._key_hash = bytes(self.signing_key.to_verification_key().hash())

    @property
    def key_hash(self) -> bytes:
        return self._key_hash

    @property
    def stake_hash(self) -> bytes:
        return bytes(self.stake_key.to_verification_key().hash())

    def as_plutus_address(self) -> pd.Constr:
        return pd.address_data(self.key_hash, self.stake_hash)


def derive_wallet(seed: int, name: str, network: Network) -> Wallet:
    def key_bytes(purpose: str) -> bytes:
        return hashlib.blake2b(f"agentindex-emulator/{seed}/{name}/{purpose}".encode(), digest_size=32).digest()

    signing = PaymentSigningKey(key_bytes("payment"))
    stake = StakeSigningKey(key_bytes("stake"))
    address = Address(signing.to_verification_key().hash(), stake.to_verification_key().hash(), network=network)
    return Wallet(name, signing, stake, address)


def stand_in_script(label: str, params: list) -> PlutusV3Script:
    """`(\\label \\p1 .. \\pn \\ctx -> ())` applied to the label and the parameters, as Data."""
    body = ("const", ("unit",), None)
    for _ in range(len(params) + 2):
        body = ("lam", body)
    term = body
    for param in [label.encode()] + params:
        term = ("apply", term, ("const", ("data",), pd.to_cbor(param)))
    return PlutusV3Script(flat_uplc.wrap_cbor(flat_uplc.encode_program((1, 1, 0), term)))


@dataclass
class Contract:
    name: str
    script: PlutusV3Script
    script_hash: bytes
    address: Address | None  # a spending contract's address; None for a minting policy
    addr: str | None = None  # the address in bech32


class MasumiDeployment:
    def __init__(self, network_name: str, seed: int):
        self.network_name = network_name
        self.network = network_of(network_name)
        self.seed = seed
        wallet = lambda name: derive_wallet(seed, name, self.network)  # noqa: E731
        self.admins = [wallet(f"admin-{i}") for i in range(3)]
        self.fee_wallet = wallet("fee-receiver")
        admin_hashes = [a.key_hash for a in self.admins]
        escrow_v1 = self._spending(
            "escrow-v1",
            stand_in_script(
                "masumi vested_pay v1 (agentindex emulator stand-in)",
                [REQUIRED_ADMIN_SIGNATURES, admin_hashes, self.fee_wallet.as_plutus_address(), FEE_PERMILLE, COOLDOWN_MS],
            ),
        )
        escrow_v2 = self._spending(
            "escrow-v2",
            stand_in_script(
                "masumi vested_pay v2 (agentindex emulator stand-in)",
                [REQUIRED_ADMIN_SIGNATURES, admin_hashes, COOLDOWN_MS],
            ),
        )
        registry_v1 = self._policy(
            "registry-v1",
            stand_in_script("masumi registry mintUnique v1 (agentindex emulator stand-in)", [str(escrow_v1.address).encode()]),
        )
        registry_v2 = self._policy(
            "registry-v2", stand_in_script("masumi registry mintUnique v2 (agentindex emulator stand-in)", [])
        )
        self.escrow = {"v1": escrow_v1, "v2": escrow_v2}
        self.registry = {"v1": registry_v1, "v2": registry_v2}
        self.stablecoin_unit = STABLECOIN_UNITS[network_name]
        self.stablecoin_policy = bytes.fromhex(self.stablecoin_unit[:56])
        self.stablecoin_name = bytes.fromhex(self.stablecoin_unit[56:])
        self._wallets: dict[str, Wallet] = {}

    def _spending(self, name: str, script: PlutusV3Script) -> Contract:
        script_hash = plutus_script_hash(script)
        address = Address(script_hash, network=self.network)
        return Contract(name, script, bytes(script_hash), address, str(address))

    def _policy(self, name: str, script: PlutusV3Script) -> Contract:
        return Contract(name, script, bytes(plutus_script_hash(script)), None)

    def wallet(self, name: str) -> Wallet:
        """A named wallet (seller, buyer, ...), derived once from the seed."""
        if name not in self._wallets:
            self._wallets[name] = derive_wallet(self.seed, name, self.network)
        return self._wallets[name]

    def wallet_at(self, address: str) -> Wallet | None:
        return next((w for w in list(self._wallets.values()) + self.admins if w.addr == address), None)

    def contract_by_script_hash(self, script_hash: bytes) -> Contract | None:
        for contract in list(self.escrow.values()) + list(self.registry.values()):
            if contract.script_hash == script_hash:
                return contract
        return None
