// Serves an Agent Card at /.well-known/agent-card.json with the official A2A JS SDK's card
// handler on express, for agentindex's interoperability tests.
// Usage: node serve-card.mjs KEY.pem ALG KID MODE < card.json
//   MODE "signed": the card as given, signed by the SDK's signer (v1.0 shape).
//   MODE "legacy": unsigned, with the SDK's v0.3 compatibility layer, which answers clients that
//                  send no A2A-Version header with the v0.3 shape of the card.
//   MODE "legacy-signed": signed, and served through the compatibility layer.
// Prints the port it listens on (127.0.0.1), then serves until killed.
import { readFileSync } from 'node:fs';
import express from 'express';
import { importPKCS8 } from 'jose';
import { generateAgentCardSignature } from '@a2a-js/sdk';
import { agentCardHandler } from '@a2a-js/sdk/server/express';

const [keyPath, alg, kid, mode] = process.argv.slice(2);
let card = JSON.parse(readFileSync(0, 'utf8'));
if (mode !== 'legacy') {
  const key = await importPKCS8(readFileSync(keyPath, 'utf8'), alg);
  card = await generateAgentCardSignature(key, { alg, kid, typ: 'JOSE' })(card);
}
const app = express();
app.use(
  '/.well-known/agent-card.json',
  agentCardHandler({
    agentCardProvider: async () => card,
    legacyCompat: { enabled: mode !== 'signed' },
  }),
);
const server = app.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${server.address().port}\n`);
});
