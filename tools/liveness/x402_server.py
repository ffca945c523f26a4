"""An x402 resource server built with the official x402 Python package (PyPI `x402` 2.25.0),
for agentindex's endpoint liveness tests: a FastAPI app whose GET /translate is protected by the
package's FastAPI payment middleware (scheme `exact`, USDC on Base Sepolia, eip155:84532, paid
to --pay-to), so an unpaid request gets the package's real HTTP 402: status 402, a
PAYMENT-REQUIRED header holding the base64 of the x402 v2 PaymentRequired JSON, and `{}` as the
body. GET /health is free.

No internet: the resource server's facilitator is the package's own x402Facilitator, in this
process, with the package's `exact` EVM facilitator scheme registered for the network. The
middleware asks it for its supported kinds when it starts (instead of asking
https://x402.org/facilitator over HTTP); its signer (a throwaway key unless --facilitator-key)
would only reach --rpc (default http://127.0.0.1:8545) to verify or settle a paid request.

Usage: python x402_server.py --pay-to 0xADDRESS [--price '$0.001'] [--network eip155:84532]
                             [--path /translate] [--facilitator-key 0xKEY] [--rpc URL]
                             [--port 0]
Prints the port it listens on (127.0.0.1) alone on the first line, then serves until SIGTERM,
SIGINT or the end of stdin (keep stdin piped and open while probing)."""

import argparse

from eth_account import Account
from fastapi import FastAPI

from _loopback import listen, serve
from x402 import x402Facilitator, x402ResourceServer
from x402.http import PaymentOption, RouteConfig
from x402.http.middleware.fastapi import payment_middleware
from x402.mechanisms.evm import FacilitatorWeb3Signer
from x402.mechanisms.evm.exact import ExactEvmFacilitatorScheme, ExactEvmServerScheme


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pay-to", required=True, help="0x address the payments go to")
    parser.add_argument("--price", default="$0.001", help="USD price, paid in USDC")
    parser.add_argument("--network", default="eip155:84532", help="CAIP-2 network id")
    parser.add_argument("--path", default="/translate", help="the paid GET route")
    parser.add_argument("--facilitator-key", default=None, help="default: a throwaway key")
    parser.add_argument("--rpc", default="http://127.0.0.1:8545")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()

    key = args.facilitator_key or Account.create().key.hex()
    facilitator = x402Facilitator().register(
        [args.network], ExactEvmFacilitatorScheme(FacilitatorWeb3Signer(key, args.rpc))
    )
    resource_server = x402ResourceServer(facilitator)
    resource_server.register(args.network, ExactEvmServerScheme())

    routes = {
        f"GET {args.path}": RouteConfig(
            accepts=PaymentOption(
                scheme="exact", pay_to=args.pay_to, price=args.price, network=args.network
            ),
            description="Translate a text (a test resource for endpoint liveness probes)",
            mime_type="application/json",
        )
    }
    app = FastAPI()
    x402 = payment_middleware(routes, resource_server)

    @app.middleware("http")
    async def require_payment(request, call_next):
        return await x402(request, call_next)

    @app.get(args.path)
    async def translate(text: str = "hello", to: str = "fr") -> dict:
        return {"text": text, "to": to, "translation": f"[{to}] {text}"}

    @app.get("/health")
    async def health() -> dict:
        return {"ok": True}

    serve(app, listener=listen(args.port))


if __name__ == "__main__":
    main()
