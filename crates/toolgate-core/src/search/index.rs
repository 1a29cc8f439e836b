//! The index: BM25F over the fields of each tool's definition.
//!
//! A term's weight in a tool is `idf(t) * tf / (k1 + tf)`, with `tf` the field-weighted,
//! length-normalised term frequency summed over the fields (BM25F, Robertson and Zaragoza,
//! "The Probabilistic Relevance Framework: BM25 and Beyond", 2009, section 3.5):
//! `tf = Σ_f weight_f * tf_f / (1 - b_f + b_f * len_f / avglen_f)`, and
//! `idf(t) = ln(1 + (N - n_t + 0.5) / (n_t + 0.5))`. The per-tool `tf` of every term is
//! computed once, when the index is built, so a query is one pass over the postings of its
//! terms.
//!
//! A request that asks for several things ("find a restaurant, then the weather there") is
//! also scored clause by clause (clauses end at `.`, `?`, `!`, `;` or a line break): a tool's
//! score is the best of its whole-request score and, for each clause, its whole-request score
//! plus its clause score, each normalised by the best score of that pass. A tool that answers
//! one clause well then ranks beside the tools of the other clauses instead of behind them.

use super::tokenize::terms;
use super::{Field, SearchOptions};
use std::collections::HashMap;

/// One tool's text, field by field.
#[derive(Debug, Clone, Default)]
pub(crate) struct Document {
    pub fields: [String; Field::COUNT],
}

/// The inverted index.
#[derive(Debug)]
pub(crate) struct Index {
    terms: HashMap<String, u32>,
    /// Per term: (document, weighted tf), by document.
    postings: Vec<Vec<(u32, f32)>>,
    /// Per document: (term, weighted tf).
    forward: Vec<Vec<(u32, f32)>>,
    idf: Vec<f32>,
    /// Lower-cased tool names to their documents.
    names: HashMap<String, Vec<u32>>,
    /// Per term: associated terms and their weights.
    associates: Vec<Vec<(u32, f32)>>,
    options: SearchOptions,
    documents: usize,
}

impl Index {
    pub fn build(documents: &[Document], options: &SearchOptions) -> Index {
        let n = documents.len();
        let tokenized: Vec<[Vec<String>; Field::COUNT]> = documents
            .iter()
            .map(|d| {
                std::array::from_fn(|f| {
                    let mut out = Vec::new();
                    terms(&d.fields[f], |t| out.push(t));
                    out
                })
            })
            .collect();
        let mut average = [0f32; Field::COUNT];
        for doc in &tokenized {
            for (f, words) in doc.iter().enumerate() {
                average[f] += words.len() as f32;
            }
        }
        for a in &mut average {
            *a = (*a / n.max(1) as f32).max(1.0);
        }
        let mut terms_map: HashMap<String, u32> = HashMap::new();
        let mut postings: Vec<Vec<(u32, f32)>> = Vec::new();
        let mut forward = Vec::with_capacity(n);
        for (d, doc) in tokenized.into_iter().enumerate() {
            let mut tf: HashMap<u32, f32> = HashMap::new();
            for (f, words) in doc.into_iter().enumerate() {
                let weight = options.weights[f];
                if weight == 0.0 {
                    continue;
                }
                let b = options.b[f];
                let norm = 1.0 - b + b * words.len() as f32 / average[f];
                for w in words {
                    let next = terms_map.len() as u32;
                    let id = *terms_map.entry(w).or_insert(next);
                    if id as usize == postings.len() {
                        postings.push(Vec::new());
                    }
                    *tf.entry(id).or_default() += weight / norm;
                }
            }
            let mut row: Vec<(u32, f32)> = tf.into_iter().collect();
            row.sort_unstable_by_key(|e| e.0);
            for &(id, w) in &row {
                postings[id as usize].push((d as u32, w));
            }
            forward.push(row);
        }
        let idf = postings
            .iter()
            .map(|p| {
                let df = p.len() as f32;
                (1.0 + (n as f32 - df + 0.5) / (df + 0.5)).ln()
            })
            .collect();
        let mut names: HashMap<String, Vec<u32>> = HashMap::new();
        for (d, doc) in documents.iter().enumerate() {
            names
                .entry(doc.fields[Field::Name as usize].to_lowercase())
                .or_default()
                .push(d as u32);
        }
        let associates = associates(&forward, postings.len(), options);
        Index {
            associates,
            terms: terms_map,
            postings,
            forward,
            idf,
            names,
            options: options.clone(),
            documents: n,
        }
    }

    /// The known terms of `text` with their query weights.
    fn query_terms(&self, text: &str) -> Vec<(u32, f32)> {
        let mut seen: Vec<(u32, f32)> = Vec::new();
        terms(text, |t| {
            if let Some(id) = self.terms.get(&t) {
                match seen.iter_mut().find(|e| e.0 == *id) {
                    Some(e) => e.1 += 1.0,
                    None => seen.push((*id, 1.0)),
                }
            }
        });
        let (_, _, lambda) = self.options.associate;
        if lambda > 0.0 {
            let direct = seen.len();
            for i in 0..direct {
                for &(u, p) in &self.associates[seen[i].0 as usize] {
                    if seen[..direct].iter().any(|e| e.0 == u) {
                        continue;
                    }
                    match seen[direct..].iter_mut().find(|e| e.0 == u) {
                        Some(e) => e.1 = e.1.max(-lambda * p),
                        None => seen.push((u, -lambda * p)),
                    }
                }
            }
        }
        let k3 = self.options.query_k3;
        for e in &mut seen {
            e.1 = if e.1 < 0.0 {
                -e.1
            } else if k3 > 0.0 {
                (k3 + 1.0) * e.1 / (k3 + e.1)
            } else {
                1.0
            };
        }
        seen
    }

    /// Adds each document's score for `query` (terms and weights) into `scores`.
    fn add_scores(&self, query: &[(u32, f32)], scores: &mut [f32]) {
        let k1 = self.options.k1;
        for &(id, weight) in query {
            let idf = self.idf[id as usize] * weight;
            for &(doc, tf) in &self.postings[id as usize] {
                scores[doc as usize] += idf * tf / (k1 + tf);
            }
        }
    }

    fn best(scores: &[f32], visible: &dyn Fn(usize) -> bool) -> f32 {
        scores
            .iter()
            .enumerate()
            .filter(|(d, s)| **s > 0.0 && visible(*d))
            .map(|(_, s)| *s)
            .fold(0.0, f32::max)
    }

    /// Adds each document's score for the terms of `text` into `scores` (which has one slot
    /// per document); returns the best score added, 0 when no term is known.
    fn score_into(&self, text: &str, scores: &mut [f32], visible: &dyn Fn(usize) -> bool) -> f32 {
        let query = self.query_terms(text);
        self.add_scores(&query, scores);
        Self::best(scores, visible)
    }

    /// RM3-style expansion terms from the best `k` documents of `scores`.
    fn feedback_terms(
        &self,
        query: &[(u32, f32)],
        scores: &[f32],
        visible: &dyn Fn(usize) -> bool,
    ) -> Vec<(u32, f32)> {
        let (k, n, _) = self.options.feedback;
        let mut top: Vec<(usize, f32)> = scores
            .iter()
            .enumerate()
            .filter(|(d, s)| **s > 0.0 && visible(*d))
            .map(|(d, s)| (d, *s))
            .collect();
        top.sort_by(|a, b| b.1.total_cmp(&a.1));
        top.truncate(k);
        let mut weights: HashMap<u32, f32> = HashMap::new();
        for &(d, s) in &top {
            let row = &self.forward[d];
            let total: f32 = row.iter().map(|e| e.1).sum();
            for &(t, w) in row {
                *weights.entry(t).or_default() += s * w / total * self.idf[t as usize];
            }
        }
        let mut out: Vec<(u32, f32)> = weights
            .into_iter()
            .filter(|(t, _)| !query.iter().any(|q| q.0 == *t))
            .collect();
        out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        out.truncate(n);
        let max = out.first().map_or(1.0, |e| e.1);
        for e in &mut out {
            e.1 /= max;
        }
        out
    }

    /// The documents `visible` lets through that match `query`, best first, at most
    /// `limit`, with their scores (1.0 is the best whole-request match).
    pub fn search(
        &self,
        query: &str,
        limit: usize,
        visible: &dyn Fn(usize) -> bool,
    ) -> Vec<(usize, f32)> {
        let mut full = vec![0f32; self.documents];
        let query_terms = self.query_terms(query);
        self.add_scores(&query_terms, &mut full);
        let mut best = Self::best(&full, visible);
        if best <= 0.0 {
            return Vec::new();
        }
        let (_, _, fb_weight) = self.options.feedback;
        if fb_weight > 0.0 {
            let expansion = self.feedback_terms(&query_terms, &full, visible);
            let mut extra = vec![0f32; self.documents];
            self.add_scores(&expansion, &mut extra);
            let top = Self::best(&extra, visible);
            if top > 0.0 {
                for (f, e) in full.iter_mut().zip(&extra) {
                    *f += fb_weight * best * e / top;
                }
                best = Self::best(&full, visible);
            }
        }
        let mut total: Vec<f32> = full.iter().map(|s| s / best).collect();
        if self.options.mention > 0.0 {
            for run in
                query.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.' || c == '-'))
            {
                let run = run.trim_matches(|c: char| c == '.' || c == '-');
                let identifier =
                    run.contains(['_', '.']) || run.chars().skip(1).any(char::is_uppercase);
                if run.len() < 3 || !identifier {
                    continue;
                }
                if let Some(docs) = self.names.get(&run.to_lowercase()) {
                    for &d in docs {
                        total[d as usize] += self.options.mention;
                    }
                }
            }
        }
        let mut clauses: Vec<&str> = clauses(query).collect();
        if self.options.split_and {
            clauses = clauses
                .into_iter()
                .flat_map(|c| {
                    let mut parts: Vec<&str> = Vec::new();
                    let mut rest = c;
                    for sep in [", and ", " and then ", ", then ", " and also ", ", also "] {
                        let _ = sep;
                    }
                    while let Some(i) = [
                        ", and ",
                        " and then ",
                        ", then ",
                        " and also ",
                        ", also ",
                        " and ",
                    ]
                    .iter()
                    .filter_map(|sep| rest.find(sep).map(|i| (i, sep.len())))
                    .min()
                    .map(|x| x)
                    {
                        let (left, right) = (&rest[..i.0], &rest[i.0 + i.1..]);
                        let n = |t: &str| {
                            let mut n = 0;
                            terms(t, |_| n += 1);
                            n
                        };
                        if n(left) >= 3 && n(right) >= 3 {
                            parts.push(left);
                            rest = right;
                        } else {
                            break;
                        }
                    }
                    parts.push(rest);
                    parts
                })
                .collect();
        }
        let mut winners: Vec<(usize, f32)> = Vec::new();
        if clauses.len() > 1 {
            let mut part = vec![0f32; self.documents];
            let mut tops: Vec<(f32, usize)> = Vec::new();
            for clause in clauses {
                part.iter_mut().for_each(|s| *s = 0.0);
                let top = self.score_into(clause, &mut part, visible);
                if top <= 0.0 {
                    continue;
                }
                let mut winner = (usize::MAX, 0f32);
                for (d, s) in part.iter().enumerate() {
                    if *s > 0.0 {
                        total[d] = total[d].max(full[d] / best + s / top);
                        if visible(d) && *s > winner.1 {
                            winner = (d, *s);
                        }
                    }
                }
                tops.push((top, winner.0));
            }
            if self.options.interleave > 0.0 {
                let max = tops.iter().map(|t| t.0).fold(0.0, f32::max);
                for (top, d) in tops {
                    if top >= self.options.interleave * max
                        && d != usize::MAX
                        && !winners.iter().any(|w| w.0 == d)
                    {
                        winners.push((d, total[d]));
                    }
                }
            }
        }
        let mut ranked: Vec<(usize, f32)> = total
            .into_iter()
            .enumerate()
            .filter(|(d, s)| *s > 0.0 && visible(*d))
            .collect();
        let order = |a: &(usize, f32), b: &(usize, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
        if !winners.is_empty() {
            winners.sort_by(order);
            winners.truncate(limit);
            ranked.retain(|r| !winners.iter().any(|w| w.0 == r.0));
        }
        let limit = limit.min(ranked.len() + winners.len());
        if limit == 0 {
            return Vec::new();
        }
        let rest = limit - winners.len();
        if rest > 0 && !ranked.is_empty() {
            let rest = rest.min(ranked.len());
            ranked.select_nth_unstable_by(rest - 1, order);
            ranked.truncate(rest);
            ranked.sort_by(order);
        } else {
            ranked.clear();
        }
        winners.extend(ranked);
        winners
    }
}

/// For each term, the terms most often in the same documents: `P(u|t) = df(t,u)/df(t)` of
/// at least the option's share, `u` in at most 5% of documents, the best few.
fn associates(
    forward: &[Vec<(u32, f32)>],
    terms: usize,
    options: &SearchOptions,
) -> Vec<Vec<(u32, f32)>> {
    let (least, most, lambda) = options.associate;
    let mut out = vec![Vec::new(); terms];
    if lambda <= 0.0 {
        return out;
    }
    let mut df = vec![0u32; terms];
    for row in forward {
        for &(t, _) in row {
            df[t as usize] += 1;
        }
    }
    let rare = (forward.len() as f32 * 0.05).max(2.0) as u32;
    let mut co: Vec<HashMap<u32, u32>> = vec![HashMap::new(); terms];
    for row in forward {
        for &(t, _) in row {
            if df[t as usize] < 2 {
                continue;
            }
            for &(u, _) in row {
                if u != t && df[u as usize] <= rare {
                    *co[t as usize].entry(u).or_default() += 1;
                }
            }
        }
    }
    for (t, map) in co.into_iter().enumerate() {
        let n = df[t] as f32;
        let mut c: Vec<(u32, f32)> = map
            .into_iter()
            .map(|(u, c)| (u, c as f32 / n))
            .filter(|e| e.1 >= least)
            .collect();
        c.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        c.truncate(most);
        out[t] = c;
    }
    out
}

/// The clauses of a request that has words in more than one: pieces ending at `.`, `?`,
/// `!` or `;` followed by white space, or at a line break, with at least two words.
fn clauses(query: &str) -> impl Iterator<Item = &str> {
    let bytes = query.as_bytes();
    let mut cuts = vec![0usize];
    for (i, b) in bytes.iter().enumerate() {
        let ends = match b {
            b'\n' | b'\r' => true,
            b'.' | b'?' | b'!' | b';' => bytes.get(i + 1).is_some_and(u8::is_ascii_whitespace),
            _ => false,
        };
        if ends {
            cuts.push(i + 1);
        }
    }
    cuts.push(query.len());
    cuts.dedup();
    let pieces: Vec<&str> = cuts.windows(2).map(|w| &query[w[0]..w[1]]).collect();
    pieces.into_iter().filter(|p| {
        let mut n = 0;
        terms(p, |_| n += 1);
        n >= 2
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clauses_split_at_sentence_ends_and_lines() {
        let c: Vec<&str> =
            clauses("Find a Thai restaurant. Then get the weather there!\nAnd x").collect();
        assert_eq!(
            c,
            ["Find a Thai restaurant.", " Then get the weather there!"]
        );
        assert_eq!(clauses("version 1.2 of numpy").count(), 1);
    }
}
