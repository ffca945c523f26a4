// Signs an Agent Card with the official A2A JS SDK's signer, for agentindex's interoperability
// tests. Usage: node sign-card.mjs KEY.pem ALG KID < card.json > signed.json
import { readFileSync } from 'node:fs';
import { importPKCS8 } from 'jose';
import { generateAgentCardSignature } from '@a2a-js/sdk';

const [keyPath, alg, kid] = process.argv.slice(2);
const card = JSON.parse(readFileSync(0, 'utf8'));
const key = await importPKCS8(readFileSync(keyPath, 'utf8'), alg);
const signed = await generateAgentCardSignature(key, { alg, kid, typ: 'JOSE' })(card);
process.stdout.write(JSON.stringify(signed));
