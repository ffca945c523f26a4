"""Runs read calls of the agent0 Python SDK against a subgraph endpoint and prints, as one JSON
object, what each call returned (or the error it raised) and every GraphQL document the SDK sent
to the endpoint, with its variables, in order.

stdin: {"subgraph": url, "rpc": url, "connectRpc": url, "chainId": n, "registries": {"IDENTITY", "REPUTATION", "VALIDATION"},
"calls": [{"name", "method", "args", "kwargs"}]}
"""

import dataclasses
import json
import sys

import requests

job = json.load(sys.stdin)
sent = []
real_post = requests.post


def recording_post(url, *args, **kwargs):
    if url.startswith(job["subgraph"]) and "json" in kwargs:
        body = kwargs["json"]
        sent.append({"query": body.get("query"), "variables": body.get("variables") or {}})
    return real_post(url, *args, **kwargs)


requests.post = recording_post

from agent0_sdk import SDK  # noqa: E402  (after the patch, so the SDK's module sees it)
from web3 import Web3  # noqa: E402


def plain(value):
    if dataclasses.is_dataclass(value):
        return plain(dataclasses.asdict(value))
    if hasattr(value, "model_dump"):
        return plain(value.model_dump())
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)


# The SDK checks once, while it is built, that its node answers: build it against the node in
# `connectRpc`, then point every chain read at `rpc` (out of reach), so an SDK that fell back to
# the chain would fail rather than answer.
sdk = SDK(
    chainId=job["chainId"],
    rpcUrl=job.get("connectRpc", job["rpc"]),
    subgraphOverrides={job["chainId"]: job["subgraph"]},
    registryOverrides={job["chainId"]: job["registries"]},
)
sdk.web3_client.w3.provider = Web3.HTTPProvider(job["rpc"])
sdk._rpc_urls[job["chainId"]] = job["rpc"]
results = {}
for call in job["calls"]:
    try:
        results[call["name"]] = plain(getattr(sdk, call["method"])(*call.get("args", []), **call.get("kwargs", {})))
    except Exception as error:  # every failure is reported, not raised
        results[call["name"]] = {"error": f"{type(error).__name__}: {error}"}
json.dump({"results": results, "sent": sent}, sys.stdout)
