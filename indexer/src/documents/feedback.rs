//! ERC-8004 feedback files: the off-chain document a `NewFeedback` event's `feedbackURI` names.
//! Reputation reads one thing from it, the client's `proofOfPayment` (the transaction that paid
//! the agent), and the fields that tie the file to its feedback (`agentRegistry`, `agentId`,
//! `clientAddress`). Whether a proof is believed is reputation's business (it must match an
//! indexed payment); this module only reads what the file says, and lints what it gets wrong.
//! The rest of what a file describes (its text, value, tags, and the MCP, A2A and OASF context
//! of the call rated) is kept for the agent0 subgraph endpoint's `FeedbackFile`.

use super::json::{Fields, parse};
use super::lint::Report;
use alloy::primitives::{Address, B256};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The transaction a feedback file cites as the client's payment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProofOfPayment {
    /// The paying transaction.
    pub tx_hash: B256,
    /// Who paid, when the file says.
    pub from_address: Option<Address>,
    /// Who was paid, when the file says.
    pub to_address: Option<Address>,
    /// The chain it was paid on, when the file says (decimal text, or a CAIP-2 `eip155:{id}`).
    pub chain_id: Option<u64>,
}

/// What reputation reads from a feedback file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FeedbackFileProjection {
    /// `eip155:{chain}:{identity registry}`, as written.
    pub agent_registry: Option<String>,
    /// The agent's token id, as decimal text.
    pub agent_id: Option<String>,
    /// The client, from `clientAddress` (bare or CAIP-10).
    pub client_address: Option<Address>,
    /// The payment the client cites.
    pub proof_of_payment: Option<ProofOfPayment>,
    /// What the call rated was, and what the client said of it.
    #[serde(default, flatten)]
    pub details: FeedbackDetails,
}

/// The descriptive fields of a feedback file, as written; each left out when absent or of the
/// wrong type.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FeedbackDetails {
    /// `text`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// `createdAt` (ISO 8601, as written).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
    /// `value`, as decimal text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// `valueDecimals`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_decimals: Option<u8>,
    /// `tag1`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tag1: Option<String>,
    /// `tag2`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tag2: Option<String>,
    /// `mcp.tool`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp_tool: Option<String>,
    /// `mcp.prompt`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp_prompt: Option<String>,
    /// `mcp.resource`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp_resource: Option<String>,
    /// `a2a.skills`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub a2a_skills: Vec<String>,
    /// `a2a.contextId`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub a2a_context_id: Option<String>,
    /// `a2a.taskId`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub a2a_task_id: Option<String>,
    /// `oasf.skills`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub oasf_skills: Vec<String>,
    /// `oasf.domains`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub oasf_domains: Vec<String>,
}

/// The descriptive fields of feedback file `file`.
fn read_details(file: &Fields<'_>, report: &mut Report) -> FeedbackDetails {
    let mcp = file.object(&["mcp"], report);
    let a2a = file.object(&["a2a"], report);
    let oasf = file.object(&["oasf"], report);
    let value = file.any(&["value"]).and_then(|(key, v)| match v {
        Value::Number(n) if n.is_i64() || n.is_u64() => Some(n.to_string()),
        Value::String(s) if s.parse::<i128>().is_ok() => Some(s.clone()),
        _ => {
            report.warning(
                "feedback.value",
                file.path_of(key),
                "value is not an integer",
            );
            None
        }
    });
    let value_decimals = file.any(&["valueDecimals"]).and_then(|(key, v)| {
        let decimals = v.as_u64().and_then(|d| u8::try_from(d).ok());
        if decimals.is_none() {
            report.warning(
                "feedback.value_decimals",
                file.path_of(key),
                "valueDecimals is not a small non-negative integer",
            );
        }
        decimals
    });
    FeedbackDetails {
        text: file.string(&["text"], report),
        created_at: file.string(&["createdAt"], report),
        value,
        value_decimals,
        tag1: file.string(&["tag1"], report),
        tag2: file.string(&["tag2"], report),
        mcp_tool: mcp.as_ref().and_then(|m| m.string(&["tool"], report)),
        mcp_prompt: mcp.as_ref().and_then(|m| m.string(&["prompt"], report)),
        mcp_resource: mcp.as_ref().and_then(|m| m.string(&["resource"], report)),
        a2a_skills: a2a
            .as_ref()
            .map(|a| a.strings(&["skills"], report))
            .unwrap_or_default(),
        a2a_context_id: a2a.as_ref().and_then(|a| a.string(&["contextId"], report)),
        a2a_task_id: a2a.as_ref().and_then(|a| a.string(&["taskId"], report)),
        oasf_skills: oasf
            .as_ref()
            .map(|o| o.strings(&["skills"], report))
            .unwrap_or_default(),
        oasf_domains: oasf
            .as_ref()
            .map(|o| o.strings(&["domains"], report))
            .unwrap_or_default(),
    }
}

impl FeedbackFileProjection {
    /// Whether nothing in the file contradicts it being the feedback of `client` for token
    /// `agent_id` of `registry` on `chain_id` (fields the file leaves out contradict nothing).
    pub fn fits(&self, chain_id: u64, registry: Address, agent_id: &str, client: Address) -> bool {
        let registry_fits = self.agent_registry.as_deref().is_none_or(|written| {
            caip10(written).is_some_and(|(chain, address)| {
                chain.is_none_or(|c| c == chain_id) && address == registry
            })
        });
        registry_fits
            && self.agent_id.as_deref().is_none_or(|id| id == agent_id)
            && self.client_address.is_none_or(|c| c == client)
    }
}

/// Reads a feedback file from its bytes; `None` when it is not a JSON object at all.
pub fn parse_feedback_file(bytes: &[u8], report: &mut Report) -> Option<FeedbackFileProjection> {
    let value = parse(bytes, report)?;
    read_feedback_file(&value, report)
}

/// Reads a feedback file from parsed JSON.
pub fn read_feedback_file(value: &Value, report: &mut Report) -> Option<FeedbackFileProjection> {
    let file = Fields::of(value, "$", report, "feedback.not_object")?;
    let agent_registry = file.string(&["agentRegistry"], report);
    if let Some(written) = &agent_registry
        && caip10(written).is_none()
    {
        report.warning(
            "feedback.agent_registry",
            "$.agentRegistry",
            format!("{written:?} is not eip155:{{chain}}:{{address}}"),
        );
    }
    let agent_id = file.any(&["agentId"]).and_then(|(key, v)| {
        let id = decimal_text(v);
        if id.is_none() {
            report.warning(
                "feedback.agent_id",
                file.path_of(key),
                "agentId is not a non-negative integer",
            );
        }
        id
    });
    let client_address =
        file.string(&["clientAddress"], report)
            .and_then(|written| match caip10(&written) {
                Some((_, address)) => Some(address),
                None => {
                    report.warning(
                        "feedback.client_address",
                        "$.clientAddress",
                        format!("{written:?} is not an address"),
                    );
                    None
                }
            });
    let proof_of_payment = file
        .any(&["proofOfPayment"])
        .and_then(|(key, v)| read_proof(v, &file.path_of(key), report));
    let details = read_details(&file, report);
    Some(FeedbackFileProjection {
        agent_registry,
        agent_id,
        client_address,
        proof_of_payment,
        details,
    })
}

/// A `proofOfPayment` object; without a readable `txHash` it proves nothing and is left out.
fn read_proof(value: &Value, path: &str, report: &mut Report) -> Option<ProofOfPayment> {
    let proof = Fields::of(value, path, report, "feedback.proof.not_object")?;
    let address = |key: &'static str, report: &mut Report| {
        let written = proof.string(&[key], report)?;
        let parsed = caip10(&written).map(|(_, a)| a);
        if parsed.is_none() {
            report.warning(
                "feedback.proof.address",
                proof.path_of(key),
                format!("{written:?} is not an address"),
            );
        }
        parsed
    };
    let from_address = address("fromAddress", report);
    let to_address = address("toAddress", report);
    let chain_id = proof.any(&["chainId"]).and_then(|(key, v)| {
        let id = decimal_text(v)
            .or_else(|| {
                v.as_str()
                    .and_then(|s| s.strip_prefix("eip155:"))
                    .map(str::to_string)
            })
            .and_then(|s| s.parse::<u64>().ok());
        if id.is_none() {
            report.warning(
                "feedback.proof.chain_id",
                proof.path_of(key),
                "chainId is not a chain id",
            );
        }
        id
    });
    let Some(written) = proof.string(&["txHash"], report) else {
        report.warning(
            "feedback.proof.tx_hash",
            proof.path_of("txHash"),
            "a proof of payment without txHash proves nothing",
        );
        return None;
    };
    let Ok(tx_hash) = written.parse::<B256>() else {
        report.warning(
            "feedback.proof.tx_hash",
            proof.path_of("txHash"),
            format!("{written:?} is not a transaction hash"),
        );
        return None;
    };
    Some(ProofOfPayment {
        tx_hash,
        from_address,
        to_address,
        chain_id,
    })
}

/// An address written bare or as CAIP-10 (`eip155:{chain}:{address}`), with the chain if given.
fn caip10(written: &str) -> Option<(Option<u64>, Address)> {
    let mut parts = written.trim().rsplitn(2, ':');
    let address = parts.next()?.parse::<Address>().ok()?;
    match parts.next() {
        None => Some((None, address)),
        Some(prefix) => {
            let chain = prefix.strip_prefix("eip155:")?.parse::<u64>().ok()?;
            Some((Some(chain), address))
        }
    }
}

/// A non-negative integer written as a JSON number or as decimal text.
fn decimal_text(value: &Value) -> Option<String> {
    match value {
        Value::Number(n) => n.as_u64().map(|n| n.to_string()),
        Value::String(s) if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) => {
            let trimmed = s.trim_start_matches('0');
            Some(if trimmed.is_empty() { "0" } else { trimmed }.to_string())
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy::primitives::address;

    const CLIENT: Address = address!("00000000000000000000000000000000000000c1");
    const REGISTRY: Address = address!("8004a818bfb912233c491871b3d84c89a494bd9e");

    fn read(json: &str) -> (Option<FeedbackFileProjection>, Report) {
        let mut report = Report::default();
        (parse_feedback_file(json.as_bytes(), &mut report), report)
    }

    #[test]
    fn a_file_in_the_specification_shape_reads_its_proof_and_fits_its_feedback() {
        let (file, report) = read(
            r#"{"agentRegistry": "eip155:84532:0x8004A818BFB912233c491871b3d84c89A494BD9e",
                "agentId": 22, "clientAddress": "eip155:84532:0x00000000000000000000000000000000000000c1",
                "createdAt": "2025-09-23T12:00:00Z", "value": 100, "valueDecimals": 0,
                "proofOfPayment": {"fromAddress": "0x00000000000000000000000000000000000000c1",
                  "toAddress": "0x00000000000000000000000000000000000000a1", "chainId": "84532",
                  "txHash": "0x1111111111111111111111111111111111111111111111111111111111111111"}}"#,
        );
        let file = file.unwrap();
        assert!(report.lints.is_empty(), "{report:?}");
        let proof = file.proof_of_payment.clone().unwrap();
        assert_eq!(proof.tx_hash, B256::repeat_byte(0x11));
        assert_eq!(proof.from_address, Some(CLIENT));
        assert_eq!(proof.chain_id, Some(84532));
        assert!(file.fits(84532, REGISTRY, "22", CLIENT));
        assert!(!file.fits(1, REGISTRY, "22", CLIENT), "another chain");
        assert!(!file.fits(84532, REGISTRY, "23", CLIENT), "another agent");
        assert!(
            !file.fits(84532, REGISTRY, "22", Address::ZERO),
            "another client"
        );
    }

    #[test]
    fn a_proof_without_a_readable_tx_hash_is_left_out_with_a_warning() {
        for proof in [
            r#"{"fromAddress": "0x00000000000000000000000000000000000000c1"}"#,
            r#"{"txHash": "0x12"}"#,
            r#""paid""#,
        ] {
            let (file, report) = read(&format!(r#"{{"agentId": "7", "proofOfPayment": {proof}}}"#));
            let file = file.unwrap();
            assert_eq!(file.proof_of_payment, None, "{proof}");
            assert_eq!(file.agent_id.as_deref(), Some("7"));
            assert!(!report.lints.is_empty(), "{proof}: a warning");
            assert!(!report.has_errors(), "{proof}: still a usable file");
        }
    }

    #[test]
    fn a_file_that_is_not_an_object_is_an_error() {
        let (file, report) = read("[1, 2]");
        assert_eq!(file, None);
        assert!(report.has_errors());
    }

    #[test]
    fn fields_left_out_contradict_nothing() {
        let (file, _) = read("{}");
        assert!(file.unwrap().fits(1, REGISTRY, "1", CLIENT));
    }

    #[test]
    fn what_the_call_was_is_kept_as_written() {
        let (file, report) = read(
            r#"{"agentId": 3, "text": "quick and right", "createdAt": "2026-11-25T10:00:00Z",
                "value": -250, "valueDecimals": 2, "tag1": "starred",
                "mcp": {"tool": "get_weather"}, "a2a": {"skills": ["forecast"], "contextId": "c1", "taskId": "t9"},
                "oasf": {"skills": ["analytical_skills/forecast"], "domains": ["technology"]}}"#,
        );
        let details = file.expect("an object").details;
        assert_eq!(details.text.as_deref(), Some("quick and right"));
        assert_eq!(details.created_at.as_deref(), Some("2026-11-25T10:00:00Z"));
        assert_eq!(
            (details.value.as_deref(), details.value_decimals),
            (Some("-250"), Some(2))
        );
        assert_eq!(details.tag1.as_deref(), Some("starred"));
        assert_eq!(details.mcp_tool.as_deref(), Some("get_weather"));
        assert_eq!(details.a2a_skills, vec!["forecast".to_string()]);
        assert_eq!(
            (
                details.a2a_context_id.as_deref(),
                details.a2a_task_id.as_deref()
            ),
            (Some("c1"), Some("t9"))
        );
        assert_eq!(details.oasf_domains, vec!["technology".to_string()]);
        assert!(report.lints.is_empty(), "{:?}", report.lints);
        // A value that is no integer is linted and left out; the rest stays.
        let (file, report) = read(r#"{"value": "lots", "text": "hm"}"#);
        let details = file.expect("an object").details;
        assert_eq!((details.value, details.text.as_deref()), (None, Some("hm")));
        assert!(report.lints.iter().any(|l| l.code == "feedback.value"));
    }
}
