"""End-to-end check of the Blockfrost emulator (no Cardano node runs here): starts it with
--validate, plays a Masumi scenario through the control API (v1 and v2 registrations with
chunked and A2A metadata, an update, a deregistration, escrow payments released / refunded /
disputed on both contracts in ada and the stablecoin, injected 429 and 402 faults, a rollback of
3 blocks and a different chain built on top), reads every Blockfrost route the scenario touched,
reads through the official @blockfrost/blockfrost-js client (read-blockfrost.mjs), decodes every
served transaction CBOR with pycardano and compares its hash, and prints a JSON summary. Exits
non-zero on any failure.

    tools/.venv/bin/python tools/cardano/run_scenario.py"""

import hashlib
import io
import json
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import cbor2
from pycardano import Transaction

HERE = Path(__file__).resolve().parent
PROJECT = "preprodScenarioProject"


class Emulator:
    def __init__(self):
        self.process = subprocess.Popen(
            [sys.executable, str(HERE / "blockfrost_emulator.py"), "--validate", "--project-id", PROJECT, "--seed", "7"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        )
        self.base = f"http://127.0.0.1:{int(self.process.stdout.readline())}"

    def call(self, method, path, body=None, headers=None):
        request = urllib.request.Request(
            self.base + path, method=method, data=None if body is None else json.dumps(body).encode(),
            headers={"project_id": PROJECT, **(headers or {})},
        )
        try:
            with urllib.request.urlopen(request) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read())

    def control(self, path, body=None):
        status, answer = self.call("POST" if body is not None else "GET", "/_emulator/" + path, body)
        if status != 200:
            raise AssertionError(f"{path}: {status} {answer}")
        return answer

    def get(self, path, expect=200):
        status, answer = self.call("GET", path)
        if status != expect:
            raise AssertionError(f"GET {path}: {status} {answer}")
        return answer

    def close(self):
        self.process.stdin.close()
        self.process.wait(timeout=10)


def play(emu) -> dict:
    long_text = "An agent whose description is far longer than one Cardano metadata string may be. " * 3
    v1 = emu.control("registry/register", {"contract": "v1", "metadata": {
        "name": "Summariser v1", "description": long_text, "api_base_url": "https://summariser.example/api",
        "author": {"name": "Ada", "contact_email": "ada@example.com", "organization": "Example"},
        "legal": {"privacy_policy": "https://example.com/privacy", "terms": "https://example.com/terms"},
        "capability": {"name": "summarise", "version": "1.0.0"}, "tags": ["text", "summary"],
        "agentPricing": {"pricingType": "Fixed", "fixedPricing": [{"amount": "10000000", "unit": "lovelace"}]},
        "image": "https://example.com/agent.png", "metadata_version": "1"}})
    v2 = emu.control("registry/register", {"metadata": {
        "name": "Card agent", "description": "A2A agent", "api_url": "https://card.example/a2a",
        "agent_card_url": "https://card.example/.well-known/agent-card.json", "a2a_protocol_versions": ["0.3.0"],
        "tags": ["a2a"], "image": "https://card.example/logo.png", "metadata_version": "2"}})
    updated = emu.control("registry/update", {"unit": v2["unit"], "metadata": {
        "name": "Card agent", "description": "A2A agent, updated", "api_url": "https://card.example/a2a",
        "agent_card_url": "https://card.example/.well-known/agent-card.json", "a2a_protocol_versions": ["0.3.0", "1.0"],
        "metadata_version": "2"}})
    doomed = emu.control("registry/register", {"contract": "v1", "metadata": {"name": "Short-lived", "metadata_version": "1"}})
    gone = emu.control("registry/deregister", {"unit": doomed["unit"]})
    info = emu.control("info")
    usdm = info["stablecoin_unit"]
    outcomes = {}
    for contract, agent in (("v1", v1["unit"]), ("v2", updated["unit"])):
        for outcome, amount in (("released", [{"unit": "lovelace", "quantity": "12000000"}]),
                                ("refunded", [{"unit": usdm, "quantity": "5000000"}]),
                                ("disputed", [{"unit": "lovelace", "quantity": "30000000"}])):
            lock = emu.control("escrow/lock", {"agent_unit": agent, "amount": amount, "contract": contract})
            settled = emu.control("escrow/settle", {"escrow_id": lock["escrow_id"], "outcome": outcome})
            outcomes[f"{contract}-{outcome}"] = [lock["tx_hash"]] + settled["tx_hashes"]
    # Step by step on v2: request a refund, the seller authorizes it, the buyer withdraws.
    lock = emu.control("escrow/lock", {"agent_unit": updated["unit"], "contract": "v2"})
    steps = [emu.control(f"escrow/{a}", {"escrow_id": lock["escrow_id"]}) for a in ("request_refund", "authorize_refund", "refund")]
    outcomes["v2-refund-authorized"] = [lock["tx_hash"]] + [s["tx_hash"] for s in steps]
    # Pending pool: two actions mined in one block.
    pooled = [emu.control("escrow/lock", {"agent_unit": v1["unit"], "contract": "v1", "mine": False}) for _ in range(2)]
    emu.control("blocks", {"count": 2})
    return {"v1": v1, "v2": v2, "updated": updated, "gone": gone, "outcomes": outcomes, "pooled": pooled, "info": info}


def body_hash(tx_cbor: bytes) -> str:
    """blake2b-256 of the transaction body exactly as served (the transaction id)."""
    stream = io.BytesIO(tx_cbor)
    stream.read(1)  # the transaction's array header
    decoder = cbor2.CBORDecoder(stream)
    decoder.decode()
    return hashlib.blake2b(tx_cbor[1:stream.tell()], digest_size=32).hexdigest()


def crawl(emu, played) -> dict:
    info = played["info"]
    latest = emu.get("/blocks/latest")
    tx_hashes = []
    for height in range(1, latest["height"] + 1):
        emu.get(f"/blocks/{height}")
        tx_hashes += emu.get(f"/blocks/{height}/txs?count=100")
    cbor_checked = same_id = 0
    for tx_hash in tx_hashes:
        emu.get(f"/txs/{tx_hash}")
        utxos = emu.get(f"/api/v0/txs/{tx_hash}/utxos")
        emu.get(f"/txs/{tx_hash}/metadata")
        emu.get(f"/txs/{tx_hash}/redeemers")
        served = bytes.fromhex(emu.get(f"/txs/{tx_hash}/cbor")["cbor"])
        decoded = Transaction.from_cbor(served)
        if body_hash(served) != tx_hash:
            raise AssertionError(f"{tx_hash}: the served CBOR's body hashes differently")
        cbor_checked += 1
        # pycardano re-encodes a decoded body, writing byte strings over 64 bytes (which Plutus
        # Data chunks) in one piece; its id matches wherever no datum has such a byte string.
        same_id += str(decoded.id) == tx_hash
        for output in utxos["outputs"]:
            if output["data_hash"]:
                emu.get(f"/scripts/datum/{output['data_hash']}")
                emu.get(f"/scripts/datum/{output['data_hash']}/cbor")
    for policy in info["policy_ids"].values():
        for asset in emu.get(f"/assets/policy/{policy}"):
            emu.get(f"/assets/{asset['asset']}")
            emu.get(f"/assets/{asset['asset']}/history?order=desc")
            emu.get(f"/assets/{asset['asset']}/addresses")
        emu.get(f"/scripts/{policy}/redeemers?order=asc")
    for escrow in info["escrow"].values():
        emu.get(f"/scripts/{escrow['script_hash']}/redeemers?count=5&page=2")
        emu.get(f"/addresses/{escrow['address']}/transactions?from=3&to={latest['height']}:0")
    emu.get("/")
    emu.get("/health")
    emu.get("/health/clock")
    emu.get("/txs/" + "00" * 32, expect=404)
    emu.get("/blocks/latest?count=1000")  # unknown query parameters are ignored, as by Blockfrost
    emu.get("/assets/policy/" + info["policy_ids"]["v2"] + "?count=101", expect=400)
    status, _ = emu.call("GET", "/blocks/latest", headers={"project_id": "wrong"})
    assert status == 403, status
    return {"txs": len(tx_hashes), "cbor_decoded_body_hash_equal": cbor_checked,
            "pycardano_reencoded_id_equal": same_id, "tip": latest["height"]}


def faults(emu) -> dict:
    emu.control("faults", {"status": 429, "count": 2, "path_prefix": "/txs"})
    emu.control("faults", {"status": 402, "count": 1})
    first = emu.call("GET", "/blocks/latest")
    second = emu.call("GET", "/txs/" + "00" * 32)
    third = emu.call("GET", "/txs/" + "00" * 32)
    assert first[0] == 402 and second[0] == 429 and third[0] == 429, (first, second, third)
    return {"402": first[1], "429": second[1]}


def rollback(emu, played) -> dict:
    before = emu.get("/blocks/latest")
    dropped = emu.control("rollback", {"depth": 3})
    assert len(dropped["dropped_blocks"]) == 3 and dropped["tip"]["height"] == before["height"] - 3
    for tx_hash in dropped["dropped_txs"]:
        emu.get(f"/txs/{tx_hash}", expect=404)
    emu.get(f"/blocks/{dropped['dropped_blocks'][0]}", expect=404)
    again = emu.control("registry/register", {"metadata": {"name": "After the rollback", "metadata_version": "2"}})
    latest = emu.get("/blocks/latest")
    assert latest["height"] == before["height"] - 2 and latest["hash"] != before["hash"]
    return {"dropped_blocks": len(dropped["dropped_blocks"]), "dropped_txs": len(dropped["dropped_txs"]),
            "new_tip": latest["height"], "registered_after": again["unit"]}


def read_with_official_client(emu, played) -> dict:
    info = played["info"]
    request = {
        "base": emu.base, "project_id": PROJECT, "unit": played["v1"]["unit"], "tx": played["updated"]["tx_hash"],
        "address": info["escrow"]["v2"]["address"], "policy": info["policy_ids"]["v2"],
    }
    run = subprocess.run(["node", str(HERE / "read-blockfrost.mjs")], input=json.dumps(request), capture_output=True, text=True)
    if run.returncode != 0:
        raise AssertionError(f"read-blockfrost.mjs failed: {run.stderr}")
    read = json.loads(run.stdout)
    assert read["tx"]["hash"] == played["updated"]["tx_hash"]
    assert read["asset"]["onchain_metadata"]["name"] == "Summariser v1"
    return {"keys": sorted(read), "registry_redeemers": len(read["registry_redeemers"]),
            "asset_description_chunks": len(read["asset"]["onchain_metadata"]["description"])}


def main() -> int:
    emu = Emulator()
    try:
        played = play(emu)
        summary = {"policy_ids": played["info"]["policy_ids"], "escrow": played["info"]["escrow"]}
        summary["crawl"] = crawl(emu, played)
        summary["official_client"] = read_with_official_client(emu, played)
        summary["faults"] = faults(emu)
        summary["rollback"] = rollback(emu, played)
        summary["crawl_after_rollback"] = crawl(emu, played)
        stats = emu.control("stats")
        summary["stats"] = {k: stats[k] for k in ("requests", "validated", "validation_failures", "errors_served")}
        print(json.dumps(summary, indent=2))
        return 0 if not stats["validation_failures"] else 1
    finally:
        emu.close()


if __name__ == "__main__":
    sys.exit(main())
