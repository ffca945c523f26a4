"""A Blockfrost-compatible HTTP server over an emulated Cardano chain of Masumi registry and
escrow transactions built with pycardano, for agentindex's tests and benchmarks (no Cardano
node runs here). It owns the process: options, wiring, the threaded HTTP server and its life.

    tools/.venv/bin/python tools/cardano/blockfrost_emulator.py [--network preprod|mainnet]
        [--project-id ID] [--rate R --burst B] [--validate] [--seed N] [--start-height H]

Binds 127.0.0.1 on a free port, prints the port alone on stdout's first line, and serves until
stdin reaches end of file (so a test that drops the pipe, or dies, leaves no server behind).
Blockfrost's API is served at the root and under /api/v0; the control API under /_emulator/
(tools/cardano/control_api.py)."""

import argparse
import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, urlsplit

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# pycardano's own switch for its runtime type checks (read when pycardano is imported): the
# emulator makes every object it serialises, and the checks would triple the building time.
os.environ.setdefault("PYCARDANO_NO_TYPE_CHECK", "true")

import blockfrost_routes  # noqa: E402
import control_api  # noqa: E402
from chain_store import Chain  # noqa: E402
from masumi_contracts import MasumiDeployment  # noqa: E402
from masumi_escrow import Escrows  # noqa: E402
from masumi_registry import Registry  # noqa: E402
from traffic_control import TrafficControl  # noqa: E402
from tx_factory import Faucet, TxFactory  # noqa: E402


class Emulator:
    def __init__(self, network: str, seed: int, start_height: int, project_id, rate, burst, validate: bool):
        self.deployment = MasumiDeployment(network, seed)
        self.chain = Chain(seed, start_height)
        self.faucet = Faucet(self.chain, self.deployment)
        self.factory = TxFactory(self.chain, self.deployment, self.faucet)
        self.faucet.factory = self.factory
        self.registry = Registry(self.chain, self.deployment, self.factory)
        self.escrows = Escrows(self.chain, self.deployment, self.factory)
        self.traffic = TrafficControl(project_id, rate, burst)
        self.validator = None
        if validate:
            from schema_validation import ResponseValidator

            self.validator = ResponseValidator()
        self._fund_wallets()

    def _fund_wallets(self) -> None:
        """The genesis-like first block: the faucet funds the node and buyer wallets."""
        for name in [f"node-wallet-{i}" for i in range(3)] + [f"buyer-{i}" for i in range(3)]:
            self.faucet.top_up(self.deployment.wallet(name), 1_000_000_000)
        self.chain.mine(1)

    def blockfrost(self, path: str, query: dict, headers) -> tuple:
        refused = self.traffic.admit(path, headers)
        if refused is not None:
            status, message = refused
            template = blockfrost_routes.match(path)[0]
            body = blockfrost_routes.error_body(status, message)
        else:
            status, body, template = blockfrost_routes.handle(self.chain, path, query)
        error, validated = None, False
        if self.validator is not None and template is not None:
            error = self.validator.check(template, status, body)
            validated = True
        self.traffic.record(template, status, error, validated, path)
        return status, body


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out in two writes: no 40 ms delayed-ACK stall
    server_version = "agentindex-blockfrost-emulator"
    emulator: Emulator = None

    def log_message(self, format, *args):  # quiet: tests read stdout for the port only
        pass

    def _send(self, status: int, body) -> None:
        data = json.dumps(body, separators=(",", ":")).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _request_body(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if not raw.strip():
            return {}
        return json.loads(raw)

    def do_GET(self):
        url = urlsplit(self.path)
        try:
            if url.path.startswith("/_emulator/"):
                self._send(*control_api.handle(self.emulator, "GET", url.path, {}))
                return
            query = dict(parse_qsl(url.query, keep_blank_values=True))
            self._send(*self.emulator.blockfrost(url.path, query, self.headers))
        except Exception as error:  # an emulator bug: answer as Blockfrost's 500 would
            self._send(500, blockfrost_routes.error_body(500, f"emulator error: {error!r}"))

    def do_POST(self):
        url = urlsplit(self.path)
        if not url.path.startswith("/_emulator/"):
            self._send(400, blockfrost_routes.error_body(400, "the emulator accepts no Blockfrost POST"))
            return
        try:
            body = self._request_body()
        except ValueError:
            self._send(400, {"error": "the body is not JSON"})
            return
        try:
            self._send(*control_api.handle(self.emulator, "POST", url.path, body))
        except Exception as error:
            self._send(500, {"error": f"emulator error: {error!r}"})


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--network", choices=["preprod", "mainnet"], default="preprod")
    parser.add_argument("--project-id", default=None, help="requests must carry this project_id header")
    parser.add_argument("--rate", type=float, default=None, help="token bucket refill, requests per second")
    parser.add_argument("--burst", type=int, default=None, help="token bucket size")
    parser.add_argument("--validate", action="store_true", help="validate every answer against Blockfrost's schema")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--start-height", type=int, default=1)
    args = parser.parse_args(argv)
    Handler.emulator = Emulator(
        args.network, args.seed, args.start_height, args.project_id, args.rate, args.burst, args.validate
    )
    server = Server(("127.0.0.1", 0), Handler)
    print(server.server_address[1], flush=True)

    def stop_at_end_of_stdin() -> None:
        try:
            while sys.stdin.buffer.read1(65536):
                pass
        except (OSError, ValueError, AttributeError):
            pass
        server.shutdown()

    threading.Thread(target=stop_at_end_of_stdin, daemon=True).start()
    server.serve_forever(poll_interval=0.2)
    server.server_close()


if __name__ == "__main__":
    main()
