// Runs read calls of the agent0 TypeScript SDK against a subgraph endpoint and prints, as one
// JSON object, what each call returned (or the error it threw) and every GraphQL document the
// SDK sent to the endpoint, with its variables, in order.
//
// stdin: {"subgraph": url, "rpc": url, "chainId": n, "registries": {"IDENTITY", "REPUTATION",
// "VALIDATION"}, "calls": [{"name", "method", "args"}]}
import { SDK } from 'agent0-sdk';
import { GraphQLClient } from 'graphql-request';

const job = JSON.parse(await new Promise((resolve) => {
  let text = '';
  process.stdin.on('data', (chunk) => { text += chunk; });
  process.stdin.on('end', () => resolve(text));
}));

// Every request the SDK makes to the subgraph goes through graphql-request's client (the same
// module instance the SDK imports): record each document and its variables on the way.
const sent = [];
const request = GraphQLClient.prototype.request;
GraphQLClient.prototype.request = function (document, variables, ...rest) {
  sent.push({ query: String(document), variables: variables ?? {} });
  return request.call(this, document, variables, ...rest);
};

const sdk = new SDK({
  chainId: job.chainId,
  rpcUrl: job.rpc,
  subgraphOverrides: { [job.chainId]: job.subgraph },
  registryOverrides: { [job.chainId]: job.registries },
});

const results = {};
for (const call of job.calls) {
  try {
    results[call.name] = await sdk[call.method](...call.args);
  } catch (error) {
    results[call.name] = { error: String(error && error.message ? error.message : error) };
  }
}
process.stdout.write(JSON.stringify({ results, sent }, (_, v) => (typeof v === 'bigint' ? v.toString() : v)));
