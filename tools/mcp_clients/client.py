# Drives agentindex's MCP server with the official Python client library (PyPI `mcp` 2.x),
# for tests/mcp_server.rs. Reads one JSON request on stdin (transport, url or command/args,
# calls; mode), connects, lists tools/resources/templates, runs the calls in order and prints one
# JSON object on stdout. Run with tools/.venv/bin/python. See the contract in the test.
import asyncio
import json
import os
import sys

from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError


def dump(model):
    """A pydantic model (or None) as wire-shaped JSON (camelCase keys, None fields left out)."""
    if model is None:
        return None
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


def error_of(exc):
    if isinstance(exc, MCPError):
        return {"code": exc.code, "message": exc.error.message}
    return {"code": None, "message": f"{type(exc).__name__}: {exc}"}


async def all_pages(fetch, field):
    """Follows nextCursor until the last page; returns every item of `field`."""
    items, cursor = [], None
    while True:
        page = await fetch(cursor=cursor)
        items.extend(getattr(page, field))
        cursor = page.next_cursor
        if not cursor:
            return items


def tool_entry(tool):
    return {
        "name": tool.name,
        "title": tool.title,
        "description": tool.description,
        "inputSchema": tool.input_schema,
        "annotations": dump(tool.annotations),
    }


async def call_tool(client, call):
    result = await client.call_tool(call["tool"], call.get("arguments"))
    text = next((c.text for c in result.content if getattr(c, "type", None) == "text"), None)
    return {
        "isError": bool(result.is_error),
        "structuredContent": result.structured_content,
        "text": text,
    }


async def read_resource(client, call):
    result = await client.read_resource(call["resource"])
    contents = []
    for c in result.contents:
        contents.append({"uri": str(c.uri), "mimeType": c.mime_type, "text": getattr(c, "text", None)})
    return {"contents": contents}


async def run(request):
    if request["transport"] == "http":
        server = request["url"]
    elif request["transport"] == "stdio":
        server = StdioServerParameters(
            command=request["command"], args=request.get("args", []), env=dict(os.environ)
        )
    else:
        raise ValueError(f"unknown transport {request['transport']!r}")

    # mode "legacy" (the default here): the initialize handshake; "auto": the 2026-07-28
    # protocol's server/discover first, initialize only if the server does not answer it.
    # cache=None: every list and read reaches the server.
    mode = request.get("mode", "legacy")
    async with Client(server, mode=mode, cache=None) as client:
        info = client.server_info
        out = {
            "server": {"name": info.name, "version": info.version} if info else None,
            "protocolVersion": client.protocol_version,
            "tools": [tool_entry(t) for t in await all_pages(client.list_tools, "tools")],
            "resources": [
                {"uri": str(r.uri), "name": r.name, "title": r.title, "mimeType": r.mime_type}
                for r in await all_pages(client.list_resources, "resources")
            ],
            "templates": [
                {"uriTemplate": t.uri_template, "name": t.name, "mimeType": t.mime_type}
                for t in await all_pages(client.list_resource_templates, "resource_templates")
            ],
            "results": {},
        }
        for call in request.get("calls", []):
            try:
                if "tool" in call:
                    out["results"][call["name"]] = await call_tool(client, call)
                else:
                    out["results"][call["name"]] = await read_resource(client, call)
            except Exception as exc:  # one failing call must not stop the others
                out["results"][call["name"]] = {"error": error_of(exc)}
    return out


def leaves(exc):
    """The exceptions inside (possibly nested) exception groups, which anyio raises."""
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for sub in exc.exceptions for leaf in leaves(sub)]
    return [exc]


def main():
    request = json.load(sys.stdin)
    try:
        out = asyncio.run(run(request))
    except BaseException as exc:  # cannot connect, or the session broke
        for leaf in leaves(exc):
            print(f"mcp client failed: {type(leaf).__name__}: {leaf}", file=sys.stderr)
        sys.exit(1)
    json.dump(out, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
