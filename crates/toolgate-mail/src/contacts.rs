//! The contacts book: the operator's CSV and vCard files, read once, searched with ranked,
//! case- and accent-insensitive matching on names and aliases.
//!
//! Files:
//! - `.csv`: a header row `name,email,organization,aliases` (in that order; `organization`
//!   and `aliases` may be empty), aliases (nicknames, titles such as `张总`) separated by `;`;
//! - `.vcf` / `.vcard`: vCards (RFC 6350, 2.1 and 3.0 read alike): `FN` (else `N`), the first
//!   `EMAIL`, `ORG`'s first component, `NICKNAME`s as aliases.
//!
//! A row that cannot be used (an empty name, an address that cannot be sent to, a line break
//! or another control character in a name, organization or alias, which could end up in a
//! message) is skipped, not fatal: the book holds the good rows, and
//! [`ContactBook::skipped`] says which rows were left out, where and why (`toolgate check`
//! reports them as problems; `serve` and `call` log them and go on). A file that cannot be
//! read, is too large, or has a wrong header is an error.
//!
//! Ranking of a query against a contact (the best of its name and aliases, both folded: NFKD,
//! combining marks removed, lower case): equal 100, a whole word 85, a prefix 80, a word's
//! prefix 70, contained 50; against its address: equal 90, contained 40. Ties go by name, then
//! id.

use crate::address;
use crate::text::{fold, has_control};
use crate::MailError;
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// A contacts file larger than this many bytes is refused (16 MiB).
pub const MAX_FILE_BYTES: u64 = 16 << 20;
/// At most this many contacts are read, over all files.
pub const MAX_CONTACTS: usize = 100_000;

/// One contact.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Contact {
    /// `contact_` and 16 hex digits of a hash of the address and name: stable across reloads.
    pub id: String,
    /// The display name.
    pub name: String,
    /// The email address.
    pub email: String,
    /// The organization, when known.
    pub organization: Option<String>,
    /// Nicknames and titles.
    pub aliases: Vec<String>,
    /// The name and aliases folded for matching.
    #[serde(skip)]
    keys: Vec<String>,
    /// The address as sent (the domain in lower-case IDNA ASCII), when it has one.
    #[serde(skip)]
    sent_as: Option<String>,
}

impl Contact {
    /// A contact; the id and matching keys are computed here.
    pub fn new(
        name: &str,
        email: &str,
        organization: Option<&str>,
        aliases: Vec<String>,
    ) -> Contact {
        let name = name.trim().to_string();
        let email = email.trim().to_string();
        let digest = Sha256::digest(format!("{}\n{}", email.to_lowercase(), name).as_bytes());
        let id = format!(
            "contact_{}",
            digest[..8]
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect::<String>()
        );
        let mut keys = vec![fold(&name)];
        keys.extend(aliases.iter().map(|a| fold(a)));
        keys.retain(|k| !k.is_empty());
        let sent_as = toolgate_core::pattern::normalize_address(&email);
        Contact {
            sent_as,
            id,
            name,
            email,
            organization: organization
                .map(str::trim)
                .filter(|o| !o.is_empty())
                .map(str::to_string),
            aliases,
            keys,
        }
    }

    /// The rank of `query` (already folded) for this contact; 0 when it does not match.
    fn rank(&self, query: &str) -> u32 {
        let mut best = 0;
        for k in &self.keys {
            let r = if k == query {
                100
            } else if k.split(' ').any(|w| w == query) {
                85
            } else if k.starts_with(query) {
                80
            } else if k.split(' ').any(|w| w.starts_with(query)) {
                70
            } else if k.contains(query) {
                50
            } else {
                0
            };
            best = best.max(r);
        }
        let email = self.email.to_lowercase();
        if email == query {
            best = best.max(90);
        } else if email.contains(query) {
            best = best.max(40);
        }
        best
    }
}

/// A row of a contacts file that was left out of the book.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedRow {
    /// The file.
    pub path: PathBuf,
    /// The row's first line in the file, from 1 (a vCard's `END:VCARD` line).
    pub line: u64,
    /// What is wrong with it and what to write instead.
    pub problem: String,
}

impl std::fmt::Display for SkippedRow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}: {}", self.path.display(), self.line, self.problem)
    }
}

/// The contacts of every configured file.
#[derive(Debug, Clone, Default)]
pub struct ContactBook {
    contacts: Vec<Contact>,
    skipped: Vec<SkippedRow>,
}

impl ContactBook {
    /// Reads `files` (each `.csv`, `.vcf` or `.vcard`); an address found twice with the same
    /// name is kept once; a row that cannot be used is left out and listed in
    /// [`ContactBook::skipped`].
    ///
    /// # Errors
    /// [`MailError::Contacts`]: a file that cannot be read, is too large, has an unknown
    /// extension or a wrong header, or a vCard without its end.
    pub fn load(files: &[PathBuf]) -> Result<ContactBook, MailError> {
        let mut contacts: Vec<Contact> = Vec::new();
        let mut skipped = Vec::new();
        for path in files {
            let bad = |message: String| MailError::Contacts {
                path: path.clone(),
                message,
            };
            let meta = std::fs::metadata(path).map_err(|e| bad(format!("cannot be read: {e}")))?;
            if !meta.is_file() {
                return Err(bad("is not a regular file".into()));
            }
            if meta.len() > MAX_FILE_BYTES {
                return Err(bad(format!(
                    "is {} bytes, over the {MAX_FILE_BYTES}-byte limit",
                    meta.len()
                )));
            }
            let text =
                std::fs::read_to_string(path).map_err(|e| bad(format!("cannot be read: {e}")))?;
            let read = match extension(path).as_deref() {
                Some("csv") => read_csv(&text),
                Some("vcf" | "vcard") => read_vcards(&text),
                _ => Err("has no .csv, .vcf or .vcard extension".into()),
            }
            .map_err(bad)?;
            skipped.extend(read.skipped.into_iter().map(|(line, problem)| SkippedRow {
                path: path.clone(),
                line,
                problem,
            }));
            for c in read.contacts {
                if !contacts.iter().any(|o| o.id == c.id) {
                    contacts.push(c);
                }
            }
            if contacts.len() > MAX_CONTACTS {
                return Err(bad(format!("more than {MAX_CONTACTS} contacts in all")));
            }
        }
        Ok(ContactBook { contacts, skipped })
    }

    /// A book of `contacts` (for tests and embedders).
    pub fn from_contacts(contacts: Vec<Contact>) -> ContactBook {
        ContactBook {
            contacts,
            skipped: Vec::new(),
        }
    }

    /// The rows the files had that were left out, in file order.
    pub fn skipped(&self) -> &[SkippedRow] {
        &self.skipped
    }

    /// The contact whose address is `address` (compared as sent: the domain in IDNA ASCII).
    pub fn by_address(&self, address: &lettre::Address) -> Option<&Contact> {
        let wanted: &str = address.as_ref();
        self.contacts
            .iter()
            .find(|c| c.sent_as.as_deref() == Some(wanted))
    }

    /// How many contacts there are.
    pub fn len(&self) -> usize {
        self.contacts.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.contacts.is_empty()
    }

    /// The contact with id `id`.
    pub fn get(&self, id: &str) -> Option<&Contact> {
        self.contacts.iter().find(|c| c.id == id)
    }

    /// The contacts matching `query`, best first, at most `limit`.
    pub fn search(&self, query: &str, limit: usize) -> Vec<&Contact> {
        let q = fold(query);
        if q.is_empty() {
            return Vec::new();
        }
        let mut hits: Vec<(u32, &Contact)> = self
            .contacts
            .iter()
            .map(|c| (c.rank(&q), c))
            .filter(|(r, _)| *r > 0)
            .collect();
        hits.sort_by(|(ra, a), (rb, b)| {
            rb.cmp(ra)
                .then_with(|| a.name.cmp(&b.name))
                .then_with(|| a.id.cmp(&b.id))
        });
        hits.into_iter().take(limit).map(|(_, c)| c).collect()
    }
}

fn extension(path: &Path) -> Option<String> {
    path.extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
}

/// What a file gave: its good rows, and each bad row's line and problem.
#[derive(Default)]
struct Read {
    contacts: Vec<Contact>,
    skipped: Vec<(u64, String)>,
}

/// Why a row cannot be used, with what to write instead: an empty name, an address that
/// cannot be sent to, or a control character (a line break) in a field that could reach a
/// message (the name greets the recipient in a draft).
fn checked(
    name: &str,
    email: &str,
    organization: Option<&str>,
    aliases: &[String],
) -> Result<(), String> {
    if name.trim().is_empty() {
        return Err("the name is empty; write the contact's name in the first column".into());
    }
    let fields = [("name", Some(name)), ("organization", organization)];
    let aliases = aliases.iter().map(|a| ("alias", Some(a.as_str())));
    for (field, value) in fields.into_iter().chain(aliases) {
        if value.is_some_and(has_control) {
            return Err(format!(
                "the {field} {:?} holds a line break or another control character, which \
                 could end up in a message; write it on one line",
                value.unwrap_or_default()
            ));
        }
    }
    address::parse(email.trim()).map(|_| ()).map_err(|e| {
        format!(
            "{:?} is not an email address that can be sent to: {}; {}",
            email.trim(),
            e.what,
            e.instead
        )
    })
}

/// The contacts of a CSV text with the header `name,email,organization,aliases`.
fn read_csv(text: &str) -> Result<Read, String> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .flexible(true)
        .trim(csv::Trim::All)
        .from_reader(text.trim_start_matches('\u{feff}').as_bytes());
    let header: Vec<String> = reader
        .headers()
        .map_err(|e| format!("the header row does not parse: {e}"))?
        .iter()
        .map(str::to_ascii_lowercase)
        .collect();
    let expected = ["name", "email", "organization", "aliases"];
    if header.len() < 2 || header.iter().zip(expected).any(|(h, e)| h != e) {
        return Err(format!(
            "the header row is {:?}; write `name,email,organization,aliases`",
            header.join(",")
        ));
    }
    let mut out = Read::default();
    let mut record = csv::StringRecord::new();
    loop {
        let line = reader.position().line();
        match reader.read_record(&mut record) {
            Ok(false) => break,
            Ok(true) => {}
            Err(e) => {
                let line = e.position().map_or(line, csv::Position::line);
                out.skipped.push((
                    line,
                    format!("row {line} does not parse: {e}; fix its quoting"),
                ));
                continue;
            }
        }
        let line = record.position().map_or(line, csv::Position::line);
        if record.iter().all(str::is_empty) {
            continue;
        }
        let field = |n: usize| record.get(n).unwrap_or("");
        let aliases: Vec<String> = field(3)
            .split(';')
            .map(str::trim)
            .filter(|a| !a.is_empty())
            .map(str::to_string)
            .collect();
        match checked(field(0), field(1), Some(field(2)), &aliases) {
            Ok(()) => out
                .contacts
                .push(Contact::new(field(0), field(1), Some(field(2)), aliases)),
            Err(problem) => out.skipped.push((line, format!("row {line}: {problem}"))),
        }
    }
    Ok(out)
}

/// The contacts of a text of vCards.
fn read_vcards(text: &str) -> Result<Read, String> {
    // unfold: a line starting with a space or tab continues the one before (RFC 6350 3.2)
    let mut lines: Vec<(usize, String)> = Vec::new();
    for (n, raw) in text.trim_start_matches('\u{feff}').lines().enumerate() {
        match raw.strip_prefix([' ', '\t']) {
            Some(rest) if !lines.is_empty() => lines.last_mut().unwrap().1.push_str(rest),
            _ => lines.push((n + 1, raw.to_string())),
        }
    }
    let mut out = Read::default();
    let mut card: Option<Card> = None;
    for (n, line) in &lines {
        let n = *n as u64;
        let Some((head, value)) = line.split_once(':') else {
            continue;
        };
        let name = head
            .split(';')
            .next()
            .unwrap_or("")
            .rsplit('.')
            .next()
            .unwrap_or("")
            .to_ascii_uppercase();
        match (name.as_str(), &mut card) {
            ("BEGIN", None) if value.trim().eq_ignore_ascii_case("VCARD") => {
                card = Some(Card::default());
            }
            ("END", Some(c)) if value.trim().eq_ignore_ascii_case("VCARD") => {
                let name = c.full_name.clone().or(c.n.clone()).unwrap_or_default();
                let at = format!("the vCard ending on line {n}");
                match &c.email {
                    None => out
                        .skipped
                        .push((n, format!("{at} has no EMAIL; add the contact's address"))),
                    Some(email) => match checked(&name, email, c.org.as_deref(), &c.aliases) {
                        Ok(()) => out.contacts.push(Contact::new(
                            &name,
                            email,
                            c.org.as_deref(),
                            c.aliases.clone(),
                        )),
                        Err(problem) => out.skipped.push((n, format!("{at}: {problem}"))),
                    },
                }
                card = None;
            }
            ("FN", Some(c)) => c.full_name = Some(unescape(value)),
            ("N", Some(c)) => {
                // family;given;additional;prefix;suffix
                let parts: Vec<String> = value.split(';').map(unescape).collect();
                let given = parts.get(1).map(String::as_str).unwrap_or("");
                let family = parts.first().map(String::as_str).unwrap_or("");
                let joined = format!("{given} {family}").trim().to_string();
                if !joined.is_empty() {
                    c.n = Some(joined);
                }
            }
            ("EMAIL", Some(c)) if c.email.is_none() => c.email = Some(unescape(value)),
            ("ORG", Some(c)) => c.org = value.split(';').next().map(unescape),
            ("NICKNAME", Some(c)) => c.aliases.extend(
                split_unescaped(value, ',')
                    .into_iter()
                    .map(|a| a.trim().to_string())
                    .filter(|a| !a.is_empty()),
            ),
            _ => {}
        }
    }
    if card.is_some() {
        return Err("a vCard has no END:VCARD".into());
    }
    Ok(out)
}

#[derive(Default)]
struct Card {
    full_name: Option<String>,
    n: Option<String>,
    email: Option<String>,
    org: Option<String>,
    aliases: Vec<String>,
}

/// A vCard value with `\,`, `\;`, `\n` and `\\` unescaped.
fn unescape(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    let mut chars = value.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('n' | 'N') => out.push(' '),
                Some(other) => out.push(other),
                None => {}
            }
        } else {
            out.push(c);
        }
    }
    out.trim().to_string()
}

/// `value` split at unescaped `sep`, each piece unescaped.
fn split_unescaped(value: &str, sep: char) -> Vec<String> {
    let mut parts = Vec::new();
    let mut cur = String::new();
    let mut escaped = false;
    for c in value.chars() {
        if escaped {
            cur.push('\\');
            cur.push(c);
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == sep {
            parts.push(unescape(&cur));
            cur.clear();
        } else {
            cur.push(c);
        }
    }
    parts.push(unescape(&cur));
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    const CSV: &str = "name,email,organization,aliases\n\
        张伟,zhang.wei@example.cn,Example Ltd,张总;Mr. Zhang\n\
        José Álvarez,jose@example.es,,Pepe\n\
        Joseph Miller,joe@example.com,Acme,\n";

    #[test]
    fn csv_contacts_rank_names_and_aliases_ignoring_case_and_accents() {
        let book = ContactBook::from_contacts(read_csv(CSV).unwrap().contacts);
        let names = |q: &str| -> Vec<String> {
            book.search(q, 10).iter().map(|c| c.name.clone()).collect()
        };
        assert_eq!(names("张总"), ["张伟"]);
        assert_eq!(names("mr. zhang"), ["张伟"]);
        assert_eq!(names("jose"), ["José Álvarez", "Joseph Miller"]);
        assert_eq!(names("ÁLVAREZ"), ["José Álvarez"]);
        assert_eq!(names("pepe"), ["José Álvarez"]);
        assert_eq!(names("joe@example.com"), ["Joseph Miller"]);
        assert!(names("nobody").is_empty());
        assert!(names("  ").is_empty());
        let zhang = book.search("张", 1)[0];
        assert_eq!(zhang.organization.as_deref(), Some("Example Ltd"));
        assert!(zhang.id.starts_with("contact_") && zhang.id.len() == 24);
        assert_eq!(book.get(&zhang.id), Some(zhang));
        assert_eq!(book.get("contact_0000000000000000"), None);
    }

    #[test]
    fn vcards_are_read_with_folded_lines_and_nicknames() {
        let text = "BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Anna Schmidt\r\nN:Schmidt;Anna;;;\r\n\
            EMAIL;TYPE=work:anna@ex\r\n ample.de\r\nORG:Beispiel GmbH;Vertrieb\r\n\
            NICKNAME:Anni,Frau Schmidt\r\nEND:VCARD\r\nBEGIN:VCARD\r\nN:Li;Na;;;\r\n\
            item1.EMAIL:li.na@example.cn\r\nEND:VCARD\r\n";
        let cards = read_vcards(text).unwrap().contacts;
        assert_eq!(cards.len(), 2);
        assert_eq!(cards[0].name, "Anna Schmidt");
        assert_eq!(cards[0].email, "anna@example.de");
        assert_eq!(cards[0].organization.as_deref(), Some("Beispiel GmbH"));
        assert_eq!(cards[0].aliases, ["Anni", "Frau Schmidt"]);
        assert_eq!(cards[1].name, "Na Li");
        assert_eq!(cards[1].email, "li.na@example.cn");
    }

    #[test]
    fn bad_files_are_located() {
        assert!(read_csv("email,name\n")
            .err()
            .unwrap()
            .contains("write `name,email,organization,aliases`"));
        assert!(read_vcards("BEGIN:VCARD\nFN:A\n")
            .err()
            .unwrap()
            .contains("END:VCARD"));
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing.csv");
        let e = ContactBook::load(&[missing]).unwrap_err().to_string();
        assert!(e.contains("cannot be read"), "{e}");
        let txt = dir.path().join("c.txt");
        std::fs::write(&txt, CSV).unwrap();
        let e = ContactBook::load(&[txt]).unwrap_err().to_string();
        assert!(e.contains("extension"), "{e}");
    }

    #[test]
    fn bad_rows_are_skipped_located_and_the_good_ones_kept() {
        let text = "name,email,organization,aliases\n\
            Ann Lee,ann@company.com,,\n\
            Bad,not-an-address,X,\n\
            ,nobody@example.com,,\n\
            \"Eve\r\nBcc: all@example.com\",eve@example.com,,\n\
            Tab,tab@example.com,\"Org\tX\",\n\
            Quoted,\"\"\"a b\"\"@example.com\",,\n\
            Bo,bo@example.com,,\n";
        let read = read_csv(text).unwrap();
        let names: Vec<&str> = read.contacts.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["Ann Lee", "Bo"]);
        let lines: Vec<u64> = read.skipped.iter().map(|(l, _)| *l).collect();
        assert_eq!(lines, [3, 4, 5, 7, 8], "{:?}", read.skipped);
        for ((_, problem), says) in read.skipped.iter().zip([
            "row 3: \"not-an-address\" is not an email address",
            "row 4: the name is empty",
            "the name \"Eve\\r\\nBcc: all@example.com\" holds a line break",
            "the organization \"Org\\tX\" holds a line break or another control",
            "quoted local part",
        ]) {
            assert!(problem.contains(says), "{problem}");
        }
        let cards = read_vcards(
            "BEGIN:VCARD\nFN:A\nEND:VCARD\nBEGIN:VCARD\nFN:Li\rNa\nEMAIL:li@example.cn\n\
             END:VCARD\nBEGIN:VCARD\nFN:Ok\nEMAIL:ok@example.cn\nEND:VCARD\n",
        )
        .unwrap();
        assert_eq!(cards.contacts.len(), 1);
        assert_eq!(cards.skipped.len(), 2);
        assert!(
            cards.skipped[0].1.contains("line 3 has no EMAIL"),
            "{:?}",
            cards.skipped
        );
        assert!(
            cards.skipped[1].1.contains("line break"),
            "{:?}",
            cards.skipped
        );
        // through load: the file and line of each, and the book of the good rows
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("contacts.csv");
        std::fs::write(&path, text).unwrap();
        let book = ContactBook::load(std::slice::from_ref(&path)).unwrap();
        assert_eq!(book.len(), 2);
        let first = book.skipped()[0].to_string();
        assert!(
            first.starts_with(&format!("{}:3: row 3:", path.display())),
            "{first}"
        );
    }
}
