// Runs GraphQL queries against an agentindex API with the graphql-request client, as an SDK
// would. Reads a JSON array of {query, variables} from stdin and prints a JSON array of
// results: {data} on success, {errors} (the server's messages) on a GraphQL error.
// A request with "method": "GET" is sent in the URL (graphql-request's GET mode).
// Usage: node query.mjs http://127.0.0.1:PORT/graphql < requests.json
import { GraphQLClient, ClientError } from 'graphql-request';

const endpoint = process.argv[2];
const clients = {
  POST: new GraphQLClient(endpoint),
  GET: new GraphQLClient(endpoint, { method: 'GET' }),
};
let input = '';
for await (const chunk of process.stdin) input += chunk;
const results = [];
for (const { query, variables, method } of JSON.parse(input)) {
  try {
    results.push({ data: await clients[method ?? 'POST'].request(query, variables ?? {}) });
  } catch (error) {
    if (error instanceof ClientError) {
      results.push({ errors: (error.response.errors ?? []).map((e) => e.message), status: error.response.status });
    } else {
      throw error;
    }
  }
}
process.stdout.write(JSON.stringify(results));
