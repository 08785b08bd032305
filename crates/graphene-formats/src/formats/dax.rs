//! Pegasus DAX workflows (the XML `adag` of DAX 2 and 3, as Pegasus, WorkflowSim and the
//! Pegasus workflow generator write them).
//!
//! * Each `<job>` is a task named by its `id`, grouped by its `name` (the transformation, e.g.
//!   `mProjectPP`). Its runtime in seconds is the `runtime` attribute (WorkflowSim's and the
//!   generator's files), else a `<profile namespace="pegasus" key="runtime">`; a job with neither
//!   is an error.
//! * Dependencies are the union of the explicit `<child ref><parent ref/></child>` entries and
//!   the data flow: a job that reads (`<uses link="input">`) a file another job writes
//!   (`link="output"`) depends on it. The file is named by `file` (DAX 3) or `name` (DAX 2).
//!   The bytes a parent writes and the child reads are the edge's data, in MB (10^6 bytes), for
//!   `--bandwidth` (MB per second).
//! * Demands: `cpu` = the `pegasus` profile `cores` (1 when absent); `mem` = its `memory`
//!   (MB) / 1000 in GB; `disk` = the bytes the job reads and writes over its runtime, in MB/s
//!   (as for WfCommons); `net` 0.
//! * Sub-workflows (`<dag>`, `<dax>`) are not read: they are an error naming the element.
//! * Elements nest at most [`MAX_NESTING`] (64) levels; deeper XML is refused before it is
//!   parsed (a DAX nests four).

use std::collections::HashMap;

use super::task_graph::{demand, number, number_at, TaskGraph, TaskNode};
use super::wfcommons::task_type;
use crate::error::{Error, Result};
use crate::limits::MAX_NESTING;
use crate::model::Dag;

/// True when the text is XML whose root is `adag`.
pub fn looks_like(text: &str) -> bool {
    let t = text.trim_start();
    t.starts_with('<') && t.contains("<adag")
}

struct Uses<'a> {
    file: &'a str,
    output: bool,
    size: f64,
}

/// Refuses XML whose elements nest deeper than [`MAX_NESTING`], before roxmltree reads it:
/// roxmltree recurses once per level of nesting, so 100,000 nested elements (700 KB) would
/// exhaust the stack. One pass over the text; the markup that cannot open an element (comments,
/// CDATA sections, processing instructions, declarations, quoted attribute values) is skipped
/// whole, so that a `<` or `>` inside it is not counted. On well-formed XML the count is exact;
/// on malformed XML it only decides which error is reported.
fn check_nesting(text: &str) -> Result<()> {
    let b = text.as_bytes();
    let find = |from: usize, pat: &str| text.get(from..).and_then(|t| t.find(pat)).map(|k| from + k + pat.len());
    let (mut i, mut depth) = (0usize, 0usize);
    while let Some(k) = b[i..].iter().position(|&c| c == b'<') {
        let j = i + k;
        let rest = &b[j..];
        let end = if rest.starts_with(b"<!--") {
            find(j + 4, "-->")
        } else if rest.starts_with(b"<![CDATA[") {
            find(j + 9, "]]>")
        } else if rest.starts_with(b"<?") {
            find(j + 2, "?>")
        } else if rest.starts_with(b"<!") {
            find(j + 2, ">")
        } else if rest.starts_with(b"</") {
            depth = depth.saturating_sub(1);
            find(j + 2, ">")
        } else {
            // A start tag, to its `>` outside quoted values; `/>` closes the element at once.
            let mut quote = None;
            let close = b[j + 1..].iter().position(|&c| match quote {
                Some(q) => {
                    if c == q {
                        quote = None;
                    }
                    false
                }
                None => {
                    if c == b'"' || c == b'\'' {
                        quote = Some(c);
                    }
                    c == b'>'
                }
            });
            let close = close.map(|m| j + 1 + m);
            if close.is_some_and(|e| b[e - 1] != b'/') {
                depth += 1;
                if depth > MAX_NESTING {
                    let line_start = text[..j].rfind('\n').map_or(0, |n| n + 1);
                    return Err(Error::Syntax {
                        line: 1 + b[..j].iter().filter(|&&c| c == b'\n').count(),
                        column: 1 + text[line_start..j].chars().count(),
                        message: format!("XML elements nest deeper than {MAX_NESTING} levels"),
                    });
                }
            }
            close.map(|e| e + 1)
        };
        match end {
            Some(e) => i = e,
            None => break,
        }
    }
    Ok(())
}

/// Line numbers of byte offsets asked for in increasing order, counted once over the text
/// (roxmltree's `text_pos_at` rescans the text from its start at every call: quadratic in the
/// jobs of a workflow).
struct Lines<'a> {
    text: &'a [u8],
    pos: usize,
    line: usize,
}

impl Lines<'_> {
    fn at(&mut self, offset: usize) -> usize {
        let offset = offset.min(self.text.len());
        if offset < self.pos {
            (self.pos, self.line) = (0, 1);
        }
        self.line += self.text[self.pos..offset].iter().filter(|&&c| c == b'\n').count();
        self.pos = offset;
        self.line
    }
}

pub fn parse(text: &str, name: &str) -> Result<Dag> {
    check_nesting(text)?;
    let opts = roxmltree::ParsingOptions { allow_dtd: false, nodes_limit: u32::MAX };
    let doc = roxmltree::Document::parse_with_options(text, opts).map_err(|e| {
        let p = e.pos();
        Error::Syntax { line: p.row as usize, column: p.col as usize, message: format!("not well-formed XML: {e}") }
    })?;
    let root = doc.root_element();
    // Places are formatted only where a message may need them: each job's (kept for "first
    // at"), the others on an error.
    let mut lines = Lines { text: text.as_bytes(), pos: 0, line: 1 };
    if root.tag_name().name() != "adag" {
        return Err(Error::field(
            "(root element)",
            format!("<{}> where a DAX <adag> was expected", root.tag_name().name()),
        ));
    }
    let dag_name = root.attribute("name").map(String::from).unwrap_or_else(|| name.to_string());
    let mut g = TaskGraph::default();
    // Per job, in the order of `g`'s tasks: its id and the files it reads and writes.
    let mut uses: Vec<(&str, Vec<Uses>)> = Vec::new();
    // Explicit edges: parent, child, and where the <parent> element starts.
    let mut explicit: Vec<(&str, &str, usize)> = Vec::new();
    for el in root.children().filter(|n| n.is_element()) {
        crate::deadline::poll()?;
        let start = el.range().start;
        match el.tag_name().name() {
            "job" => {
                let Some(id) = el.attribute("id") else {
                    return Err(Error::field(format!("line {}: <job>", lines.at(start)), "no id attribute"));
                };
                let at = format!("line {} (job {id})", lines.at(start));
                let profile = |key: &str| {
                    el.children()
                        .filter(|c| c.has_tag_name("profile"))
                        .find(|c| c.attribute("namespace") == Some("pegasus") && c.attribute("key") == Some(key))
                        .and_then(|c| c.text())
                        .map(str::trim)
                };
                let runtime = match el.attribute("runtime").or_else(|| profile("runtime")) {
                    Some(v) => number(v, &at, "runtime")?,
                    None => {
                        return Err(Error::field(
                            at,
                            "no runtime: give a runtime attribute or a pegasus profile with key runtime",
                        ))
                    }
                };
                let cores = profile("cores").map(|v| number(v, &at, "cores")).transpose()?.unwrap_or(1.0);
                let memory = profile("memory").map(|v| number(v, &at, "memory")).transpose()?.unwrap_or(0.0);
                let mut files = Vec::new();
                for u in el.children().filter(|c| c.has_tag_name("uses")) {
                    let uat = |lines: &mut Lines| format!("line {} (job {id}) <uses>", lines.at(u.range().start));
                    let Some(file) = u.attribute("file").or_else(|| u.attribute("name")) else {
                        return Err(Error::field(uat(&mut lines), "no file (DAX 3) or name (DAX 2) attribute"));
                    };
                    let output = match u.attribute("link") {
                        Some("output") => true,
                        Some("input" | "inout" | "none" | "checkpoint") | None => false,
                        Some(other) => {
                            return Err(Error::field(uat(&mut lines), format!("link '{other}' is not input or output")))
                        }
                    };
                    let size = match u.attribute("size") {
                        Some(v) => number_at(v, || uat(&mut lines), "size")?,
                        None => 0.0,
                    };
                    files.push(Uses { file, output, size });
                }
                let io: f64 = files.iter().map(|f| f.size).sum();
                let disk = if runtime > 0.0 { io / runtime / 1e6 } else { 0.0 };
                let group = el.attribute("name").map(task_type).unwrap_or(id).to_string();
                g.add(TaskNode {
                    name: id.to_string(),
                    group,
                    duration: runtime,
                    demand: demand(cores, memory / 1000.0, disk),
                    at,
                })?;
                uses.push((id, files));
            }
            "child" => {
                let Some(child) = el.attribute("ref") else {
                    return Err(Error::field(format!("line {}: <child>", lines.at(start)), "no ref attribute"));
                };
                for p in el.children().filter(|c| c.has_tag_name("parent")) {
                    let Some(parent) = p.attribute("ref") else {
                        let at = format!("line {} <parent>", lines.at(p.range().start));
                        return Err(Error::field(at, "no ref attribute"));
                    };
                    explicit.push((parent, child, p.range().start));
                }
            }
            "dag" | "dax" => {
                return Err(Error::field(
                    format!("line {}: <{}>", lines.at(start), el.tag_name().name()),
                    "sub-workflows are not read; flatten the workflow first",
                ))
            }
            // Catalog entries (<file>, <executable>, <transformation>) and metadata.
            _ => {}
        }
    }
    for (parent, child, start) in explicit {
        let mut at = || format!("line {} <parent>", lines.at(start));
        let Some(p) = g.index_of(parent) else { return Err(Error::field(at(), format!("unknown task '{parent}'"))) };
        let Some(c) = g.index_of(child) else { return Err(Error::field(at(), format!("unknown task '{child}'"))) };
        g.edge_at(p, c, 0.0, at)?;
    }
    // Data flow: who writes each file (jobs are numbered as in `g`).
    let mut writer: HashMap<&str, (usize, f64)> = HashMap::new();
    for (j, (_, files)) in uses.iter().enumerate() {
        for f in files.iter().filter(|f| f.output) {
            writer.entry(f.file).or_insert((j, f.size));
        }
    }
    for (j, (id, files)) in uses.iter().enumerate() {
        for f in files.iter().filter(|f| !f.output) {
            if let Some(&(w, size)) = writer.get(f.file) {
                if w != j {
                    g.edge_at(w, j, size / 1e6, || format!("job {id} reading {}", f.file))?;
                }
            }
        }
    }
    g.build(&dag_name)
}

#[cfg(test)]
mod tests {
    use super::*;

    const DAX: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<adag xmlns="http://pegasus.isi.edu/schema/DAX" version="3.6" name="tiny">
  <job id="ID00000" namespace="m" name="mProject" version="1.0" runtime="10.5">
    <uses file="a.fits" link="input" size="1000000"/>
    <uses file="p.fits" link="output" size="3000000"/>
  </job>
  <job id="ID00001" namespace="m" name="mAdd" version="1.0">
    <profile namespace="pegasus" key="runtime">4</profile>
    <profile namespace="pegasus" key="cores">2</profile>
    <uses file="p.fits" link="input" size="3000000"/>
  </job>
  <job id="ID00002" name="mJPEG" runtime="1"/>
  <child ref="ID00002"><parent ref="ID00001"/></child>
</adag>"#;

    #[test]
    fn jobs_files_and_explicit_edges() {
        assert!(looks_like(DAX));
        let d = parse(DAX, "x").unwrap();
        assert_eq!(d.name, "tiny");
        assert_eq!(d.len(), 3);
        let s = |n: &str| d.stage_by_name(n).unwrap();
        // Data flow ID00000 -> ID00001 carries p.fits (3 MB); explicit ID00001 -> ID00002.
        assert_eq!(d.edge_data(s("ID00000"), s("ID00001")), 3.0);
        assert_eq!(d.stages[s("ID00002") as usize].parents.len(), 1);
        let t1 = &d.tasks[d.stages[s("ID00001") as usize].first as usize];
        assert_eq!((t1.duration, t1.demand.0[0]), (4.0, 2.0));
        // 1 MB read + 3 MB written over 10.5 s.
        let t0 = &d.tasks[0];
        assert!((t0.demand.0[2] - 4.0 / 10.5).abs() < 1e-12);
    }

    #[test]
    fn errors_name_the_job_or_position() {
        let e = parse(&DAX.replace(r#" runtime="1""#, ""), "x").unwrap_err().to_string();
        assert!(e.contains("job ID00002") && e.contains("no runtime"), "{e}");
        let e =
            parse(&DAX.replace(r#"<parent ref="ID00001"/>"#, r#"<parent ref="nope"/>"#), "x").unwrap_err().to_string();
        assert!(e.contains("unknown task 'nope'"), "{e}");
        let e = parse(&DAX.replace("</adag>", ""), "x").unwrap_err().to_string();
        assert!(e.contains("not well-formed XML"), "{e}");
        let e = parse(&DAX.replace(r#"id="ID00002""#, r#"id="ID00001""#), "x").unwrap_err().to_string();
        assert!(e.contains("duplicate task 'ID00001'"), "{e}");
        let e = parse(&DAX.replace(r#"runtime="10.5""#, r#"runtime="-3""#), "x").unwrap_err().to_string();
        assert!(e.contains("runtime") && e.contains("-3"), "{e}");
    }

    /// `depth` elements nested inside one `<job>` of an otherwise valid workflow (the reader
    /// ignores what a job holds besides `<profile>` and `<uses>`), `adag` and `job` included.
    fn nested(depth: usize) -> String {
        let inner = depth - 2;
        format!(
            "<adag>\n<job id=\"a\" runtime=\"1\">{}{}</job>\n</adag>",
            "<m y=\"/>\">".repeat(inner),
            "</m>".repeat(inner)
        )
    }

    #[test]
    fn nesting_is_refused_past_the_limit_before_parsing() {
        assert_eq!(parse(&nested(MAX_NESTING), "x").unwrap().len(), 1);
        let e = parse(&nested(MAX_NESTING + 1), "x").unwrap_err().to_string();
        // The 65th level is the 63rd <m> of line 2: after 24 bytes of <job ...>, 10 per <m ...>.
        assert_eq!(e, format!("line 2, column {}: XML elements nest deeper than 64 levels", 1 + 24 + 62 * 10));
        // 100,000 levels (700 KB): an error, not a stack overflow.
        let deep = format!("<adag>{}{}</adag>", "<a>".repeat(100_000), "</a>".repeat(100_000));
        let e = parse(&deep, "x").unwrap_err().to_string();
        assert!(e.starts_with("line 1, column 196: XML elements nest deeper than 64 levels"), "{e}");
        // Markup that opens no element is not counted: comments, CDATA, processing instructions,
        // quoted '>' and '/>' in attribute values.
        let skipped = format!(
            "<?xml version=\"1.0\"?><!-- {c} --><adag><job id=\"a\" name=\"x>y/>\" runtime=\"1\"><![CDATA[{c}]]><?pi {c}?></job></adag>",
            c = "<b>".repeat(1000)
        );
        assert_eq!(parse(&skipped, "x").unwrap().len(), 1);
    }

    #[test]
    fn positions_of_later_jobs_are_their_own_lines() {
        let mut text = String::from("<adag>\n");
        // 20,000 jobs (1.4 MB): asking roxmltree for each position took seconds.
        for i in 0..20_000 {
            text.push_str(&format!("<job id=\"j{i}\" runtime=\"1\">\n<uses file=\"f{i}\" link=\"output\"/>\n</job>\n"));
        }
        text.push_str("<job id=\"j5\" runtime=\"1\"/>\n<child ref=\"j1\">\n<parent ref=\"nope\"/>\n</child>\n</adag>");
        let e = parse(&text, "x").unwrap_err().to_string();
        // Job i starts on line 2 + 3 i; the duplicate j5 on line 60002.
        assert_eq!(e, "line 60002 (job j5): duplicate task 'j5' (first at line 17 (job j5))");
        let text = text.replace("<job id=\"j5\" runtime=\"1\"/>\n", "");
        let e = parse(&text, "x").unwrap_err().to_string();
        assert_eq!(e, "line 60003 <parent>: unknown task 'nope'");
        let text = text.replace("<uses file=\"f19999\" link=\"output\"/>", "<uses file=\"f19999\" link=\"both\"/>");
        let e = parse(&text, "x").unwrap_err().to_string();
        assert_eq!(e, "line 60000 (job j19999) <uses>: link 'both' is not input or output");
    }
}
