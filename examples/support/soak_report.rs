//! The soak benchmark's report: a Markdown table of every sample, the figures the issue asks
//! for as ratios measured in the run, and an SVG plot of memory, lag and requests per block
//! over the chain's hours.

use crate::soak_chain::ChainCounts;
use crate::soak_settings::{HOUR_BLOCKS, Settings};
use crate::soak_watch::Sample;
use std::fmt::Write as _;

/// The report's Markdown.
pub(crate) fn markdown(
    settings: &Settings,
    samples: &[Sample],
    counts: ChainCounts,
    wall: f64,
) -> String {
    let mut out = String::new();
    let hours = counts.blocks as f64 / HOUR_BLOCKS as f64;
    let _ = writeln!(
        out,
        "{} blocks ({hours:.1} Base hours) made in {wall:.0} s, {:.1}x faster than Base (paced at {} ms a block, {:.0}x; a block whose transactions took longer was not made up for); {} agents at the start, {} registered during the run, {} feedback, {} reorgs of 3 blocks. Provider: {} ms a request, {} requests/s, 1% faults, Alchemy's caps. API side load: {} requests/s (lookup by id, search, reputation page in turn).\n",
        counts.blocks,
        hours * 3_600.0 / wall.max(0.001),
        settings.block_wall.as_millis(),
        settings.compression(),
        settings.agents,
        counts.registered,
        counts.feedback,
        counts.reorgs,
        settings.latency.as_millis(),
        settings.rps,
        settings.api_rps,
    );
    let _ = writeln!(
        out,
        "| block | chain h | RSS MiB | heap MiB | open files | threads | db MiB | WAL MiB | lag | requests / block | API p99 ms | API answers | API errors |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    );
    for s in samples {
        let _ = writeln!(
            out,
            "| {} | {:.2} | {:.1} | {:.1} | {} | {} | {:.1} | {:.1} | {} | {:.2} | {:.1} | {} | {} |",
            s.blocks,
            s.chain_hours,
            s.rss_mib,
            s.anon_mib,
            s.open_files,
            s.threads,
            s.db_mib,
            s.wal_mib,
            match &s.lag {
                Ok(lag) => lag.to_string(),
                Err(unread) => unread.clone(),
            },
            s.requests_per_block,
            s.api_p99_ms,
            s.api_answers,
            match s.api_errors {
                0 => "0".to_string(),
                n => format!("{n} ({})", s.api_error_kinds),
            },
        );
    }
    if let (Some(first), Some(last)) = (after_first_hour(samples), samples.last()) {
        let growth = last.db_mib - samples[0].db_mib;
        let _ = writeln!(
            out,
            "\nResident memory at the end {:.1} MiB against {:.1} MiB after the first hour of chain time: {:.2}x (target: within 1.10x). Heap {:.1} against {:.1} MiB ({:.2}x). Database growth {:.1} MiB over {hours:.1} h, {:.0} MiB a day at this rate. Lag at most {} blocks; requests per block {:.2} on average.",
            last.rss_mib,
            first.rss_mib,
            last.rss_mib / first.rss_mib.max(0.1),
            last.anon_mib,
            first.anon_mib,
            last.anon_mib / first.anon_mib.max(0.1),
            growth,
            growth * 24.0 / hours.max(0.01),
            samples
                .iter()
                .filter_map(|s| s.lag.as_ref().ok())
                .max()
                .unwrap_or(&0),
            samples.iter().map(|s| s.requests_per_block).sum::<f64>() / samples.len().max(1) as f64,
        );
        // One sample catches whatever the writer has in hand at that moment; the median of an
        // hour's samples is the steadier reading of the level.
        let (early, late) = (hour_median(samples, 0.0), hour_median(samples, hours - 1.0));
        let _ = writeln!(
            out,
            "\nMedian resident memory of the first chain hour's samples {early:.1} MiB, of the last hour's {late:.1} MiB: {:.2}x.",
            late / early.max(0.1),
        );
    }
    out
}

/// The median resident memory of the samples in the chain hour after `start` (hours).
fn hour_median(samples: &[Sample], start: f64) -> f64 {
    let mut rss: Vec<f64> = samples
        .iter()
        .filter(|s| s.chain_hours > start && s.chain_hours <= start + 1.0 + 1e-9)
        .map(|s| s.rss_mib)
        .collect();
    rss.sort_by(f64::total_cmp);
    match rss.len() {
        0 => 0.0,
        n if n % 2 == 1 => rss[n / 2],
        n => (rss[n / 2 - 1] + rss[n / 2]) / 2.0,
    }
}

/// The first sample at or past an hour of chain time (the last one of a shorter run).
fn after_first_hour(samples: &[Sample]) -> Option<&Sample> {
    samples
        .iter()
        .find(|s| s.chain_hours >= 1.0)
        .or(samples.last())
}

/// Three stacked panels over the chain's hours: resident memory and heap (MiB), lag (blocks),
/// provider requests per block.
pub(crate) fn svg(samples: &[Sample]) -> String {
    let (width, panel, margin) = (720.0, 150.0, 50.0);
    let height = 3.0 * (panel + margin) + margin;
    let last_hour = samples.last().map_or(1.0, |s| s.chain_hours.max(0.01));
    let x = |h: f64| margin + h / last_hour * (width - 2.0 * margin);
    let mut out = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" font-family=\"sans-serif\" font-size=\"11\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
    );
    type Series<'a> = (&'a str, &'a str, fn(&Sample) -> f64);
    let panels: [(&str, Vec<Series>); 3] = [
        (
            "memory (MiB): resident, heap",
            vec![
                ("resident", "#1f77b4", |s| s.rss_mib),
                ("heap", "#2ca02c", |s| s.anon_mib),
            ],
        ),
        (
            "lag (blocks)",
            vec![("lag", "#d62728", |s| {
                s.lag.as_ref().map_or(0.0, |l| *l as f64)
            })],
        ),
        (
            "provider requests per block",
            vec![("requests", "#9467bd", |s| s.requests_per_block)],
        ),
    ];
    for (index, (title, series)) in panels.iter().enumerate() {
        let top = margin + index as f64 * (panel + margin);
        let max = series
            .iter()
            .flat_map(|(_, _, value)| samples.iter().map(value))
            .fold(0.0_f64, f64::max)
            .max(1.0)
            * 1.1;
        let y = |v: f64| top + panel - v / max * panel;
        let _ = writeln!(
            out,
            "<text x=\"{margin}\" y=\"{}\">{title} — max axis {max:.1}</text>\n<rect x=\"{margin}\" y=\"{top}\" width=\"{}\" height=\"{panel}\" fill=\"none\" stroke=\"#999\"/>",
            top - 6.0,
            width - 2.0 * margin
        );
        for (_, colour, value) in series {
            let points: Vec<String> = samples
                .iter()
                .map(|s| format!("{:.1},{:.1}", x(s.chain_hours), y(value(s))))
                .collect();
            let _ = writeln!(
                out,
                "<polyline fill=\"none\" stroke=\"{colour}\" stroke-width=\"1.5\" points=\"{}\"/>",
                points.join(" ")
            );
        }
        let _ = writeln!(
            out,
            "<text x=\"{margin}\" y=\"{}\">0 h</text><text x=\"{}\" y=\"{}\" text-anchor=\"end\">{last_hour:.1} h of chain time</text>",
            top + panel + 14.0,
            width - margin,
            top + panel + 14.0
        );
    }
    out.push_str("</svg>\n");
    out
}
