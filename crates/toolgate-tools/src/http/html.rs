//! HTML as Markdown within bounds: a page a server sends is input from anyone, and the
//! HTML standard's tree construction and a recursive converter each have inputs that cost far
//! more than their size.
//!
//! - **Elements made from nothing** (HTML §13.2.4.3, "reconstruct the active formatting
//!   elements"): `<b id=1><p>x<b id=2><p>x...` makes every `<p>` reopen every `<b>` before it,
//!   so n tags build n²/2 elements (16 KiB: 2 MB of Markdown in 5 s; 64 KiB: 2 GB). The parser
//!   here counts the nodes it creates and stops reading at [`element_budget`] (a node per byte
//!   of input, which a page's own tags do not reach), keeping what it built so far.
//! - **Deep nesting**: the tree builder's scope checks read its stack of open elements, so a
//!   page nested n deep costs n² (64 KiB of `<div>`: 2 s, 256 KiB: 40 s). The parser counts
//!   the names it reads and stops at [`scan_budget`].
//! - **Depth of the converter**: htmd converts by recursion, several KiB of stack a level in a debug build, so
//!   64 KiB of `<div>` overflows any thread's stack and aborts the process. Elements deeper
//!   than [`MAX_DEPTH`] are replaced by their text (in document order) before converting.
//! - **Runs of like inline siblings**: htmd joins `<b>a</b><b>b</b>` into one element by
//!   removing from a vector, quadratic in the run; such runs are joined here in one pass the
//!   same way (same tag, `b`/`strong` and `i`/`em` alike, same attributes, one text child
//!   each, links never), so htmd finds none left.
//!
//! Everything is iterative; what remains for htmd is a tree of bounded depth whose size is
//! linear in the input.

use html5ever::tendril::{StrTendril, TendrilSink};
use html5ever::tree_builder::{ElementFlags, NodeOrText, QuirksMode, TreeSink};
use html5ever::{Attribute, QualName};
use markup5ever_rcdom::{Handle, Node, NodeData, RcDom};
use std::borrow::Cow;
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::OnceLock;

/// The deepest element converted as itself; deeper elements become their text. Pages nest a
/// few dozen levels; a browser's parser stops nesting at 512 (Blink).
pub const MAX_DEPTH: usize = 128;

/// Bytes of HTML fed to the parser at a time (up to the last `<` in them, so a page cut at its
/// budget ends between tags); the node budget is checked between chunks.
const CHUNK_BYTES: usize = 4 << 10;

/// Elements never converted: they are not content.
const SKIPPED: [&str; 9] = [
    "script", "style", "noscript", "template", "svg", "canvas", "iframe", "object", "embed",
];

/// The most nodes the parser may create for any page: about 200 MB of tree.
pub const MAX_NODES: usize = 1 << 20;

/// The nodes (elements, comments) the parser may create for `bytes` of HTML: one a byte, and
/// 1,024 more, at most [`MAX_NODES`]. Tags a page writes itself take at least three bytes each
/// (`<a>`) and the tree construction's own elements add a few (at most three reopened copies
/// of a formatting element without attributes, §13.2.4.3's "Noah's Ark"), so only pages made
/// to multiply their elements pass this.
pub fn element_budget(bytes: usize) -> usize {
    bytes.saturating_add(1024).min(MAX_NODES)
}

/// The element names the tree builder may read for `bytes` of HTML: 32 a byte, and 65,536
/// more. Its scope checks read the stack of open elements, so each tag costs up to the depth
/// it is at and a deep page costs the square of its depth (64 KiB of `<div>`: 2 s). Pages read
/// 0.1 to 0.7 names a byte (Wikipedia, Rust's books and API pages, Hacker News, this crate's
/// benchmark page); 64 KiB of `<div>` or `<ul><li>` would read 1,000 to 3,000.
pub fn scan_budget(bytes: usize) -> u64 {
    (bytes as u64).saturating_mul(32).saturating_add(65_536)
}

/// `html` as Markdown (scripts, styles and other parts that are not content left out). A page
/// cut at its [`element_budget`] ends with a line saying so.
pub fn markdown(html: &str) -> String {
    static CONVERTER: OnceLock<htmd::HtmlToMarkdown> = OnceLock::new();
    let converter = CONVERTER.get_or_init(|| {
        htmd::HtmlToMarkdown::builder()
            .skip_tags(SKIPPED.to_vec())
            .build()
    });
    let (document, cut) = parse(html);
    bound(&document);
    let mut md = converter.tree_to_markdown(&document);
    if cut {
        md.push_str(&format!(
            "\n\n[toolgate: the rest of this page is left out: its {} bytes of HTML build \
             more elements, or nest them deeper, than a page of that size does]",
            html.len()
        ));
    }
    md
}

/// The document tree of `html` (HTML §13.2, as html5ever builds it), fed in chunks and cut at
/// the first chunk after which the tree holds more than [`element_budget`] nodes or the tree
/// builder has read more than [`scan_budget`] element names.
fn parse(html: &str) -> (Handle, bool) {
    let created = Rc::new(Cell::new(0usize));
    let scanned = Rc::new(Cell::new(0u64));
    let budget = element_budget(html.len());
    let scans = scan_budget(html.len());
    let sink = Counted {
        dom: RcDom::default(),
        created: Rc::clone(&created),
        scanned: Rc::clone(&scanned),
    };
    let mut parser = html5ever::parse_document(sink, Default::default());
    let mut rest = html;
    let mut cut = false;
    while !rest.is_empty() {
        let mut end = rest.len().min(CHUNK_BYTES);
        while !rest.is_char_boundary(end) {
            end += 1;
        }
        if end < rest.len() {
            end = rest[..end].rfind('<').filter(|&i| i > 0).unwrap_or(end);
        }
        let (chunk, tail) = rest.split_at(end);
        parser.process(StrTendril::from_slice(chunk));
        rest = tail;
        if created.get() > budget || scanned.get() > scans {
            cut = !rest.is_empty();
            break;
        }
    }
    (parser.finish().document, cut)
}

/// Bounds the tree under `root` in place, without recursion: elements at [`MAX_DEPTH`] keep
/// only their text, and runs of like inline siblings are joined.
fn bound(root: &Handle) {
    let mut stack = vec![(Rc::clone(root), 0usize)];
    while let Some((node, depth)) = stack.pop() {
        if depth >= MAX_DEPTH {
            flatten(&node);
            continue;
        }
        join_runs(&node);
        for child in node.children.borrow().iter() {
            if matches!(child.data, NodeData::Element { .. }) {
                stack.push((Rc::clone(child), depth + 1));
            }
        }
    }
}

/// Replaces the children of `node` by one text node: the text under it in document order
/// (without that of [`SKIPPED`] elements).
fn flatten(node: &Handle) {
    let mut text = String::new();
    let mut stack: Vec<Handle> = node.children.borrow().iter().rev().cloned().collect();
    while let Some(n) = stack.pop() {
        match &n.data {
            NodeData::Text { contents } => text.push_str(&contents.borrow()),
            NodeData::Element { name, .. } if !SKIPPED.contains(&&*name.local) => {
                stack.extend(n.children.borrow().iter().rev().cloned());
            }
            _ => {}
        }
    }
    let leaf = Node::new(NodeData::Text {
        contents: RefCell::new(StrTendril::from(text)),
    });
    leaf.parent.set(Some(Rc::downgrade(node)));
    // the old subtree is dropped iteratively (markup5ever_rcdom's Drop for Node)
    *node.children.borrow_mut() = vec![leaf];
}

/// Joins each run of children of `node` that htmd would join (see [`joins`]) into its first
/// element, in one pass.
fn join_runs(node: &Handle) {
    let mut children = node.children.borrow_mut();
    if children.len() < 2 || !children.windows(2).any(|w| joins(&w[0], &w[1])) {
        return;
    }
    let mut kept: Vec<Handle> = Vec::with_capacity(children.len());
    for child in children.drain(..) {
        if let Some(head) = kept.last() {
            if joins(head, &child) {
                let (NodeData::Text { contents: to }, NodeData::Text { contents: from }) = (
                    &head.children.borrow()[0].data,
                    &child.children.borrow()[0].data,
                ) else {
                    unreachable!("joins checked both hold one text node")
                };
                to.borrow_mut().push_tendril(&from.borrow());
                child.parent.set(None);
                continue;
            }
        }
        kept.push(child);
    }
    *children = kept;
}

/// Whether htmd joins `second` into `first` (its `can_combine`): two inline elements, each
/// with exactly one child that is text, of the same tag (`b`/`strong` and `i`/`em` alike, `a`
/// never), with equal attributes and no template contents.
fn joins(first: &Node, second: &Node) -> bool {
    let (
        NodeData::Element {
            name: n1,
            attrs: a1,
            template_contents: t1,
            mathml_annotation_xml_integration_point: m1,
        },
        NodeData::Element {
            name: n2,
            attrs: a2,
            template_contents: t2,
            mathml_annotation_xml_integration_point: m2,
        },
    ) = (&first.data, &second.data)
    else {
        return false;
    };
    let (l1, l2) = (&*n1.local, &*n2.local);
    let same = l1 == l2
        || matches!(
            (l1, l2),
            ("b", "strong") | ("strong", "b") | ("i", "em") | ("em", "i")
        );
    let one_text = |n: &Node| {
        let c = n.children.borrow();
        c.len() == 1 && matches!(c[0].data, NodeData::Text { .. })
    };
    same && l1 != "a"
        && !is_block(l1)
        && n1.ns == n2.ns
        && m1 == m2
        && one_text(first)
        && one_text(second)
        && *a1.borrow() == *a2.borrow()
        && t1.borrow().is_none()
        && t2.borrow().is_none()
}

/// The block elements of htmd's converter (CommonMark 0.31.2 §4.6 HTML blocks, start
/// condition 6, and `li`, `p`, `script`, `style`, `textarea`, ...): never joined.
fn is_block(tag: &str) -> bool {
    matches!(
        tag,
        "address"
            | "article"
            | "aside"
            | "base"
            | "basefont"
            | "blockquote"
            | "body"
            | "caption"
            | "center"
            | "col"
            | "colgroup"
            | "dd"
            | "details"
            | "dialog"
            | "dir"
            | "div"
            | "dl"
            | "dt"
            | "fieldset"
            | "figcaption"
            | "figure"
            | "footer"
            | "form"
            | "frame"
            | "frameset"
            | "h1"
            | "h2"
            | "h3"
            | "h4"
            | "h5"
            | "h6"
            | "head"
            | "header"
            | "hr"
            | "html"
            | "iframe"
            | "legend"
            | "li"
            | "link"
            | "main"
            | "menu"
            | "menuitem"
            | "nav"
            | "noframes"
            | "ol"
            | "optgroup"
            | "option"
            | "p"
            | "param"
            | "pre"
            | "script"
            | "search"
            | "section"
            | "style"
            | "summary"
            | "table"
            | "tbody"
            | "td"
            | "textarea"
            | "tfoot"
            | "th"
            | "thead"
            | "title"
            | "tr"
            | "track"
            | "ul"
    )
}

/// html5ever's `RcDom`, counting the nodes the tree builder creates and keeping no parse
/// errors (a malformed page has one a few bytes; they are not read).
struct Counted {
    dom: RcDom,
    created: Rc<Cell<usize>>,
    /// Element names read: the tree builder's scans of its stack of open elements.
    scanned: Rc<Cell<u64>>,
}

impl Counted {
    fn count(&self) {
        self.created.set(self.created.get() + 1);
    }
}

impl TreeSink for Counted {
    type Handle = Handle;
    type Output = RcDom;
    type ElemName<'a> = <RcDom as TreeSink>::ElemName<'a>;

    fn finish(self) -> RcDom {
        self.dom
    }
    fn parse_error(&self, _msg: Cow<'static, str>) {}
    fn get_document(&self) -> Handle {
        self.dom.get_document()
    }
    fn elem_name<'a>(&'a self, target: &'a Handle) -> Self::ElemName<'a> {
        self.scanned.set(self.scanned.get() + 1);
        self.dom.elem_name(target)
    }
    fn create_element(&self, name: QualName, attrs: Vec<Attribute>, flags: ElementFlags) -> Handle {
        self.count();
        self.dom.create_element(name, attrs, flags)
    }
    fn create_comment(&self, text: StrTendril) -> Handle {
        self.count();
        self.dom.create_comment(text)
    }
    fn create_pi(&self, target: StrTendril, data: StrTendril) -> Handle {
        self.count();
        self.dom.create_pi(target, data)
    }
    fn append(&self, parent: &Handle, child: NodeOrText<Handle>) {
        self.dom.append(parent, child)
    }
    fn append_based_on_parent_node(
        &self,
        element: &Handle,
        prev_element: &Handle,
        child: NodeOrText<Handle>,
    ) {
        self.dom
            .append_based_on_parent_node(element, prev_element, child)
    }
    fn append_doctype_to_document(
        &self,
        name: StrTendril,
        public_id: StrTendril,
        system_id: StrTendril,
    ) {
        self.dom
            .append_doctype_to_document(name, public_id, system_id)
    }
    fn mark_script_already_started(&self, node: &Handle) {
        self.dom.mark_script_already_started(node)
    }
    fn pop(&self, node: &Handle) {
        self.dom.pop(node)
    }
    fn get_template_contents(&self, target: &Handle) -> Handle {
        self.dom.get_template_contents(target)
    }
    fn same_node(&self, x: &Handle, y: &Handle) -> bool {
        self.dom.same_node(x, y)
    }
    fn set_quirks_mode(&self, mode: QuirksMode) {
        self.dom.set_quirks_mode(mode)
    }
    fn append_before_sibling(&self, sibling: &Handle, new_node: NodeOrText<Handle>) {
        self.dom.append_before_sibling(sibling, new_node)
    }
    fn add_attrs_if_missing(&self, target: &Handle, attrs: Vec<Attribute>) {
        self.dom.add_attrs_if_missing(target, attrs)
    }
    fn associate_with_form(
        &self,
        target: &Handle,
        form: &Handle,
        nodes: (&Handle, Option<&Handle>),
    ) {
        self.dom.associate_with_form(target, form, nodes)
    }
    fn remove_from_parent(&self, target: &Handle) {
        self.dom.remove_from_parent(target)
    }
    fn reparent_children(&self, node: &Handle, new_parent: &Handle) {
        self.dom.reparent_children(node, new_parent)
    }
    fn is_mathml_annotation_xml_integration_point(&self, handle: &Handle) -> bool {
        self.dom.is_mathml_annotation_xml_integration_point(handle)
    }
    fn set_current_line(&self, line_number: u64) {
        self.dom.set_current_line(line_number)
    }
    fn allow_declarative_shadow_roots(&self, intended_parent: &Handle) -> bool {
        self.dom.allow_declarative_shadow_roots(intended_parent)
    }
    fn attach_declarative_shadow(
        &self,
        location: &Handle,
        template: &Handle,
        attrs: &[Attribute],
    ) -> bool {
        self.dom
            .attach_declarative_shadow(location, template, attrs)
    }
    fn maybe_clone_an_option_into_selectedcontent(&self, option: &Handle) {
        self.dom.maybe_clone_an_option_into_selectedcontent(option)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn htmd_alone(html: &str) -> String {
        htmd::HtmlToMarkdown::builder()
            .skip_tags(SKIPPED.to_vec())
            .build()
            .convert(html)
            .unwrap()
    }

    /// `html` converted on a thread with the stack of a tokio blocking thread (2 MiB).
    fn on_blocking_stack(html: String) -> String {
        std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(move || markdown(&html))
            .unwrap()
            .join()
            .unwrap()
    }

    #[test]
    fn ordinary_pages_convert_as_htmd_does() {
        let section = |i: usize| {
            format!(
                "<h2>Section {i}</h2><p>Some <b>text</b> with a <a href=\"/p/{i}\">link</a> \
                 and <code>code()</code>.</p><ul><li>one</li><li>two <i>it</i></li></ul>\n"
            )
        };
        let long: String = (0..200).map(section).collect();
        for html in [
            "<html><head><title>T</title><style>p{}</style></head><body><h1>Title</h1>\
             <script>alert(1)</script><p>x</p></body></html>"
                .to_string(),
            format!("<!doctype html><html><body>{long}</body></html>"),
            "<p><b>a</b><b>b</b><strong>c</strong> <i>d</i><em>e</em><b class=x>f</b>\
             <b class=x>g</b><a href=1>h</a><a href=1>i</a><code>j</code><code>k</code></p>"
                .to_string(),
            "<table><tr><th>a</th><th>b</th></tr><tr><td>1</td><td>2</td></tr></table>\
             <ol start=3><li>x<ul><li>y</li></ul></li></ol><pre><code>fn main() {}\n</code>\
             </pre><blockquote><p>q</p></blockquote><img src=i.png alt=pic><hr>"
                .to_string(),
            "<div><div><span>deep</span> <b><i>er</i></b></div></div>text & <tag> \
             # not a heading\n1. not a list"
                .to_string(),
        ] {
            assert_eq!(markdown(&html), htmd_alone(&html), "{html}");
        }
    }

    const NOTE: &str = "[toolgate: the rest of this page is left out:";

    const OPENERS: [&str; 9] = [
        "<div>",
        "<ul><li>",
        "<ol><li>x",
        "<table><tr><td>",
        "<blockquote>",
        "<span>",
        "<b>",
        "<a href=x>",
        "<p><i>",
    ];

    #[test]
    fn deep_pages_keep_their_text_without_overflowing_the_stack() {
        // deeper than the converter goes, within what the parser reads: the deep part kept
        // as its text
        for open in OPENERS {
            let html = format!("<html><body>{}deepest words", open.repeat(200));
            let md = on_blocking_stack(html);
            assert!(
                md.contains("deepest words") && !md.contains(NOTE),
                "{open}: {}",
                &md[..md.len().min(300)]
            );
        }
        // a page just within the bound keeps its structure to the bottom
        let html = format!("<body>{}<b>bottom</b>", "<div>".repeat(MAX_DEPTH - 4));
        assert_eq!(markdown(&html), "**bottom**");
    }

    #[test]
    fn nesting_bombs_stop_at_the_budget() {
        // 64 KiB of nesting, thousands of levels: cut where the parser's reading passes its
        // budget, converted without overflowing a stack, in bounded time and size
        for open in OPENERS {
            let depth = (64 << 10) / open.len();
            let html = format!("<html><body>{}deepest words", open.repeat(depth));
            let started = std::time::Instant::now();
            let md = on_blocking_stack(html);
            assert!(
                md.contains("deepest words") || md.contains(NOTE),
                "{open}: {}",
                &md[md.len().saturating_sub(300)..]
            );
            assert!(md.len() < 4 << 20, "{open}: {} bytes", md.len());
            assert!(
                started.elapsed().as_secs() < 30,
                "{open}: {:?}",
                started.elapsed()
            );
        }
    }

    #[test]
    fn reopened_formatting_elements_stop_at_the_budget() {
        // each <p> reopens every <b> before it (HTML §13.2.4.3): n² elements from n tags
        let html: String = (0..4096).map(|i| format!("<b id={i}><p>x")).collect();
        let started = std::time::Instant::now();
        let md = on_blocking_stack(html.clone());
        assert!(
            md.ends_with(&format!(
                "{NOTE} its {} bytes of HTML build more elements, or nest them deeper, than a \
                 page of that size does]",
                html.len()
            )),
            "{}",
            &md[md.len().saturating_sub(300)..]
        );
        assert!(md.len() < 16 * html.len(), "{} bytes", md.len());
        // unbounded, this page takes minutes and gigabytes; bounded, well under a second in
        // a release build (the bound is loose for a debug build on a loaded machine)
        assert!(started.elapsed().as_secs() < 60, "{:?}", started.elapsed());

        // the parse stops within one chunk of the budget
        let (document, cut) = parse(&html);
        assert!(cut);
        let mut nodes = 0usize;
        let mut stack = vec![document];
        while let Some(n) = stack.pop() {
            nodes += 1;
            stack.extend(n.children.borrow().iter().cloned());
        }
        assert!(
            nodes < 3 * element_budget(html.len()),
            "{nodes} nodes for a budget of {}",
            element_budget(html.len())
        );

        // an ordinary page is never cut
        let page: String = (0..4096)
            .map(|i| format!("<p><b id={i}>x</b></p>"))
            .collect();
        assert!(!parse(&page).1);
        assert!(!markdown(&page).contains(NOTE));
    }

    #[test]
    fn runs_of_like_inline_siblings_are_joined_in_one_pass() {
        let html = format!(
            "<p>{}</p><p>{}</p>",
            "<b>x</b>".repeat(8192),
            "<i>y</i><em>z</em>".repeat(4096)
        );
        let (document, _) = parse(&html);
        bound(&document);
        // html > body > p: one child each, its text whole
        let body = document.children.borrow()[0].children.borrow()[1].clone();
        for p in body.children.borrow().iter() {
            assert_eq!(p.children.borrow().len(), 1);
        }
        let md = markdown(&html);
        assert_eq!(
            md,
            format!("**{}**\n\n*{}*", "x".repeat(8192), "yz".repeat(4096))
        );
    }
}
