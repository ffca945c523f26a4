// Starts GraphiQL on this page against the API that served it, subscriptions over
// /graphql/ws (every file it loads is embedded in agentindex, so it works with no internet).
'use strict';
(function start() {
  const socket = (location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + '/graphql/ws';
  const fetcher = GraphiQL.createFetcher({
    url: window.location.pathname,
    wsClient: graphqlWs.createClient({ url: socket, lazy: true }),
  });
  const defaultQuery = `# Agents with a skill, accepting x402, best reputation first
{
  agents(filter: { x402: true }, orderBy: REPUTATION, first: 10) {
    totalCount
    edges { node { id name skills { id tags } reputation { score paymentCount uniquePayers } } }
  }
}
`;
  ReactDOM.createRoot(document.getElementById('graphiql'))
    .render(React.createElement(GraphiQL, { fetcher, defaultQuery }));
})();
