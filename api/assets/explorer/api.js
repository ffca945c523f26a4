// Reading the public GraphQL API, as any client does.

// Runs one query; an answer with errors is thrown as one Error naming them.
export async function gql(query, variables = {}) {
  const response = await fetch('/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query, variables }),
  });
  if (response.status === 429) {
    throw new Error(`the API asks to wait ${response.headers.get('retry-after') || 'a few'} s (rate limit)`);
  }
  let body;
  try {
    body = await response.json();
  } catch {
    throw new Error(`the API answered ${response.status} without JSON`);
  }
  if (body.errors && body.errors.length) throw new Error(body.errors.map((e) => e.message).join('; '));
  return body.data;
}

let tokens = null;
// The configured payment tokens (symbols and decimals), fetched once per page load.
export function paymentTokens() {
  tokens ??= gql('{ paymentTokens { chainId address symbol decimals } }')
    .then((data) => data.paymentTokens)
    .catch(() => []);
  return tokens;
}
