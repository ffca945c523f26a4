// Reads a Blockfrost-compatible server through Blockfrost's official JS client
// (@blockfrost/blockfrost-js), to prove the emulator speaks the API: tests compare what it read
// with what they expect.
//
// stdin: one JSON object {base, project_id?, unit?, tx?, address?, policy?, registry_policy?,
//   block?} (base: the server's root URL; the client's `customBackend` is used as given, with
//   no /api/v0 appended).
// stdout: one JSON object with every read; exit 1 with the error on stderr on any failure.
import { BlockFrostAPI } from '@blockfrost/blockfrost-js';

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const input = JSON.parse(Buffer.concat(chunks).toString('utf8'));

const api = new BlockFrostAPI({
  customBackend: input.base,
  projectId: input.project_id ?? undefined,
  rateLimiter: false,
  retrySettings: { limit: 0 },
});

try {
  const out = {};
  out.latest = await api.blocksLatest();
  out.block = await api.blocks(input.block ?? 1);
  if (input.policy) out.policy_assets = await api.assetsPolicyById(input.policy, { count: 100, page: 1, order: 'asc' });
  if (input.unit) {
    out.asset = await api.assetsById(input.unit);
    out.asset_history = await api.assetsHistory(input.unit, { order: 'asc' });
  }
  if (input.tx) {
    out.tx = await api.txs(input.tx);
    out.tx_utxos = await api.txsUtxos(input.tx);
    out.tx_metadata = await api.txsMetadata(input.tx);
    out.tx_redeemers = await api.txsRedeemers(input.tx);
    out.tx_cbor = await api.txsCbor(input.tx);
  }
  if (input.address) {
    out.address_transactions = await api.addressesTransactions(input.address, { count: 100, page: 1, order: 'asc' });
  }
  const registryPolicy = input.registry_policy ?? input.policy;
  if (registryPolicy) {
    out.registry_redeemers = await api.scriptsRedeemers(registryPolicy, { count: 100, page: 1, order: 'asc' });
  }
  process.stdout.write(JSON.stringify(out) + '\n');
} catch (error) {
  const detail = error?.status_code ? `${error.status_code} ${error.error}: ${error.message}` : String(error?.stack ?? error);
  process.stderr.write(`read-blockfrost: ${detail}\n`);
  process.exit(1);
}
