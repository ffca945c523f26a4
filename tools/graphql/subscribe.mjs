// Subscribes to an agentindex API over graphql-transport-ws with the graphql-ws client, as an
// SDK would, and prints the first COUNT events' data as a JSON array, then exits. Exits 1 with
// the reason on an error, or when TIMEOUT_MS pass first.
// Usage: node subscribe.mjs ws://127.0.0.1:PORT/graphql/ws QUERY VARIABLES_JSON COUNT [TIMEOUT_MS]
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';

const [url, query, variables, count, timeout] = process.argv.slice(2);
// "connected" on stderr once the server acknowledged the connection (the subscription is sent
// right after), for tests of live-only events.
const client = createClient({
  url, webSocketImpl: WebSocket, lazy: false, retryAttempts: 0,
  on: { connected: () => console.error('connected') },
});
const events = [];
const timer = setTimeout(() => {
  console.error(`timed out with ${events.length} of ${count} events: ${JSON.stringify(events)}`);
  process.exit(1);
}, Number(timeout ?? 60000));
try {
  for await (const result of client.iterate({ query, variables: JSON.parse(variables) })) {
    if (result.errors) throw new Error(JSON.stringify(result.errors));
    events.push(result.data);
    if (events.length >= Number(count)) break;
  }
} catch (error) {
  console.error(String(error?.message ?? JSON.stringify(error)));
  process.exit(1);
}
clearTimeout(timer);
await client.dispose();
process.stdout.write(JSON.stringify(events));
