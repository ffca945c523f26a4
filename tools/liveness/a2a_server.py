"""An A2A agent served by the official A2A Python SDK (a2a-sdk 1.3.0), for agentindex's endpoint
liveness tests: the SDK's agent card route at /.well-known/agent-card.json and its JSON-RPC
dispatcher (A2A 1.0 methods such as GetTask, with the v0.3 compatibility layer on the same URL,
so `tasks/get` works too) over an in-memory task store. The agent itself only echoes the text
of a message back; what the tests probe is the SDK's real protocol surface, e.g. the
TaskNotFound error (-32001) for an unknown task id.

The card lists two JSONRPC interfaces at the same URL, http://127.0.0.1:PORT/ (or RPC_PATH):
protocolVersion 1.0 and 0.3, so the SDK's card route also writes the v0.3 fields (url,
preferredTransport, protocolVersion), as deployed hybrid cards do.

With --extended-token TOKEN the card says it has an extended card (capabilities.
extendedAgentCard), and GetExtendedAgentCard (or v0.3's agent/getAuthenticatedExtendedCard)
answers it, with one more skill (premium_translate), to a caller whose Authorization header is
`Bearer TOKEN`; anyone else gets 401 with a WWW-Authenticate challenge. With
--claim-extended-card the card claims an extended card that the server does not have (the SDK
then answers its "not configured" error, -32007).

Usage: python a2a_server.py [--name NAME] [--description TEXT] [--skills a,b]
                            [--rpc-path /] [--extended-token TOKEN]
                            [--claim-extended-card] [--port 0]
Prints the port it listens on (127.0.0.1) alone on the first line, then serves until SIGTERM,
SIGINT or the end of stdin (keep stdin piped and open while probing)."""

import argparse
import json

from starlette.applications import Starlette

from _loopback import listen, port_of, serve
from a2a.helpers.proto_helpers import get_message_text, new_text_message
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore
from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill


class EchoExecutor(AgentExecutor):
    """Answers every message with one agent message carrying the same text."""

    async def execute(self, context: RequestContext, event_queue) -> None:
        text = get_message_text(context.message) if context.message else ""
        await event_queue.enqueue_event(
            new_text_message(f"echo: {text}", context_id=context.context_id)
        )

    async def cancel(self, context: RequestContext, event_queue) -> None:
        return None


EXTENDED_CARD_METHODS = {"GetExtendedAgentCard", "agent/getAuthenticatedExtendedCard"}


class ExtendedCardGuard:
    """ASGI middleware: a JSON-RPC call for the extended card needs `Bearer TOKEN`."""

    def __init__(self, app, token: str) -> None:
        self.app = app
        self.token = token

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        body = b""
        more = True
        while more:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False)
        try:
            method = json.loads(body).get("method")
        except (ValueError, AttributeError):
            method = None
        headers = dict(scope["headers"])
        authorized = headers.get(b"authorization") == f"Bearer {self.token}".encode()
        if method in EXTENDED_CARD_METHODS and not authorized:
            await send(
                {
                    "type": "http.response.start",
                    "status": 401,
                    "headers": [
                        (b"www-authenticate", b'Bearer realm="extended card"'),
                        (b"content-type", b"application/json"),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": b'{"error":"unauthorized"}'})
            return
        replayed = False

        async def replay():
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--name", default="Liveness Echo Agent")
    parser.add_argument(
        "--description", default="Echoes text back; a test agent for endpoint liveness probes."
    )
    parser.add_argument("--skills", default="echo", help="comma-separated skill ids")
    parser.add_argument("--rpc-path", default="/", help="path of the JSON-RPC endpoint")
    parser.add_argument("--extended-token", default=None, help="serve an extended card to it")
    parser.add_argument(
        "--claim-extended-card", action="store_true", help="claim one without serving it"
    )
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()

    listener = listen(args.port)
    url = f"http://127.0.0.1:{port_of(listener)}{args.rpc_path}"
    skills = [s.strip() for s in args.skills.split(",") if s.strip()]
    card = AgentCard(
        name=args.name,
        description=args.description,
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(url=url, protocol_binding="JSONRPC", protocol_version="1.0"),
            AgentInterface(url=url, protocol_binding="JSONRPC", protocol_version="0.3"),
        ],
        capabilities=AgentCapabilities(
            streaming=False,
            push_notifications=False,
            extended_agent_card=args.extended_token is not None or args.claim_extended_card,
        ),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[
            AgentSkill(
                id=skill,
                name=skill.replace("_", " ").replace("-", " ").title(),
                description=f"The {skill} skill of the liveness test agent.",
                tags=[skill],
            )
            for skill in skills
        ],
    )
    extended = None
    if args.extended_token is not None:
        extended = AgentCard()
        extended.CopyFrom(card)
        extended.skills.append(
            AgentSkill(
                id="premium_translate",
                name="Premium Translate",
                description="Translation for authenticated callers only.",
                tags=["premium"],
            )
        )
    handler = DefaultRequestHandler(
        agent_executor=EchoExecutor(),
        task_store=InMemoryTaskStore(),
        agent_card=card,
        extended_agent_card=extended,
    )
    app = Starlette(
        routes=create_agent_card_routes(card)
        + create_jsonrpc_routes(handler, args.rpc_path, enable_v0_3_compat=True)
    )
    if args.extended_token is not None:
        app = ExtendedCardGuard(app, args.extended_token)
    serve(app, listener)


if __name__ == "__main__":
    main()
