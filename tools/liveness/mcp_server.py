"""An MCP server built with the official MCP Python SDK (PyPI `mcp` 2.3.0: `MCPServer`, the
class mcp 1.x called FastMCP), served over Streamable HTTP, for agentindex's endpoint liveness
tests. It offers two tools, `translate_text` and `detect_language`, whose toy answers do not
matter: the tests probe the SDK's real handshake (initialize, notifications/initialized,
tools/list).

By default the SDK's defaults hold: stateful sessions (the initialize response carries an
Mcp-Session-Id header that later requests must send back) and answers as text/event-stream.
--stateless and --json-response switch the SDK's own options.

Usage: python mcp_server.py [--name NAME] [--path /mcp] [--stateless] [--json-response]
                            [--port 0]
Prints the port it listens on (127.0.0.1) alone on the first line, then serves until SIGTERM,
SIGINT or the end of stdin (keep stdin piped and open while probing)."""

import argparse

from _loopback import listen, serve
from mcp.server.mcpserver import MCPServer

LANGUAGES = {"en": "hello", "fr": "bonjour", "de": "hallo", "es": "hola"}


def build(name: str) -> MCPServer:
    server = MCPServer(name, version="1.0.0", log_level="WARNING")

    @server.tool(description="Translate a text into the target language (ISO 639-1 code).")
    def translate_text(text: str, target_language: str) -> str:
        return f"[{target_language}] {text}"

    @server.tool(description="Detect the language of a text; returns an ISO 639-1 code.")
    def detect_language(text: str) -> str:
        words = text.lower().split()
        for code, greeting in LANGUAGES.items():
            if greeting in words:
                return code
        return "en"

    return server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--name", default="liveness-translator")
    parser.add_argument("--path", default="/mcp", help="path of the Streamable HTTP endpoint")
    parser.add_argument("--stateless", action="store_true", help="no Mcp-Session-Id sessions")
    parser.add_argument(
        "--json-response", action="store_true", help="answer POSTs with application/json, not SSE"
    )
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()

    listener = listen(args.port)
    app = build(args.name).streamable_http_app(
        streamable_http_path=args.path,
        stateless_http=args.stateless,
        json_response=args.json_response,
        host="127.0.0.1",
    )
    serve(app, listener)


if __name__ == "__main__":
    main()
