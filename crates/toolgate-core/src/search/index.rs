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
//!
//! A tool whose name the request writes as an identifier (`get_current_time`, `getWeather`,
//! `weather.get`: the whole name, with a `_`, a `.` or an inner capital) gets
//! [`SearchOptions::name_mention`] added to that score.

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
    idf: Vec<f32>,
    k1: f32,
    /// Lower-cased names written as identifiers, to their documents.
    identifiers: HashMap<String, Vec<u32>>,
    name_mention: f32,
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
            for (id, w) in tf {
                postings[id as usize].push((d as u32, w));
            }
        }
        let idf = postings
            .iter()
            .map(|p| {
                let df = p.len() as f32;
                (1.0 + (n as f32 - df + 0.5) / (df + 0.5)).ln()
            })
            .collect();
        let mut identifiers: HashMap<String, Vec<u32>> = HashMap::new();
        for (d, doc) in documents.iter().enumerate() {
            let name = &doc.fields[Field::Name as usize];
            if is_identifier(name) {
                identifiers
                    .entry(name.to_lowercase())
                    .or_default()
                    .push(d as u32);
            }
        }
        Index {
            terms: terms_map,
            postings,
            idf,
            k1: options.k1,
            identifiers,
            name_mention: options.name_mention,
            documents: n,
        }
    }

    /// Adds each document's score for the terms of `text` into `scores` (which has one slot
    /// per document); returns the best score added, 0 when no term is known.
    fn score_into(&self, text: &str, scores: &mut [f32], visible: &dyn Fn(usize) -> bool) -> f32 {
        let mut seen: Vec<u32> = Vec::new();
        terms(text, |t| {
            if let Some(id) = self.terms.get(&t) {
                if !seen.contains(id) {
                    seen.push(*id);
                }
            }
        });
        for id in seen {
            let idf = self.idf[id as usize];
            for &(doc, tf) in &self.postings[id as usize] {
                scores[doc as usize] += idf * tf / (self.k1 + tf);
            }
        }
        scores
            .iter()
            .enumerate()
            .filter(|(d, s)| **s > 0.0 && visible(*d))
            .map(|(_, s)| *s)
            .fold(0.0, f32::max)
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
        let best = self.score_into(query, &mut full, visible);
        if best <= 0.0 {
            return Vec::new();
        }
        let mut total: Vec<f32> = full.iter().map(|s| s / best).collect();
        let clauses: Vec<&str> = clauses(query).collect();
        if clauses.len() > 1 {
            let mut part = vec![0f32; self.documents];
            for clause in clauses {
                part.iter_mut().for_each(|s| *s = 0.0);
                let top = self.score_into(clause, &mut part, visible);
                if top <= 0.0 {
                    continue;
                }
                for (d, s) in part.iter().enumerate() {
                    if *s > 0.0 {
                        total[d] = total[d].max(full[d] / best + s / top);
                    }
                }
            }
        }
        if self.name_mention > 0.0 && !self.identifiers.is_empty() {
            for run in identifier_runs(query) {
                if let Some(docs) = self.identifiers.get(&run.to_lowercase()) {
                    for &d in docs {
                        total[d as usize] += self.name_mention;
                    }
                }
            }
        }
        let mut ranked: Vec<(usize, f32)> = total
            .into_iter()
            .enumerate()
            .filter(|(d, s)| *s > 0.0 && visible(*d))
            .collect();
        let limit = limit.min(ranked.len());
        if limit == 0 {
            return Vec::new();
        }
        ranked.select_nth_unstable_by(limit - 1, |a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        ranked.truncate(limit);
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        ranked
    }
}

/// Whether a name reads as an identifier rather than a plain word or a number: it starts with
/// a letter or `_`, and has a `_` or a `.`, or a capital after its first character.
fn is_identifier(name: &str) -> bool {
    name.starts_with(|c: char| c.is_alphabetic() || c == '_')
        && (name.contains(['_', '.']) || name.chars().skip(1).any(char::is_uppercase))
}

/// The identifiers a request writes: runs of letters, digits, `_`, `.` and `-` (without a
/// leading or trailing `.` or `-`, as a sentence's full stop) that read as identifiers.
fn identifier_runs(query: &str) -> impl Iterator<Item = &str> {
    query
        .split(|c: char| !(c.is_alphanumeric() || matches!(c, '_' | '.' | '-')))
        .map(|run| run.trim_matches(['.', '-']))
        .filter(|run| run.len() >= 3 && is_identifier(run))
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

    #[test]
    fn identifiers_are_names_with_underscores_dots_or_inner_capitals() {
        let runs: Vec<&str> = identifier_runs(
            "Use 'get_current_time', then getWeather and weather.get. Take the derivative; x.",
        )
        .collect();
        assert_eq!(runs, ["get_current_time", "getWeather", "weather.get"]);
        assert!(identifier_runs("Find the derivative of x^2 at 3.5.")
            .next()
            .is_none());
    }

    fn document(name: &str, description: &str) -> Document {
        let mut d = Document::default();
        d.fields[Field::Name as usize] = name.into();
        d.fields[Field::Description as usize] = description.into();
        d
    }

    #[test]
    fn a_tool_the_request_names_ranks_first() {
        let documents = [
            document("local_time.get", "Gets the current time in a time zone."),
            document("tz_now", "Reads a clock."),
            document("derivative", "Derivative of a function at a point."),
            document(
                "calculus.derivative",
                "Derivative of a function at a point.",
            ),
        ];
        let every = |_: usize| true;
        let ranked = |options: &SearchOptions, query: &str| -> Vec<usize> {
            Index::build(&documents, options)
                .search(query, 4, &every)
                .into_iter()
                .map(|(d, _)| d)
                .collect()
        };
        let query = "Use 'tz_now' to get the current time in the Asia/Tokyo time zone.";
        let off = SearchOptions {
            name_mention: 0.0,
            ..SearchOptions::default()
        };
        assert_eq!(ranked(&off, query)[0], 0);
        assert_eq!(ranked(&SearchOptions::default(), query)[0], 1);
        // a plain word that is also a name raises nothing: the two derivative tools tie
        // and keep their order
        let derivative = "The derivative of x^2 at 3.";
        assert_eq!(
            ranked(&SearchOptions::default(), derivative),
            ranked(&off, derivative)
        );
    }
}
