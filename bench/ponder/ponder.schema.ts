// The rows agentindex keeps, as Ponder tables: every event raw, agents with their current
// state, ERC-8004 metadata, feedback with revocations and responses, validations with their
// responses, agent contract card updates, and payments into agents.
import { onchainTable, primaryKey } from 'ponder';

export const rawEvent = onchainTable('raw_event', (t) => ({
  id: t.text().primaryKey(), // block:logIndex
  blockNumber: t.bigint().notNull(),
  logIndex: t.integer().notNull(),
  address: t.hex().notNull(),
  source: t.text().notNull(),
  kind: t.text().notNull(),
  txHash: t.hex().notNull(),
  timestamp: t.bigint().notNull(),
}));

export const agent = onchainTable('agent', (t) => ({
  id: t.text().primaryKey(), // erc8004:{id} or the agent contract
  source: t.text().notNull(),
  owner: t.hex().notNull(),
  uri: t.text(),
  wallet: t.hex(),
  name: t.text(),
  cardUpdates: t.integer().notNull(),
  registeredBlock: t.bigint().notNull(),
  lastEventBlock: t.bigint().notNull(),
}));

export const metadata = onchainTable(
  'metadata',
  (t) => ({
    agentId: t.bigint().notNull(),
    key: t.text().notNull(),
    value: t.hex().notNull(),
    blockNumber: t.bigint().notNull(),
  }),
  (table) => ({ pk: primaryKey({ columns: [table.agentId, table.key] }) }),
);

export const feedback = onchainTable('feedback', (t) => ({
  id: t.text().primaryKey(), // agentId:client:index
  agentId: t.bigint().notNull(),
  client: t.hex().notNull(),
  feedbackIndex: t.bigint().notNull(),
  value: t.bigint().notNull(),
  valueDecimals: t.integer().notNull(),
  tag1: t.text().notNull(),
  tag2: t.text().notNull(),
  endpoint: t.text().notNull(),
  uri: t.text().notNull(),
  hash: t.hex().notNull(),
  revoked: t.boolean().notNull(),
  blockNumber: t.bigint().notNull(),
}));

export const feedbackResponse = onchainTable('feedback_response', (t) => ({
  id: t.text().primaryKey(), // block:logIndex
  feedbackId: t.text().notNull(),
  responder: t.hex().notNull(),
  uri: t.text().notNull(),
  hash: t.hex().notNull(),
}));

export const validation = onchainTable('validation', (t) => ({
  id: t.hex().primaryKey(), // request hash
  agentId: t.bigint().notNull(),
  validator: t.hex().notNull(),
  uri: t.text().notNull(),
  responses: t.integer().notNull(),
  lastResponse: t.integer(),
  blockNumber: t.bigint().notNull(),
}));

export const validationResponse = onchainTable('validation_response', (t) => ({
  id: t.text().primaryKey(), // block:logIndex
  requestHash: t.hex().notNull(),
  response: t.integer().notNull(),
  uri: t.text().notNull(),
  tag: t.text().notNull(),
}));

export const payment = onchainTable('payment', (t) => ({
  id: t.text().primaryKey(), // block:logIndex
  agent: t.hex().notNull(),
  payer: t.hex().notNull(),
  amount: t.bigint().notNull(),
  blockNumber: t.bigint().notNull(),
  txHash: t.hex().notNull(),
}));
