"""Serves an Agent Card with the official A2A Python SDK's card route (which adds the v0.3
compatibility fields, so the card is a v1.0/v0.3 hybrid), signed by the SDK's signer, for
agentindex's interoperability tests.

Usage: python serve_card.py KEY.pem ALG KID < card.json
Prints the port it listens on (127.0.0.1), then serves until killed."""

import asyncio
import json
import socket
import sys

import uvicorn
from google.protobuf.json_format import ParseDict
from starlette.applications import Starlette

from a2a.server.routes.agent_card_routes import create_agent_card_routes
from a2a.types import AgentCard
from a2a.utils.signing import create_agent_card_signer

key_path, alg, kid = sys.argv[1:4]
card = ParseDict(json.load(sys.stdin), AgentCard())
with open(key_path, "rb") as key_file:
    card = create_agent_card_signer(
        key_file.read(), {"alg": alg, "kid": kid, "typ": "JOSE", "jku": None}
    )(card)

app = Starlette(routes=create_agent_card_routes(card))
listener = socket.socket()
listener.bind(("127.0.0.1", 0))
print(listener.getsockname()[1], flush=True)
server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
asyncio.run(server.serve(sockets=[listener]))
