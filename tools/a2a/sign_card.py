"""Signs an Agent Card with the official A2A Python SDK's signer, for agentindex's
interoperability tests. Usage: python sign_card.py KEY.pem ALG KID < card.json > signed.json"""

import json
import sys

from google.protobuf.json_format import MessageToDict, ParseDict

from a2a.types import AgentCard
from a2a.utils.signing import create_agent_card_signer

key_path, alg, kid = sys.argv[1:4]
card = ParseDict(json.load(sys.stdin), AgentCard())
with open(key_path, "rb") as key_file:
    signer = create_agent_card_signer(
        key_file.read(), {"alg": alg, "kid": kid, "typ": "JOSE", "jku": None}
    )
sys.stdout.write(json.dumps(MessageToDict(signer(card)), ensure_ascii=False))
