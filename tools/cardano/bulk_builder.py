"""Builds a large Masumi chain fast, for benchmarks: N agents registered under the v2 registry
(batch mints, as the v2 payment service batches them) with metadata in the three shapes Masumi
uses (registry metadata v1, payment-service v2 with supported payment sources, and the A2A
MIP-002 shape with an agent card URL), then M escrow payments per agent, locked in batches and
settled in batches (v2 allows several escrow inputs per transaction) by an outcome mix:
released (submit result, withdraw), refunded (withdraw refund once the result deadline passed
without a result) and disputed (submit result, request refund -> Disputed, admins withdraw).
Many transactions go into each block. Deterministic for a given seed and body."""

import random
import time

import values as val
from tx_factory import without_type_checks

DEFAULT_MIX = {"released": 0.8, "refunded": 0.1, "disputed": 0.1}
STEPS = {
    "released": ["submit_result", "release"],
    "refunded": ["refund"],
    "disputed": ["submit_result", "request_refund", "resolve_dispute"],
}


def agent_metadata(i: int) -> dict:
    base = {
        "name": f"Bulk agent {i}",
        "description": f"Benchmark agent number {i}, registered by the agentindex Blockfrost emulator; "
        "this description is long enough to be split into several metadata chunks.",
        "image": "https://example.invalid/agent.png",
        "tags": ["benchmark", f"group-{i % 10}"],
    }
    shape = i % 3
    if shape == 0:
        return {
            **base,
            "api_base_url": f"https://agent-{i}.example.invalid/api",
            "author": {"name": f"Author {i % 50}", "contact_email": f"author{i % 50}@example.invalid"},
            "capability": {"name": "bench", "version": "1.0.0"},
            "legal": {"terms": "https://example.invalid/terms"},
            "example_output": [],
            "agentPricing": {"pricingType": "Fixed", "fixedPricing": [{"amount": "10000000", "unit": "lovelace"}]},
            "metadata_version": "1",
        }
    if shape == 1:
        return {
            **base,
            "api_base_url": f"https://agent-{i}.example.invalid/api",
            "author": {"name": f"Author {i % 50}"},
            "metadata_version": "2",
            "supported_payment_sources": [
                {"chain": "Cardano", "pricing": {"pricingType": "Fixed", "fixed": [{"asset": "lovelace", "amount": "5000000"}]}}
            ],
        }
    return {
        **base,
        "api_url": f"https://agent-{i}.example.invalid/a2a",
        "agent_card_url": f"https://agent-{i}.example.invalid/.well-known/agent-card.json",
        "a2a_protocol_versions": ["1.0"],
        "metadata_version": "2",
    }


def build_bulk(emulator, body: dict) -> dict:
    agents = int(body.get("agents", 10))
    per_agent = int(body.get("payments_per_agent", 0))
    batch = max(1, min(int(body.get("batch", 10)), 50))
    txs_per_block = max(1, int(body.get("txs_per_block", 100)))
    token_share = float(body.get("token_share", 0.3))
    mix = body.get("outcome_mix") or DEFAULT_MIX
    nodes = max(1, int(body.get("node_wallets", 10)))
    buyers = max(1, int(body.get("buyer_wallets", 20)))
    rng = random.Random(emulator.deployment.seed * 7919 + agents * 31 + per_agent)
    chain, d = emulator.chain, emulator.deployment
    started = time.monotonic()
    first_height = chain.start_height + len(chain.blocks)

    def mine_when_full(force: bool = False):
        while len(chain.pending) >= txs_per_block or (force and chain.pending):
            chain.mine(1, max_txs=txs_per_block)

    units = []
    with without_type_checks():
        for start in range(0, agents, batch):
            indexes = range(start, min(start + batch, agents))
            holder = d.wallet(f"node-wallet-{(start // batch) % nodes}")
            _, minted = emulator.registry.register_many([agent_metadata(i) for i in indexes], "v2", holder)
            units += [(u, holder) for u in minted]
            mine_when_full()
        registered_at = time.monotonic()
        purchases = []
        for unit, holder in units:
            for _ in range(per_agent):
                outcome = rng.choices(list(mix), weights=list(mix.values()))[0]
                if rng.random() < token_share:
                    value = {d.stablecoin_unit: rng.randrange(1, 50) * 1_000_000}
                else:
                    value = {val.LOVELACE: rng.randrange(2, 60) * 1_000_000}
                purchases.append((unit, holder, value, outcome))
        by_outcome: dict = {o: [] for o in STEPS}
        for start in range(0, len(purchases), batch):
            group = purchases[start:start + batch]
            buyer = d.wallet(f"buyer-{(start // batch) % buyers}")
            escrows = emulator.escrows.lock_many([(u, v, buyer, h) for u, h, v, _ in group], "v2")
            for escrow, (_, _, _, outcome) in zip(escrows, group):
                by_outcome[outcome].append(escrow)
            mine_when_full()
        for outcome, escrows in by_outcome.items():
            for step in STEPS[outcome]:
                for start in range(0, len(escrows), batch):
                    emulator.escrows.step(escrows[start:start + batch], step)
                    mine_when_full()
        mine_when_full(force=True)
    finished = time.monotonic()
    tip = chain.tip
    blocks = [chain.block_at(h) for h in range(first_height, tip.height + 1)]
    return {
        "agents": agents,
        "payments": len(purchases),
        "outcomes": {o: len(e) for o, e in by_outcome.items()},
        "txs": sum(len(b.txs) for b in blocks),
        "blocks": len(blocks),
        "first_height": first_height,
        "tip": {"height": tip.height, "hash": tip.hash},
        "seconds": round(finished - started, 3),
        "registration_seconds": round(registered_at - started, 3),
        "sample_units": [u for u, _ in units[:5]],
    }
