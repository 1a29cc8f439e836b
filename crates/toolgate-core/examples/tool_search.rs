//! Tool search figures for BENCHMARKS.md, on BFCL's tool-retrieval set in
//! `tests/data/tool-retrieval`:
//!
//! - `quality`: hit@k, all@k and MRR@10 of the default options on the whole set;
//! - `cv`: cross-validated field weights: a grid of weights tuned on one half of the
//!   requests (even lines, then odd lines) and scored on the other half, so the figures
//!   reported are of requests the weights never saw;
//! - `scale N`: the set replicated to N tools (renamed copies `NAME__cK`), the index build
//!   time and the process's resident memory before and after, and the latency of one search
//!   (limit 5) for each request, median and p95;
//! - `misses`: each request whose relevant tools are not all in the first 5, with their ranks
//!   and the first 5 found.
//!
//! `cargo run --release -p toolgate-core --example tool_search -- quality|cv|scale 10000|misses`

use std::time::Instant;
use toolgate_core::import::{import_definitions, Dialect, ImportOptions};
use toolgate_core::search::eval::{evaluate, Query, Scores};
use toolgate_core::search::{SearchIndex, SearchOptions};
use toolgate_core::ToolSpec;

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/tool-retrieval");

fn load() -> (Vec<ToolSpec>, Vec<Query>) {
    let tools = std::fs::read_to_string(format!("{DATA}/tools.jsonl")).expect("tools.jsonl");
    let specs = import_definitions(&tools, Dialect::Auto, &ImportOptions::default())
        .expect("the tools import")
        .into_iter()
        .map(|i| i.spec)
        .collect();
    let queries = std::fs::read_to_string(format!("{DATA}/queries.jsonl"))
        .expect("queries.jsonl")
        .lines()
        .map(|l| serde_json::from_str(l).expect("a query"))
        .collect();
    (specs, queries)
}

fn index(specs: &[ToolSpec], options: &SearchOptions) -> SearchIndex {
    SearchIndex::build(specs.iter().map(|s| (s, u64::MAX)), options)
}

fn show(label: &str, s: &Scores) {
    println!(
        "{label}: queries {} hit@1 {:.3} hit@5 {:.3} hit@10 {:.3} all@5 {:.3} all@10 {:.3} mrr@10 {:.3}",
        s.queries, s.hit_1, s.hit_5, s.hit_10, s.all_5, s.all_10, s.mrr_10
    );
}

/// The grid of field weights tried: name, description, parameter names, parameter
/// descriptions, enum values (tags and examples are absent from the set and keep theirs).
fn grid() -> Vec<SearchOptions> {
    let mut out = Vec::new();
    for name in [2.0, 3.0, 4.0] {
        for description in [0.7, 1.0, 1.4] {
            for pnames in [0.5, 1.0] {
                for pdesc in [0.3, 0.6, 1.0] {
                    for enums in [0.0, 0.3] {
                        let mut o = SearchOptions::default();
                        o.weights[..5].copy_from_slice(&[name, description, pnames, pdesc, enums]);
                        out.push(o);
                    }
                }
            }
        }
    }
    out
}

/// hit@5 + all@5 + MRR@10: the objective tuned.
fn objective(s: &Scores) -> f64 {
    s.hit_5 + s.all_5 + s.mrr_10
}

fn cv(specs: &[ToolSpec], queries: &[Query]) {
    let halves: [Vec<Query>; 2] = [0, 1].map(|parity| {
        queries
            .iter()
            .enumerate()
            .filter(|(i, _)| i % 2 == parity)
            .map(|(_, q)| q.clone())
            .collect()
    });
    let grid = grid();
    let mut held_out: Vec<Scores> = Vec::new();
    for (tune, test) in [(0, 1), (1, 0)] {
        let best = grid
            .iter()
            .map(|o| (o, evaluate(&index(specs, o), &halves[tune])))
            .max_by(|a, b| objective(&a.1).total_cmp(&objective(&b.1)))
            .expect("a grid");
        println!("tuned on half {tune}: weights {:?}", &best.0.weights[..5]);
        show(&format!("  tuning half {tune}"), &best.1);
        let s = evaluate(&index(specs, best.0), &halves[test]);
        show(&format!("  held-out half {test}"), &s);
        held_out.push(s);
    }
    let mean = |f: fn(&Scores) -> f64| (f(&held_out[0]) + f(&held_out[1])) / 2.0;
    println!(
        "cross-validated (mean of the held-out halves): hit@1 {:.3} hit@5 {:.3} hit@10 {:.3} all@5 {:.3} all@10 {:.3} mrr@10 {:.3}",
        mean(|s| s.hit_1), mean(|s| s.hit_5), mean(|s| s.hit_10),
        mean(|s| s.all_5), mean(|s| s.all_10), mean(|s| s.mrr_10)
    );
    show(
        "defaults on both halves",
        &evaluate(&index(specs, &SearchOptions::default()), queries),
    );
}

/// Resident memory of this process, in KiB (Linux).
fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<u64>().ok())
        .map_or(0, |pages| pages * 4)
}

fn scale(specs: &[ToolSpec], queries: &[Query], n: usize) {
    let mut many: Vec<ToolSpec> = Vec::with_capacity(n);
    'fill: for copy in 0.. {
        for s in specs {
            if many.len() == n {
                break 'fill;
            }
            let mut s = s.clone();
            if copy > 0 {
                s.name = format!("{}__c{copy}", s.name).into();
            }
            many.push(s);
        }
    }
    let before = rss_kib();
    let started = Instant::now();
    let idx = index(&many, &SearchOptions::default());
    let built = started.elapsed();
    let after = rss_kib();
    println!(
        "{} tools: index built in {:.1} ms, resident memory {} KiB more ({} KiB in all)",
        idx.len(),
        built.as_secs_f64() * 1e3,
        after.saturating_sub(before),
        after
    );
    // warm up, then time every request
    for q in queries.iter().take(50) {
        std::hint::black_box(idx.search(&q.query, 5, u64::MAX));
    }
    let mut times: Vec<f64> = queries
        .iter()
        .map(|q| {
            let t = Instant::now();
            std::hint::black_box(idx.search(&q.query, 5, u64::MAX));
            t.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    times.sort_by(f64::total_cmp);
    let at = |p: f64| times[((times.len() - 1) as f64 * p) as usize];
    println!(
        "search (limit 5) over {} requests: median {:.0} µs, p95 {:.0} µs, max {:.0} µs",
        times.len(),
        at(0.5),
        at(0.95),
        times[times.len() - 1]
    );
}

/// The requests whose relevant tools are not all in the first 5, with what came first.
fn misses(specs: &[ToolSpec], queries: &[Query]) {
    let idx = index(specs, &SearchOptions::default());
    for q in queries {
        let hits = idx.search(&q.query, 10, u64::MAX);
        let names: Vec<&str> = hits.iter().map(|h| &*h.name).collect();
        let top5 = &names[..names.len().min(5)];
        if q.relevant.iter().all(|r| top5.contains(&r.as_str())) {
            continue;
        }
        let ranks: Vec<String> = q
            .relevant
            .iter()
            .map(|r| {
                let at = names
                    .iter()
                    .position(|n| n == r)
                    .map_or("-".into(), |p| (p + 1).to_string());
                format!("{r}@{at}")
            })
            .collect();
        println!(
            "Q: {}\n   want {}\n   got {:?}",
            q.query,
            ranks.join(" "),
            top5
        );
    }
}

fn main() {
    let (specs, queries) = load();
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("quality") | None => show(
            "defaults",
            &evaluate(&index(&specs, &SearchOptions::default()), &queries),
        ),
        Some("cv") => cv(&specs, &queries),
        Some("scale") => {
            let n = args.get(1).and_then(|n| n.parse().ok()).unwrap_or(10_000);
            scale(&specs, &queries, n);
        }
        Some("misses") => misses(&specs, &queries),
        Some(other) => {
            eprintln!("unknown mode {other:?}: quality, cv or scale N");
            std::process::exit(2);
        }
    }
}
