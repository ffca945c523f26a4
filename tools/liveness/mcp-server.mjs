// An MCP server built with the official MCP TypeScript SDK (npm @modelcontextprotocol/sdk
// 1.32.2: McpServer and StreamableHTTPServerTransport) on express 5.1.0, for agentindex's
// endpoint liveness tests. It offers two tools, `translate_text` and `detect_language`, whose
// toy answers do not matter: the tests probe the SDK's real Streamable HTTP handshake
// (initialize, notifications/initialized, tools/list).
//
// Stateful by default, the way the SDK documents it: an initialize POST without a session
// creates a transport (and its own McpServer) under a fresh Mcp-Session-Id, and later requests
// must carry that header; a request with no session id that is not an initialize is refused
// with 400, one with an unknown session id with 404 (as the MCP spec asks). --stateless makes one transport and server per request (no session ids);
// --json-response answers POSTs with application/json instead of an SSE stream. The SDK's
// localhost Host-header check guards the endpoint, as createMcpExpressApp would add it.
//
// Usage: node mcp-server.mjs [--name NAME] [--path /mcp] [--stateless] [--json-response]
//                            [--port 0]
// Prints the port it listens on (127.0.0.1) alone on the first line, then serves until
// SIGTERM, SIGINT or the end of stdin (keep stdin piped and open while probing).
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import express from 'express';
import { z } from 'zod';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { localhostHostValidation } from '@modelcontextprotocol/sdk/server/middleware/hostHeaderValidation.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';

const { values: opts } = parseArgs({
  options: {
    name: { type: 'string', default: 'liveness-translator-js' },
    path: { type: 'string', default: '/mcp' },
    stateless: { type: 'boolean', default: false },
    'json-response': { type: 'boolean', default: false },
    port: { type: 'string', default: '0' },
  },
});

const GREETINGS = { en: 'hello', fr: 'bonjour', de: 'hallo', es: 'hola' };

function buildServer() {
  const server = new McpServer({ name: opts.name, version: '1.0.0' });
  server.registerTool(
    'translate_text',
    {
      description: 'Translate a text into the target language (ISO 639-1 code).',
      inputSchema: { text: z.string(), target_language: z.string() },
    },
    async ({ text, target_language }) => ({
      content: [{ type: 'text', text: `[${target_language}] ${text}` }],
    }),
  );
  server.registerTool(
    'detect_language',
    {
      description: 'Detect the language of a text; returns an ISO 639-1 code.',
      inputSchema: { text: z.string() },
    },
    async ({ text }) => {
      const words = text.toLowerCase().split(/\s+/);
      const code = Object.keys(GREETINGS).find((c) => words.includes(GREETINGS[c])) ?? 'en';
      return { content: [{ type: 'text', text: code }] };
    },
  );
  return server;
}

const refuse = (res, status, message) =>
  res.status(status).json({ jsonrpc: '2.0', error: { code: -32000, message }, id: null });

const transports = new Map(); // session id -> transport (stateful mode)
const app = express();
app.use(localhostHostValidation());
app.use(express.json());

if (opts.stateless) {
  app.all(opts.path, async (req, res) => {
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: opts['json-response'],
    });
    const server = buildServer();
    res.on('close', () => {
      transport.close();
      server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  });
} else {
  app.post(opts.path, async (req, res) => {
    const sessionId = req.get('mcp-session-id');
    let transport = sessionId && transports.get(sessionId);
    if (!transport) {
      if (sessionId) return refuse(res, 404, 'Session not found');
      if (!isInitializeRequest(req.body)) {
        return refuse(res, 400, 'Bad Request: No valid session ID provided');
      }
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        enableJsonResponse: opts['json-response'],
        onsessioninitialized: (id) => transports.set(id, transport),
      });
      transport.onclose = () => transport.sessionId && transports.delete(transport.sessionId);
      await buildServer().connect(transport);
    }
    await transport.handleRequest(req, res, req.body);
  });
  // GET opens the session's server-to-client SSE stream; DELETE ends the session.
  const bySession = async (req, res) => {
    const sessionId = req.get('mcp-session-id');
    const transport = sessionId && transports.get(sessionId);
    if (!transport) {
      return sessionId
        ? refuse(res, 404, 'Session not found')
        : refuse(res, 400, 'Bad Request: No valid session ID provided');
    }
    await transport.handleRequest(req, res);
  };
  app.get(opts.path, bySession);
  app.delete(opts.path, bySession);
}

const listener = app.listen(Number(opts.port), '127.0.0.1', () => {
  process.stdout.write(`${listener.address().port}\n`);
});
const stop = () => process.exit(0);
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
process.stdin.on('end', stop);
process.stdin.on('error', stop);
process.stdin.resume();
