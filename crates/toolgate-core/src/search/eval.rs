//! Retrieval quality: how well a [`SearchIndex`] finds the tools that answer a set of
//! requests.
//!
//! For each request with its relevant tools: hit@k is 1 when one of the first k results is
//! relevant, all@k when every relevant tool is among them, and the reciprocal rank is 1/r
//! for the first relevant result at rank r ≤ 10 (0 otherwise). [`Scores`] holds the means.

use super::SearchIndex;
use serde::{Deserialize, Serialize};

/// One request and the tools (by name) that answer it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Query {
    /// The request as the user wrote it.
    pub query: String,
    /// The names of the tools that answer it.
    pub relevant: Vec<String>,
}

/// Mean retrieval figures over a set of requests (each between 0 and 1).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Scores {
    /// Requests scored.
    pub queries: usize,
    /// A relevant tool first.
    #[serde(rename = "hit@1")]
    pub hit_1: f64,
    /// A relevant tool in the first 5.
    #[serde(rename = "hit@5")]
    pub hit_5: f64,
    /// A relevant tool in the first 10.
    #[serde(rename = "hit@10")]
    pub hit_10: f64,
    /// Every relevant tool in the first 5.
    #[serde(rename = "all@5")]
    pub all_5: f64,
    /// Every relevant tool in the first 10.
    #[serde(rename = "all@10")]
    pub all_10: f64,
    /// Mean reciprocal rank of the first relevant tool, within the first 10.
    #[serde(rename = "mrr@10")]
    pub mrr_10: f64,
}

/// Scores `index` on `queries`, searching as a caller who sees every tool.
pub fn evaluate(index: &SearchIndex, queries: &[Query]) -> Scores {
    let mut s = Scores {
        queries: queries.len(),
        hit_1: 0.0,
        hit_5: 0.0,
        hit_10: 0.0,
        all_5: 0.0,
        all_10: 0.0,
        mrr_10: 0.0,
    };
    for q in queries {
        let hits = index.search(&q.query, 10, u64::MAX);
        let names: Vec<&str> = hits.iter().map(|h| &*h.name).collect();
        let relevant = |n: &&str| q.relevant.iter().any(|r| r == n);
        let within = |k: usize| &names[..k.min(names.len())];
        let any = |k: usize| f64::from(u8::from(within(k).iter().any(relevant)));
        let all = |k: usize| {
            f64::from(u8::from(
                !q.relevant.is_empty()
                    && q.relevant.iter().all(|r| within(k).contains(&r.as_str())),
            ))
        };
        s.hit_1 += any(1);
        s.hit_5 += any(5);
        s.hit_10 += any(10);
        s.all_5 += all(5);
        s.all_10 += all(10);
        if let Some(rank) = names.iter().position(relevant) {
            s.mrr_10 += 1.0 / (rank + 1) as f64;
        }
    }
    let n = queries.len().max(1) as f64;
    for v in [
        &mut s.hit_1,
        &mut s.hit_5,
        &mut s.hit_10,
        &mut s.all_5,
        &mut s.all_10,
        &mut s.mrr_10,
    ] {
        *v = (*v / n * 1000.0).round() / 1000.0;
    }
    s
}
