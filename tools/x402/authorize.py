"""Signs an x402 `exact` payment with the official x402 Python client (its EVM scheme signs an
EIP-3009 TransferWithAuthorization), for agentindex's tests. Prints the payment payload as JSON:
{"authorization": {...}, "signature": "0x..."}; the test settles it on-chain as a facilitator would.

Usage: python authorize.py PRIVATE_KEY CHAIN_ID TOKEN TOKEN_NAME TOKEN_VERSION PAY_TO AMOUNT"""

import json
import sys

from eth_account import Account
from x402.mechanisms.evm.exact.client import ExactEvmScheme
from x402.schemas import PaymentRequirements

key, chain_id, token, name, version, pay_to, amount = sys.argv[1:8]
requirements = PaymentRequirements(
    scheme="exact",
    network=f"eip155:{chain_id}",
    asset=token,
    amount=amount,
    pay_to=pay_to,
    max_timeout_seconds=3600,
    extra={"name": name, "version": version},
)
payload = ExactEvmScheme(Account.from_key(key)).create_payment_payload(requirements)
sys.stdout.write(json.dumps(payload))
