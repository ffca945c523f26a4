// Drives agentindex's MCP server with the official TypeScript client library
// (@modelcontextprotocol/sdk), for tests/mcp_server.rs. Reads one JSON request on stdin
// (transport, url or command/args, calls), connects, lists tools/resources/templates, runs
// the calls in order and prints one JSON object on stdout. Run from tools/ so imports resolve.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';

async function readStdin() {
    const chunks = [];
    for await (const chunk of process.stdin) chunks.push(chunk);
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

function makeTransport(request) {
    if (request.transport === 'http') {
        return new StreamableHTTPClientTransport(new URL(request.url));
    }
    if (request.transport === 'stdio') {
        return new StdioClientTransport({
            command: request.command,
            args: request.args ?? [],
            env: { ...process.env },
            stderr: 'inherit',
        });
    }
    throw new Error(`unknown transport ${JSON.stringify(request.transport)}`);
}

// Follows nextCursor until the last page; returns every item of `field`.
async function allPages(list, field) {
    const items = [];
    let cursor;
    do {
        const page = await list(cursor === undefined ? {} : { cursor });
        items.push(...page[field]);
        cursor = page.nextCursor;
    } while (cursor);
    return items;
}

function errorOf(err) {
    if (err instanceof McpError) {
        // McpError prefixes its message with "MCP error <code>: "; report the server's message.
        const prefix = `MCP error ${err.code}: `;
        const message = err.message.startsWith(prefix) ? err.message.slice(prefix.length) : err.message;
        return { code: err.code, message };
    }
    return { code: typeof err?.code === 'number' ? err.code : null, message: String(err?.message ?? err) };
}

async function callTool(client, call) {
    // Tools are never listed into the client's output-schema cache with a schema (the server
    // declares none), so callTool does no output validation.
    const result = await client.callTool({ name: call.tool, arguments: call.arguments ?? {} });
    const text = (result.content ?? []).find((c) => c.type === 'text');
    return {
        isError: result.isError === true,
        structuredContent: result.structuredContent ?? null,
        text: text ? text.text : null,
    };
}

async function readResource(client, call) {
    const result = await client.readResource({ uri: call.resource });
    return {
        contents: result.contents.map((c) => ({ uri: c.uri, mimeType: c.mimeType ?? null, text: c.text ?? null })),
    };
}

async function run(request) {
    const transport = makeTransport(request);
    // The client reports the negotiated version to transports through this optional hook.
    let protocolVersion = null;
    const setProtocolVersion = transport.setProtocolVersion?.bind(transport);
    transport.setProtocolVersion = (version) => {
        protocolVersion = version;
        setProtocolVersion?.(version);
    };

    const client = new Client({ name: 'agentindex-tests', version: '0.1.0' });
    await client.connect(transport); // the initialize handshake
    try {
        const server = client.getServerVersion();
        const out = {
            server: server ? { name: server.name, version: server.version } : null,
            protocolVersion,
            tools: (await allPages((p) => client.listTools(p), 'tools')).map((t) => ({
                name: t.name,
                title: t.title ?? null,
                description: t.description ?? null,
                inputSchema: t.inputSchema ?? null,
                annotations: t.annotations ?? null,
            })),
            resources: (await allPages((p) => client.listResources(p), 'resources')).map((r) => ({
                uri: r.uri,
                name: r.name,
                title: r.title ?? null,
                mimeType: r.mimeType ?? null,
            })),
            templates: (await allPages((p) => client.listResourceTemplates(p), 'resourceTemplates')).map((t) => ({
                uriTemplate: t.uriTemplate,
                name: t.name,
                mimeType: t.mimeType ?? null,
            })),
            results: {},
        };
        for (const call of request.calls ?? []) {
            try {
                out.results[call.name] = 'tool' in call ? await callTool(client, call) : await readResource(client, call);
            } catch (err) {
                // One failing call must not stop the others.
                out.results[call.name] = { error: errorOf(err) };
            }
        }
        return out;
    } finally {
        await client.close(); // closes the transport; stops the stdio child
    }
}

try {
    const out = await run(await readStdin());
    process.stdout.write(JSON.stringify(out) + '\n');
    process.exitCode = 0;
} catch (err) {
    console.error(`mcp client failed: ${err?.stack ?? err}`);
    process.exitCode = 1;
}
