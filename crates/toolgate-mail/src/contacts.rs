//! The contacts book: the operator's CSV and vCard files, read once, searched with ranked,
//! case- and accent-insensitive matching on names and aliases.
//!
//! Files:
//! - `.csv`: a header row `name,email,organization,aliases` (in that order; `organization`
//!   and `aliases` may be empty), aliases (nicknames, titles such as `张总`) separated by `;`;
//! - `.vcf` / `.vcard`: vCards (RFC 6350, 2.1 and 3.0 read alike): `FN` (else `N`), the first
//!   `EMAIL`, `ORG`'s first component, `NICKNAME`s as aliases.
//!
//! Ranking of a query against a contact (the best of its name and aliases, both folded: NFKD,
//! combining marks removed, lower case): equal 100, a whole word 85, a prefix 80, a word's
//! prefix 70, contained 50; against its address: equal 90, contained 40. Ties go by name, then
//! id.

use crate::address;
use crate::text::fold;
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
        Contact {
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

/// The contacts of every configured file.
#[derive(Debug, Clone, Default)]
pub struct ContactBook {
    contacts: Vec<Contact>,
}

impl ContactBook {
    /// Reads `files` (each `.csv`, `.vcf` or `.vcard`); an address found twice with the same
    /// name is kept once.
    ///
    /// # Errors
    /// [`MailError::Contacts`]: a file that cannot be read, is too large, has an unknown
    /// extension or a wrong header, or a row whose address is not an address (located by row).
    pub fn load(files: &[PathBuf]) -> Result<ContactBook, MailError> {
        let mut contacts: Vec<Contact> = Vec::new();
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
            for c in read {
                if !contacts.iter().any(|o| o.id == c.id) {
                    contacts.push(c);
                }
            }
            if contacts.len() > MAX_CONTACTS {
                return Err(bad(format!("more than {MAX_CONTACTS} contacts in all")));
            }
        }
        Ok(ContactBook { contacts })
    }

    /// A book of `contacts` (for tests and embedders).
    pub fn from_contacts(contacts: Vec<Contact>) -> ContactBook {
        ContactBook { contacts }
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

fn checked(row: &str, name: &str, email: &str) -> Result<(), String> {
    if name.trim().is_empty() {
        return Err(format!("{row}: the name is empty"));
    }
    address::parse(email.trim()).map(|_| ()).map_err(|e| {
        format!(
            "{row}: {:?} is not an email address: {}",
            email.trim(),
            e.what
        )
    })
}

/// The contacts of a CSV text with the header `name,email,organization,aliases`.
fn read_csv(text: &str) -> Result<Vec<Contact>, String> {
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
    let mut out = Vec::new();
    for (i, record) in reader.records().enumerate() {
        let row = format!("row {}", i + 2);
        let record = record.map_err(|e| format!("{row} does not parse: {e}"))?;
        let field = |n: usize| record.get(n).unwrap_or("");
        if record.iter().all(str::is_empty) {
            continue;
        }
        checked(&row, field(0), field(1))?;
        let aliases = field(3)
            .split(';')
            .map(str::trim)
            .filter(|a| !a.is_empty())
            .map(str::to_string)
            .collect();
        out.push(Contact::new(field(0), field(1), Some(field(2)), aliases));
    }
    Ok(out)
}

/// The contacts of a text of vCards.
fn read_vcards(text: &str) -> Result<Vec<Contact>, String> {
    // unfold: a line starting with a space or tab continues the one before (RFC 6350 3.2)
    let mut lines: Vec<String> = Vec::new();
    for raw in text.trim_start_matches('\u{feff}').lines() {
        match raw.strip_prefix([' ', '\t']) {
            Some(rest) if !lines.is_empty() => lines.last_mut().unwrap().push_str(rest),
            _ => lines.push(raw.to_string()),
        }
    }
    let mut out = Vec::new();
    let mut card: Option<Card> = None;
    for (n, line) in lines.iter().enumerate() {
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
                let Some(email) = c.email.clone() else {
                    return Err(format!("the vCard ending on line {} has no EMAIL", n + 1));
                };
                checked(
                    &format!("the vCard ending on line {}", n + 1),
                    &name,
                    &email,
                )?;
                out.push(Contact::new(
                    &name,
                    &email,
                    c.org.as_deref(),
                    c.aliases.clone(),
                ));
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
        let book = ContactBook::from_contacts(read_csv(CSV).unwrap());
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
        let cards = read_vcards(text).unwrap();
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
        for (text, says) in [
            ("email,name\n", "write `name,email,organization,aliases`"),
            (
                "name,email,organization,aliases\nAnn,not-an-address,,\n",
                "row 2",
            ),
            (
                "name,email,organization,aliases\n,ann@example.com,,\n",
                "the name is empty",
            ),
        ] {
            let e = read_csv(text).unwrap_err();
            assert!(e.contains(says), "{text:?}: {e}");
        }
        assert!(read_vcards("BEGIN:VCARD\nFN:A\nEND:VCARD\n")
            .unwrap_err()
            .contains("no EMAIL"));
        assert!(read_vcards("BEGIN:VCARD\nFN:A\n")
            .unwrap_err()
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
}
