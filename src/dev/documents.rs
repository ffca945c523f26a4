//! The built-in document server of `agentindex dev`: every demo agent's A2A card (v1.0, or the
//! legacy v0.3 shape), signed with the demo key or not, and for ERC-8004 agents a registration
//! file naming the agent back. Documents are written from the catalogue when asked for, so they
//! can name addresses and ids only known once the agents are on-chain.

use super::catalog::DemoAgent;
use alloy::primitives::Address;
use axum::Router;
use axum::extract::{Path, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::jwk::Jwk;
use jsonwebtoken::{Algorithm, EncodingKey};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, RwLock};

/// The key demo cards are signed with: the project's fixed ES256 test key, public in the
/// repository, for demos only.
const DEMO_KEY_PEM: &[u8] = include_bytes!("../../tests/fixtures/keys/es256.pem");
/// Its key id.
pub(crate) const DEMO_KEY_ID: &str = "agentindex-demo";

/// What is known of the agents once they are on-chain.
#[derive(Debug, Default)]
pub(crate) struct OnChain {
    /// Where each agent is paid (the agent contract, or the ERC-8004 owner's wallet).
    pub(crate) pay_to: HashMap<usize, Address>,
    /// ERC-8004 token ids.
    pub(crate) token_ids: HashMap<usize, u64>,
}

/// What the server needs to write documents.
#[derive(Clone)]
struct Site {
    base: String,
    chain_id: u64,
    identity: Address,
    usdc: Address,
    agents: Arc<Vec<DemoAgent>>,
    on_chain: Arc<RwLock<OnChain>>,
    key: Arc<EncodingKey>,
}

/// A running document server.
pub(crate) struct DocumentServer {
    /// `http://127.0.0.1:PORT`.
    pub(crate) base: String,
    /// Filled in as agents are registered.
    pub(crate) on_chain: Arc<RwLock<OnChain>>,
}

impl DocumentServer {
    /// Serves the documents of `agents` on a free loopback port until the process ends.
    pub(crate) async fn start(
        agents: Vec<DemoAgent>,
        chain_id: u64,
        identity: Address,
        usdc: Address,
    ) -> anyhow::Result<Self> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let base = format!("http://{}", listener.local_addr()?);
        let on_chain = Arc::new(RwLock::new(OnChain::default()));
        let site = Site {
            base: base.clone(),
            chain_id,
            identity,
            usdc,
            agents: Arc::new(agents),
            on_chain: on_chain.clone(),
            key: Arc::new(EncodingKey::from_ec_pem(DEMO_KEY_PEM)?),
        };
        let app = Router::new()
            .route("/agents/{n}/card.json", get(card))
            .route("/agents/{n}/.well-known/agent-card.json", get(card))
            .route("/agents/{n}/registration.json", get(registration))
            .with_state(site);
        tokio::spawn(async move {
            if let Err(error) = axum::serve(listener, app).await {
                tracing::error!(%error, "the demo document server stopped");
            }
        });
        Ok(Self { base, on_chain })
    }

    /// Where agent `n`'s card is.
    pub(crate) fn card_url(&self, n: usize) -> String {
        format!("{}/agents/{n}/card.json", self.base)
    }

    /// Where ERC-8004 agent `n`'s registration file is.
    pub(crate) fn registration_url(&self, n: usize) -> String {
        format!("{}/agents/{n}/registration.json", self.base)
    }
}

/// The public JWK cards are signed with, to trust in the config.
pub(crate) fn demo_jwk() -> anyhow::Result<Jwk> {
    let key = EncodingKey::from_ec_pem(DEMO_KEY_PEM)?;
    let mut jwk = Jwk::from_encoding_key(&key, Algorithm::ES256)?;
    jwk.common.key_id = Some(DEMO_KEY_ID.into());
    Ok(jwk)
}

fn agent_of(site: &Site, n: &str) -> Option<DemoAgent> {
    let n: usize = n.parse().ok()?;
    site.agents.get(n).cloned()
}

fn json_response(value: Value) -> Response {
    (
        [(header::CONTENT_TYPE, "application/json")],
        value.to_string(),
    )
        .into_response()
}

async fn card(State(site): State<Site>, Path(n): Path<String>) -> Response {
    let Some(agent) = agent_of(&site, &n) else {
        return StatusCode::NOT_FOUND.into_response();
    };
    let pay_to = site
        .on_chain
        .read()
        .map(|c| c.pay_to.get(&agent.n).copied())
        .unwrap_or_default();
    let card = card_json(&site, &agent, pay_to);
    match agent.signed {
        true => match sign(&site.key, card) {
            Ok(signed) => json_response(signed),
            Err(error) => (StatusCode::INTERNAL_SERVER_ERROR, error.to_string()).into_response(),
        },
        false => json_response(card),
    }
}

async fn registration(State(site): State<Site>, Path(n): Path<String>) -> Response {
    let Some(agent) = agent_of(&site, &n) else {
        return StatusCode::NOT_FOUND.into_response();
    };
    let token_id = site
        .on_chain
        .read()
        .map(|c| c.token_ids.get(&agent.n).copied())
        .unwrap_or_default();
    let registrations: Vec<Value> = token_id
        .map(|id| {
            json!({
                "agentId": id,
                "agentRegistry": format!("eip155:{}:{:#x}", site.chain_id, site.identity),
            })
        })
        .into_iter()
        .collect();
    json_response(json!({
        "type": "https://eips.ethereum.org/EIPS/eip-8004#registration-v1",
        "name": agent.name,
        "description": agent.description,
        "services": [{
            "name": "A2A",
            "endpoint": format!("{}/agents/{}", site.base, agent.n),
            "version": if agent.legacy_card { "0.3.0" } else { "1.0" },
        }],
        "x402Support": agent.price.is_some(),
        "active": true,
        "registrations": registrations,
        "supportedTrust": ["reputation"],
    }))
}

/// The A2A card of `agent`, paid to `pay_to` when it takes x402 payments.
fn card_json(site: &Site, agent: &DemoAgent, pay_to: Option<Address>) -> Value {
    let endpoint = format!("{}/agents/{}/a2a", site.base, agent.n);
    let skills: Vec<Value> = agent
        .skills
        .iter()
        .map(|s| {
            json!({
                "id": s.id, "name": s.name, "description": s.description, "tags": s.tags,
                "examples": [format!("{} please", s.name.to_lowercase())],
            })
        })
        .collect();
    let mut extensions = Vec::new();
    if let Some(price) = agent.price {
        let mut accepts = json!({
            "scheme": "exact",
            "network": format!("eip155:{}", site.chain_id),
            "asset": format!("{:#x}", site.usdc),
            "maxAmountRequired": price.to_string(),
        });
        if let Some(pay_to) = pay_to {
            accepts["payTo"] = json!(format!("{pay_to:#x}"));
        }
        extensions.push(json!({
            "uri": "https://github.com/google-a2a/a2a-x402/v0.1",
            "required": true,
            "params": { "accepts": [accepts] },
        }));
    }
    let capabilities = json!({ "streaming": agent.streaming, "extensions": extensions });
    let mut card = json!({
        "name": agent.name,
        "description": agent.description,
        "version": "1.0.0",
        "provider": { "organization": "agentindex demo", "url": site.base },
        "capabilities": capabilities,
        "defaultInputModes": agent.input_modes,
        "defaultOutputModes": agent.output_modes,
        "skills": skills,
    });
    if agent.legacy_card {
        card["protocolVersion"] = json!("0.3.0");
        card["url"] = json!(endpoint);
        card["preferredTransport"] = json!("JSONRPC");
    } else {
        card["supportedInterfaces"] = json!([
            { "url": endpoint, "protocolBinding": "JSONRPC", "protocolVersion": "1.0" }
        ]);
    }
    card
}

/// `card` with a detached JWS (ES256, the demo key) over its RFC 8785 canonical form.
fn sign(key: &EncodingKey, mut card: Value) -> anyhow::Result<Value> {
    let payload = serde_jcs::to_vec(&card)?;
    let protected = URL_SAFE_NO_PAD
        .encode(json!({ "alg": "ES256", "kid": DEMO_KEY_ID, "typ": "JOSE" }).to_string());
    let message = format!("{protected}.{}", URL_SAFE_NO_PAD.encode(payload));
    let signature = jsonwebtoken::crypto::sign(message.as_bytes(), key, Algorithm::ES256)?;
    card["signatures"] = json!([{ "protected": protected, "signature": signature }]);
    Ok(card)
}
