// The contracts agentindex follows, on the benchmark's anvil: addresses and the start block come
// from the environment the benchmark sets (BENCH_RPC, BENCH_IDENTITY, …).
import { createConfig, factory } from 'ponder';
import { http, getAbiItem } from 'viem';
import * as abis from './abis';

const env = (key: string): string => {
  const value = process.env[key];
  if (!value) throw new Error(`${key} is not set`);
  return value;
};
const address = (key: string) => env(key) as `0x${string}`;
const startBlock = Number(env('BENCH_START_BLOCK'));

export default createConfig({
  chains: {
    anvil: {
      id: Number(env('BENCH_CHAIN_ID')),
      rpc: http(env('BENCH_RPC'), { maxResponseBodySize: false } as never),
      disableCache: true,
      // The benchmark's request budget (a provider plan's rate); Ponder's own default is 50.
      maxRequestsPerSecond: Number(process.env.BENCH_MAX_RPS ?? '50'),
    },
  },
  contracts: {
    Identity: { chain: 'anvil', abi: abis.IdentityRegistry, address: address('BENCH_IDENTITY'), startBlock },
    Reputation: { chain: 'anvil', abi: abis.ReputationRegistry, address: address('BENCH_REPUTATION'), startBlock },
    Validation: { chain: 'anvil', abi: abis.ValidationRegistry, address: address('BENCH_VALIDATION'), startBlock },
    Factory: { chain: 'anvil', abi: abis.AgentFactory, address: address('BENCH_FACTORY'), startBlock },
    Agent: {
      chain: 'anvil',
      abi: abis.AgentCard,
      address: factory({
        address: address('BENCH_FACTORY'),
        event: getAbiItem({ abi: abis.AgentFactory, name: 'AgentCreated' }),
        parameter: 'agent',
      }),
      startBlock,
    },
    // Payments: USDC transfers into agent contracts. agentindex asks the node only for those
    // (payees in topics[2]); Ponder 0.16 cannot filter event arguments by a factory's children,
    // so it takes every USDC Transfer and its handler keeps those into agents.
    Usdc: { chain: 'anvil', abi: abis.TestUSDC, address: address('BENCH_USDC'), startBlock },
  },
});
