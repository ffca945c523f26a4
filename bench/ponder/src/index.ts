// Handlers equivalent to agentindex's: every event stored raw, then applied to the tables
// agentindex derives from it.
import { ponder } from 'ponder:registry';
import {
  agent,
  feedback,
  feedbackResponse,
  metadata,
  payment,
  rawEvent,
  validation,
  validationResponse,
} from 'ponder:schema';

type Raw = {
  block: { number: bigint; timestamp: bigint };
  log: { logIndex: number; address: `0x${string}` };
  transaction: { hash: `0x${string}` };
};

const at = (event: Raw) => `${event.block.number}:${event.log.logIndex}`;

async function raw(context: { db: any }, event: Raw, source: string, kind: string) {
  await context.db.insert(rawEvent).values({
    id: at(event),
    blockNumber: event.block.number,
    logIndex: event.log.logIndex,
    address: event.log.address,
    source,
    kind,
    txHash: event.transaction.hash,
    timestamp: event.block.timestamp,
  });
}

const erc8004 = (id: bigint) => `erc8004:${id}`;

ponder.on('Identity:Registered', async ({ event, context }) => {
  await raw(context, event, 'identity', 'Registered');
  await context.db.insert(agent).values({
    id: erc8004(event.args.agentId),
    source: 'erc8004',
    owner: event.args.owner,
    uri: event.args.agentURI,
    wallet: event.args.owner,
    cardUpdates: 0,
    registeredBlock: event.block.number,
    lastEventBlock: event.block.number,
  });
});

ponder.on('Identity:URIUpdated', async ({ event, context }) => {
  await raw(context, event, 'identity', 'URIUpdated');
  await context.db
    .update(agent, { id: erc8004(event.args.agentId) })
    .set({ uri: event.args.newURI, lastEventBlock: event.block.number });
});

ponder.on('Identity:MetadataSet', async ({ event, context }) => {
  await raw(context, event, 'identity', 'MetadataSet');
  await context.db
    .insert(metadata)
    .values({
      agentId: event.args.agentId,
      key: event.args.metadataKey,
      value: event.args.metadataValue,
      blockNumber: event.block.number,
    })
    .onConflictDoUpdate({ value: event.args.metadataValue, blockNumber: event.block.number });
  if (event.args.metadataKey === 'agentWallet') {
    const value = event.args.metadataValue;
    const wallet = value.length === 42 ? value : null;
    const row = await context.db.find(agent, { id: erc8004(event.args.agentId) });
    if (row) {
      await context.db
        .update(agent, { id: row.id })
        .set({ wallet, lastEventBlock: event.block.number });
    }
  }
});

ponder.on('Identity:Transfer', async ({ event, context }) => {
  await raw(context, event, 'identity', 'Transfer');
  const row = await context.db.find(agent, { id: erc8004(event.args.tokenId) });
  if (row) {
    await context.db
      .update(agent, { id: row.id })
      .set({ owner: event.args.to, lastEventBlock: event.block.number });
  }
});

ponder.on('Reputation:NewFeedback', async ({ event, context }) => {
  await raw(context, event, 'reputation', 'NewFeedback');
  const a = event.args;
  await context.db.insert(feedback).values({
    id: `${a.agentId}:${a.clientAddress}:${a.feedbackIndex}`,
    agentId: a.agentId,
    client: a.clientAddress,
    feedbackIndex: a.feedbackIndex,
    value: a.value,
    valueDecimals: a.valueDecimals,
    tag1: a.tag1,
    tag2: a.tag2,
    endpoint: a.endpoint,
    uri: a.feedbackURI,
    hash: a.feedbackHash,
    revoked: false,
    blockNumber: event.block.number,
  });
});

ponder.on('Reputation:FeedbackRevoked', async ({ event, context }) => {
  await raw(context, event, 'reputation', 'FeedbackRevoked');
  const a = event.args;
  const id = `${a.agentId}:${a.clientAddress}:${a.feedbackIndex}`;
  if (await context.db.find(feedback, { id })) {
    await context.db.update(feedback, { id }).set({ revoked: true });
  }
});

ponder.on('Reputation:ResponseAppended', async ({ event, context }) => {
  await raw(context, event, 'reputation', 'ResponseAppended');
  const a = event.args;
  await context.db.insert(feedbackResponse).values({
    id: at(event),
    feedbackId: `${a.agentId}:${a.clientAddress}:${a.feedbackIndex}`,
    responder: a.responder,
    uri: a.responseURI,
    hash: a.responseHash,
  });
});

ponder.on('Validation:ValidationRequest', async ({ event, context }) => {
  await raw(context, event, 'validation', 'ValidationRequest');
  const a = event.args;
  await context.db
    .insert(validation)
    .values({
      id: a.requestHash,
      agentId: a.agentId,
      validator: a.validatorAddress,
      uri: a.requestURI,
      responses: 0,
      blockNumber: event.block.number,
    })
    .onConflictDoNothing();
});

ponder.on('Validation:ValidationResponse', async ({ event, context }) => {
  await raw(context, event, 'validation', 'ValidationResponse');
  const a = event.args;
  await context.db.insert(validationResponse).values({
    id: at(event),
    requestHash: a.requestHash,
    response: a.response,
    uri: a.responseURI,
    tag: a.tag,
  });
  const request = await context.db.find(validation, { id: a.requestHash });
  if (request) {
    await context.db
      .update(validation, { id: a.requestHash })
      .set({ responses: request.responses + 1, lastResponse: a.response });
  }
});

ponder.on('Factory:AgentCreated', async ({ event, context }) => {
  await raw(context, event, 'factory', 'AgentCreated');
  await context.db.insert(agent).values({
    id: event.args.agent.toLowerCase(),
    source: 'factory',
    owner: event.args.owner,
    cardUpdates: 0,
    registeredBlock: event.block.number,
    lastEventBlock: event.block.number,
  });
});

ponder.on('Agent:CardUpdated', async ({ event, context }) => {
  await raw(context, event, 'agent', 'CardUpdated');
  const id = event.log.address.toLowerCase();
  const row = await context.db.find(agent, { id });
  if (row) {
    await context.db.update(agent, { id }).set({
      name: event.args.card.name,
      cardUpdates: row.cardUpdates + 1,
      lastEventBlock: event.block.number,
    });
  }
});

ponder.on('Agent:PaymentReceived', async ({ event, context }) => {
  await raw(context, event, 'agent', 'PaymentReceived');
});

ponder.on('Usdc:Transfer', async ({ event, context }) => {
  const payee = await context.db.find(agent, { id: event.args.to.toLowerCase() });
  if (!payee) return;
  await raw(context, event, 'token', 'Transfer');
  await context.db.insert(payment).values({
    id: at(event),
    agent: event.args.to,
    payer: event.args.from,
    amount: event.args.value,
    blockNumber: event.block.number,
    txHash: event.transaction.hash,
  });
});

// Events agentindex stores without deriving a row Ponder would keep: stored raw here too.
const rawOnly = [
  ['Identity:Approval', 'identity'],
  ['Identity:ApprovalForAll', 'identity'],
  ['Identity:MetadataUpdate', 'identity'],
  ['Identity:BatchMetadataUpdate', 'identity'],
  ['Agent:ActiveChanged', 'agent'],
  ['Agent:Heartbeat', 'agent'],
  ['Agent:HeartbeatIntervalChanged', 'agent'],
  ['Agent:OwnershipTransferred', 'agent'],
  ['Agent:Rated', 'agent'],
  ['Agent:Withdrawn', 'agent'],
] as const;
for (const [name, source] of rawOnly) {
  ponder.on(name, async ({ event, context }) => {
    await raw(context, event as unknown as Raw, source, name.split(':')[1]!);
  });
}
