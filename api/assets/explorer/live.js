// Live updates: GraphQL subscriptions over /graphql/ws (graphql-transport-ws) through the
// graphql-ws browser client, one socket for the whole page, reconnecting when it drops. The
// header's indicator says whether updates are flowing.

let client = null;

function indicator(text, state) {
  const live = document.getElementById('live');
  if (!live) return;
  live.textContent = text;
  live.dataset.state = state;
}

function socket() {
  if (client) return client;
  if (!window.graphqlWs) {
    indicator('live updates unavailable', 'off');
    return null;
  }
  const url = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/graphql/ws`;
  client = window.graphqlWs.createClient({
    url,
    lazy: false,
    keepAlive: 20000,
    retryAttempts: Infinity,
    shouldRetry: () => true,
    on: {
      connected: () => indicator('● live', 'on'),
      closed: () => indicator('reconnecting…', 'off'),
    },
  });
  return client;
}

// Calls `onData` with each event of `query`; returns the function that stops it.
export function subscribe(query, variables, onData) {
  const ws = socket();
  if (!ws) return () => {};
  return ws.subscribe({ query, variables }, {
    next: (message) => message.data && onData(message.data),
    error: (error) => console.warn('subscription failed', error),
    complete: () => {},
  });
}

// Starts the socket so the indicator shows its state on every page.
export function connect() {
  socket();
}

// `fn` at most once per `ms`, after the last call (events come in bursts: one refresh each).
export function debounce(fn, ms) {
  let timer = null;
  return (...args) => {
    clearTimeout(timer);
    timer = setTimeout(() => fn(...args), ms);
  };
}
