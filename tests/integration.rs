//! Every integration test but the memory-bounded hostile corpus, linked into one binary: each
//! test binary links the whole stack, so one binary instead of many keeps builds fast and small.

mod support;

mod agent0_sdk;
mod api_abuse;
mod api_caches;
mod api_reads;
mod card_check;
mod circular_flow;
mod client_connections;
mod content_addressing;
mod crash_recovery;
mod demo;
mod deploy_files;
mod devnet_transactions;
mod document_fetch;
mod documents_end_to_end;
mod explorer;
mod feedback_summary;
mod graphql_api;
mod graphql_relations;
mod graphql_subscriptions;
mod hosted_providers;
mod index_scenario;
mod index_smoke;
mod layers;
mod legacy_logs;
mod networks;
mod operations;
mod payment_reputation;
mod postgres_backend;
mod query_budgets;
mod registration_paths;
mod reorgs;
mod reputation_attacks;
mod reputation_feed;
mod rpc_faults;
mod sdk_served_cards;
mod sdk_signatures;
mod secrets;
mod signed_payments;
mod standalone;
mod subgraph_dialect;
mod websocket_limits;
mod wild_documents;
mod x402_paths;
