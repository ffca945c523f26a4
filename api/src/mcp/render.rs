//! The short text beside each tool's structured answer: what a model can quote, or what a
//! client that shows only text shows.

use super::tools::Tool;
use serde_json::Value;
use std::fmt::Write;

/// The text of `tool`'s structured `answer` (`super::answers::shape`).
pub(crate) fn text(tool: Tool, answer: &Value) -> String {
    match tool {
        Tool::SearchAgents => agents(answer),
        Tool::GetAgent => agent(answer),
        Tool::GetReputation => reputation(answer),
        Tool::ListPayments => payments(answer),
        Tool::ListFeedback => feedback(answer),
        Tool::NetworkStatus => network(answer),
    }
}

/// A string field, or `fallback`.
fn or<'a>(value: &'a Value, fallback: &'a str) -> &'a str {
    value.as_str().unwrap_or(fallback)
}

/// A number with at most one decimal.
fn number(value: &Value) -> String {
    match value.as_f64() {
        Some(n) if n.fract() == 0.0 => format!("{n:.0}"),
        Some(n) => format!("{n:.1}"),
        None => "none".into(),
    }
}

/// A 0–1 share as a percentage.
fn percent(value: &Value) -> Option<String> {
    value.as_f64().map(|share| format!("{:.0}%", share * 100.0))
}

/// The paging sentence of a list answer.
fn more(answer: &Value, out: &mut String) {
    if answer["hasNextPage"].as_bool() == Some(true) {
        let _ = write!(
            out,
            "\nMore follow: call again with after = {}.",
            answer["endCursor"]
        );
    }
}

fn agents(answer: &Value) -> String {
    let list = answer["agents"].as_array().cloned().unwrap_or_default();
    let mut out = format!(
        "{} agents match; {} shown.",
        answer["totalCount"],
        list.len()
    );
    for (n, agent) in list.iter().enumerate() {
        let _ = write!(
            out,
            "\n{}. {} ({}) reputation {}/100",
            n + 1,
            or(&agent["name"], "unnamed"),
            or(&agent["id"], "?"),
            number(&agent["reputation"]["score"])
        );
        if agent["x402"].as_bool() == Some(true) {
            out.push_str(", accepts x402");
        }
        if let Some(reachable) = agent["liveness"]["reachable"].as_bool() {
            out.push_str(if reachable {
                ", reachable"
            } else {
                ", unreachable"
            });
        }
        let skills: Vec<&str> = agent["skills"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|skill| skill["name"].as_str().or(skill["id"].as_str()))
            .collect();
        if !skills.is_empty() {
            let _ = write!(out, "; skills: {}", skills.join(", "));
        }
    }
    more(answer, &mut out);
    out
}

fn agent(answer: &Value) -> String {
    let mut out = format!(
        "{} ({}), registered as a {} agent on chain {}, owned by {}{}.",
        or(&answer["name"], "Unnamed agent"),
        or(&answer["id"], "?"),
        or(&answer["source"], "?"),
        answer["chainId"],
        or(&answer["owner"], "?"),
        if answer["active"].as_bool() == Some(false) {
            ", inactive"
        } else {
            ""
        }
    );
    if let Some(description) = answer["description"].as_str() {
        let _ = write!(out, "\n{description}");
    }
    let skills: Vec<String> = answer["skills"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|skill| format!("{} ({})", or(&skill["name"], "?"), or(&skill["id"], "?")))
        .collect();
    if !skills.is_empty() {
        let _ = write!(out, "\nSkills: {}.", skills.join(", "));
    }
    if let Some(card) = answer["card"].as_object() {
        let _ = write!(
            out,
            "\nAgent Card at {}: {}, signature {}.",
            or(&card["url"], "?"),
            or(&card["status"], "?"),
            or(&card["signature"], "unknown")
        );
    }
    let _ = write!(
        out,
        "\n{} x402 payment. Reputation {}/100 from {} counted payments by {} payers and {} feedback.",
        if answer["x402"].as_bool() == Some(true) {
            "Accepts"
        } else {
            "Declares no"
        },
        number(&answer["reputation"]["score"]),
        answer["reputation"]["paymentCount"],
        answer["reputation"]["uniquePayers"],
        answer["reputation"]["feedbackCount"],
    );
    if let Some(liveness) = answer["liveness"].as_object() {
        let _ = write!(
            out,
            "\nEndpoints: {}, 7-day uptime {}.",
            or(&liveness["status"], "?").to_lowercase(),
            percent(&liveness["uptime7d"]).unwrap_or_else(|| "unknown".into())
        );
    }
    out
}

fn reputation(answer: &Value) -> String {
    let reputation = &answer["reputation"];
    let mut out = format!(
        "{} ({}) has a reputation of {}/100 as of block {}.",
        or(&answer["name"], "The agent"),
        or(&answer["id"], "?"),
        number(&reputation["score"]),
        reputation["asOfBlock"]
    );
    for component in [
        "payments",
        "trust",
        "feedback",
        "validations",
        "ratings",
        "availability",
    ] {
        let weight = reputation["weights"][component].as_f64().unwrap_or(0.0);
        let score = &reputation["components"][component];
        if weight > 0.0 || !score.is_null() {
            let _ = write!(
                out,
                "\n- {component}: {} (weight {:.2})",
                if score.is_null() {
                    "no data".into()
                } else {
                    format!("{}/100", number(score))
                },
                weight
            );
        }
    }
    let _ = write!(
        out,
        "\nPayments: {} counted from {} distinct payers, {} left out (self-payments, owner, \
         operators, wallet, dust or unknown tokens).",
        reputation["paymentCount"], reputation["uniquePayers"], reputation["excludedPayments"]
    );
    if let Some(evidence) = reputation["feedbackEvidence"].as_object() {
        let _ = write!(
            out,
            "\nFeedback: {} unrevoked; {} clients had paid, {} proved payment elsewhere, {} had \
             not paid ({} of them in a burst).",
            reputation["feedbackCount"],
            evidence["paidClients"],
            evidence["provenClients"],
            evidence["unpaidClients"],
            evidence["burstClients"]
        );
    }
    out
}

/// The first line of an agent's list: how many `what` the agent in all, how many shown.
fn headline(answer: &Value, what: &str, shown: usize) -> String {
    format!(
        "{} {what} {} in all; {shown} shown, newest first.",
        answer["totalCount"],
        or(&answer["name"], or(&answer["id"], "the agent")),
    )
}

fn payments(answer: &Value) -> String {
    let list = answer["payments"].as_array().cloned().unwrap_or_default();
    let mut out = headline(answer, "payments credited to", list.len());
    for payment in &list {
        let _ = write!(
            out,
            "\n- {} paid {} of token {} at block {}{}: {}",
            or(&payment["payer"], "?"),
            or(&payment["amount"], "?"),
            or(&payment["token"], "?"),
            payment["blockNumber"],
            if payment["x402"].as_bool() == Some(true) {
                " (x402)"
            } else {
                ""
            },
            if payment["counts"].as_bool() == Some(true) {
                "counts".to_owned()
            } else {
                format!("left out ({})", or(&payment["excludedBecause"], "?"))
            }
        );
    }
    more(answer, &mut out);
    out
}

fn feedback(answer: &Value) -> String {
    let list = answer["feedback"].as_array().cloned().unwrap_or_default();
    let mut out = headline(answer, "feedback given to", list.len());
    for entry in &list {
        let _ = write!(
            out,
            "\n- {} gave {} ({} decimals), tags {:?}/{:?}, at block {}{}",
            or(&entry["client"], "?"),
            or(&entry["value"], "?"),
            entry["valueDecimals"],
            or(&entry["tag1"], ""),
            or(&entry["tag2"], ""),
            entry["blockNumber"],
            if entry["revoked"].as_bool() == Some(true) {
                ", revoked"
            } else {
                ""
            }
        );
    }
    more(answer, &mut out);
    out
}

fn network(answer: &Value) -> String {
    let mut out = String::from("Indexed chains:");
    let totals = answer["totals"].as_array().cloned().unwrap_or_default();
    for chain in answer["indexerStatus"].as_array().into_iter().flatten() {
        let _ = write!(
            out,
            "\n- {} ({}): indexed to block {} of head {} (lag {})",
            or(&chain["name"], "?"),
            chain["chainId"],
            chain["indexedBlock"],
            chain["headBlock"],
            chain["lag"]
        );
        if let Some(total) = totals.iter().find(|t| t["chainId"] == chain["chainId"]) {
            let _ = write!(
                out,
                "; {} agents ({} ERC-8004, {} factory, {} registry), {} payments, {} feedback, \
                 {} validation requests",
                total["agents"],
                total["erc8004Agents"],
                total["factoryAgents"],
                total["registryAgents"],
                total["payments"],
                total["feedback"],
                total["validationRequests"]
            );
        }
    }
    out
}
