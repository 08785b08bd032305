//! The DOT language's grammar (graphviz.org/doc/info/lang.html), read into a small syntax tree.
//!
//! Written here rather than taken from graphviz-rust because that crate's grammar rejects two
//! forms of valid DOT that task graphs use: anonymous subgraphs (`a -> {b c}`) and a subgraph
//! starting an edge statement (`{a b} -> c`). Everything of the grammar is read: `strict`,
//! keywords in any case, IDs (names, numerals, double-quoted strings with `\"` escapes and `+`
//! concatenation, HTML strings), ports (ignored), attribute lists, `ID = ID` statements,
//! subgraphs with or without the keyword, and the three comment forms (`//`, `/* */`, and `#`
//! lines). Errors carry the line and column. Nesting is bounded (`MAX_NESTING`) so that hostile
//! input cannot exhaust the stack.

use crate::error::{Error, Result};

pub const MAX_NESTING: usize = crate::limits::MAX_NESTING;

pub type AttrList = Vec<(String, String)>;

#[derive(Debug)]
pub enum Vertex {
    Node(String),
    Sub(Vec<Stmt>),
}

#[derive(Debug)]
pub enum Stmt {
    Node(String, AttrList),
    /// An edge statement: its vertices, attributes and the line it starts on.
    Edge(Vec<Vertex>, AttrList, usize),
    NodeDefaults(AttrList),
    EdgeDefaults(AttrList),
    /// `graph [...]` or `ID = ID`: graph attributes, which carry nothing for scheduling.
    GraphAttrs,
    Sub(Vec<Stmt>),
}

#[derive(Debug)]
pub struct DotGraph {
    pub directed: bool,
    pub name: Option<String>,
    pub stmts: Vec<Stmt>,
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    /// A name or numeral (keywords are names, told apart by the parser).
    Name(String),
    /// A quoted or HTML string (never a keyword).
    Str(String),
    Punct(char),
    Arrow,
    Line,
    End,
}

struct Lexer<'a> {
    chars: std::iter::Peekable<std::str::Chars<'a>>,
    line: usize,
    col: usize,
    at_line_start: bool,
}

impl<'a> Lexer<'a> {
    fn bump(&mut self) -> Option<char> {
        let c = self.chars.next()?;
        if c == '\n' {
            self.line += 1;
            self.col = 1;
            self.at_line_start = true;
        } else {
            self.col += 1;
            if !c.is_whitespace() {
                self.at_line_start = false;
            }
        }
        Some(c)
    }

    fn err(&self, line: usize, col: usize, message: String) -> Error {
        Error::Syntax { line, column: col, message }
    }

    /// The next token and where it starts.
    fn next(&mut self) -> Result<(Tok, usize, usize)> {
        loop {
            let (line, col) = (self.line, self.col);
            let start_of_line = self.at_line_start;
            let Some(&c) = self.chars.peek() else { return Ok((Tok::End, line, col)) };
            if c.is_whitespace() {
                self.bump();
                continue;
            }
            if c == '#' && start_of_line {
                while self.chars.peek().is_some_and(|&d| d != '\n') {
                    self.bump();
                }
                continue;
            }
            if c == '/' {
                self.bump();
                match self.chars.peek() {
                    Some('/') => {
                        while self.chars.peek().is_some_and(|&d| d != '\n') {
                            self.bump();
                        }
                        continue;
                    }
                    Some('*') => {
                        self.bump();
                        let mut prev = ' ';
                        loop {
                            match self.bump() {
                                Some('/') if prev == '*' => break,
                                Some(d) => prev = d,
                                None => return Err(self.err(line, col, "a /* comment is never closed".into())),
                            }
                        }
                        continue;
                    }
                    _ => return Err(self.err(line, col, "'/' outside a comment".into())),
                }
            }
            if c == '"' {
                self.bump();
                let mut s = String::new();
                loop {
                    match self.bump() {
                        Some('\\') => match self.bump() {
                            Some('"') => s.push('"'),
                            Some('\n') => {} // a line continuation
                            Some(d) => {
                                s.push('\\');
                                s.push(d);
                            }
                            None => break,
                        },
                        Some('"') => return Ok((Tok::Str(s), line, col)),
                        Some(d) => s.push(d),
                        None => break,
                    }
                }
                return Err(self.err(line, col, "a quoted string is never closed".into()));
            }
            if c == '<' {
                self.bump();
                let (mut depth, mut s) = (1usize, String::new());
                while depth > 0 {
                    match self.bump() {
                        Some('<') => {
                            depth += 1;
                            s.push('<');
                        }
                        Some('>') => {
                            depth -= 1;
                            if depth > 0 {
                                s.push('>');
                            }
                        }
                        Some(d) => s.push(d),
                        None => return Err(self.err(line, col, "an HTML string <...> is never closed".into())),
                    }
                }
                return Ok((Tok::Str(s), line, col));
            }
            if c == '-' {
                self.bump();
                match self.chars.peek() {
                    Some('>') => {
                        self.bump();
                        return Ok((Tok::Arrow, line, col));
                    }
                    Some('-') => {
                        self.bump();
                        return Ok((Tok::Line, line, col));
                    }
                    Some(d) if d.is_ascii_digit() || *d == '.' => {
                        let n = self.word();
                        return Ok((Tok::Name(format!("-{n}")), line, col));
                    }
                    _ => return Err(self.err(line, col, "'-' is neither an edge operator nor a number".into())),
                }
            }
            if c.is_alphanumeric() || c == '_' || c == '.' || !c.is_ascii() {
                return Ok((Tok::Name(self.word()), line, col));
            }
            if "{}[];,=:+".contains(c) {
                self.bump();
                return Ok((Tok::Punct(c), line, col));
            }
            return Err(self.err(line, col, format!("unexpected character '{c}'")));
        }
    }

    fn word(&mut self) -> String {
        let mut s = String::new();
        while let Some(&d) = self.chars.peek() {
            if d.is_alphanumeric() || d == '_' || d == '.' || !d.is_ascii() {
                s.push(d);
                self.bump();
            } else {
                break;
            }
        }
        s
    }
}

struct Parser<'a> {
    lex: Lexer<'a>,
    tok: Tok,
    line: usize,
    col: usize,
    depth: usize,
    /// A `digraph` (edges `->`), else a `graph` (edges `--`).
    directed: bool,
}

fn is_kw(t: &Tok, kw: &str) -> bool {
    matches!(t, Tok::Name(n) if n.eq_ignore_ascii_case(kw))
}

impl<'a> Parser<'a> {
    fn advance(&mut self) -> Result<()> {
        let (t, l, c) = self.lex.next()?;
        self.tok = t;
        self.line = l;
        self.col = c;
        Ok(())
    }

    fn fail<T>(&self, expected: &str) -> Result<T> {
        let found = match &self.tok {
            Tok::Name(n) => format!("'{n}'"),
            Tok::Str(s) => format!("\"{s}\""),
            Tok::Punct(c) => format!("'{c}'"),
            Tok::Arrow => "'->'".into(),
            Tok::Line => "'--'".into(),
            Tok::End => "the end of the file".into(),
        };
        Err(Error::Syntax { line: self.line, column: self.col, message: format!("expected {expected}, found {found}") })
    }

    fn eat(&mut self, c: char) -> Result<bool> {
        if self.tok == Tok::Punct(c) {
            self.advance()?;
            return Ok(true);
        }
        Ok(false)
    }

    fn expect(&mut self, c: char) -> Result<()> {
        if !self.eat(c)? {
            return self.fail(&format!("'{c}'"));
        }
        Ok(())
    }

    /// An ID: a name, numeral or string (strings joined by `+`).
    fn id(&mut self) -> Result<Option<String>> {
        match self.tok.clone() {
            Tok::Name(n) => {
                self.advance()?;
                Ok(Some(n))
            }
            Tok::Str(mut s) => {
                self.advance()?;
                while self.tok == Tok::Punct('+') {
                    self.advance()?;
                    match self.tok.clone() {
                        Tok::Str(t) => {
                            s.push_str(&t);
                            self.advance()?;
                        }
                        _ => return self.fail("a quoted string after '+'"),
                    }
                }
                Ok(Some(s))
            }
            _ => Ok(None),
        }
    }

    fn need_id(&mut self, what: &str) -> Result<String> {
        match self.id()? {
            Some(s) => Ok(s),
            None => self.fail(what),
        }
    }

    fn attr_lists(&mut self) -> Result<AttrList> {
        let mut out = Vec::new();
        while self.eat('[')? {
            while !self.eat(']')? {
                let k = self.need_id("an attribute name or ']'")?;
                self.expect('=')?;
                let v = self.need_id("an attribute value")?;
                out.push((k, v));
                if !self.eat(',')? {
                    self.eat(';')?;
                }
            }
        }
        Ok(out)
    }

    /// A node id with its optional port (`a:p:n`), the port dropped.
    fn node_id(&mut self, first: String) -> Result<String> {
        while self.eat(':')? {
            self.need_id("a port or compass point")?;
        }
        Ok(first)
    }

    fn subgraph_body(&mut self) -> Result<Vec<Stmt>> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(Error::Syntax {
                line: self.line,
                column: self.col,
                message: format!("subgraphs nest deeper than {MAX_NESTING} levels"),
            });
        }
        self.expect('{')?;
        let stmts = self.stmts()?;
        self.expect('}')?;
        self.depth -= 1;
        Ok(stmts)
    }

    /// At `subgraph [ID] {` or `{`: the subgraph's statements.
    fn subgraph(&mut self) -> Result<Vec<Stmt>> {
        if is_kw(&self.tok, "subgraph") {
            self.advance()?;
            if self.tok != Tok::Punct('{') {
                self.need_id("a subgraph name or '{'")?;
            }
        }
        self.subgraph_body()
    }

    /// At an edge operator: moves past it, unless it is the other kind of graph's (Graphviz
    /// refuses `a -- b` in a digraph and `a -> b` in a graph).
    fn edge_op(&mut self) -> Result<()> {
        match (&self.tok, self.directed) {
            (Tok::Arrow, true) | (Tok::Line, false) => self.advance(),
            (Tok::Line, true) => Err(Error::Syntax {
                line: self.line,
                column: self.col,
                message: "'--' is an undirected edge; a digraph's edges are written '->'".into(),
            }),
            _ => Err(Error::Syntax {
                line: self.line,
                column: self.col,
                message: "'->' is a directed edge; an undirected graph's edges are written '--'".into(),
            }),
        }
    }

    fn starts_subgraph(&self) -> bool {
        self.tok == Tok::Punct('{') || is_kw(&self.tok, "subgraph")
    }

    fn stmts(&mut self) -> Result<Vec<Stmt>> {
        let mut out = Vec::new();
        loop {
            if self.tok == Tok::Punct('}') || self.tok == Tok::End {
                return Ok(out);
            }
            let stmt = if is_kw(&self.tok, "node") || is_kw(&self.tok, "edge") || is_kw(&self.tok, "graph") {
                let which = match &self.tok {
                    Tok::Name(n) => n.to_ascii_lowercase(),
                    _ => unreachable!(),
                };
                self.advance()?;
                let attrs = self.attr_lists()?;
                match which.as_str() {
                    "node" => Stmt::NodeDefaults(attrs),
                    "edge" => Stmt::EdgeDefaults(attrs),
                    _ => Stmt::GraphAttrs,
                }
            } else {
                let line = self.line;
                let first = if self.starts_subgraph() {
                    Vertex::Sub(self.subgraph()?)
                } else {
                    let Some(id) = self.id()? else { return self.fail("a statement") };
                    if self.eat('=')? {
                        self.need_id("a value after '='")?;
                        self.eat(';')?;
                        out.push(Stmt::GraphAttrs);
                        continue;
                    }
                    Vertex::Node(self.node_id(id)?)
                };
                if matches!(self.tok, Tok::Arrow | Tok::Line) {
                    let mut vs = vec![first];
                    while matches!(self.tok, Tok::Arrow | Tok::Line) {
                        self.edge_op()?;
                        let v = if self.starts_subgraph() {
                            Vertex::Sub(self.subgraph()?)
                        } else {
                            let id = self.need_id("a node or subgraph after the edge operator")?;
                            Vertex::Node(self.node_id(id)?)
                        };
                        vs.push(v);
                    }
                    Stmt::Edge(vs, self.attr_lists()?, line)
                } else {
                    match first {
                        Vertex::Node(n) => Stmt::Node(n, self.attr_lists()?),
                        Vertex::Sub(s) => Stmt::Sub(s),
                    }
                }
            };
            out.push(stmt);
            self.eat(';')?;
        }
    }
}

/// Parses one graph (text after its closing brace, other than comments, is an error).
pub fn parse(text: &str) -> Result<DotGraph> {
    let lex = Lexer { chars: text.chars().peekable(), line: 1, col: 1, at_line_start: true };
    let mut p = Parser { lex, tok: Tok::End, line: 1, col: 1, depth: 0, directed: true };
    p.advance()?;
    if is_kw(&p.tok, "strict") {
        p.advance()?;
    }
    let directed = if is_kw(&p.tok, "digraph") {
        true
    } else if is_kw(&p.tok, "graph") {
        false
    } else {
        return p.fail("'digraph' or 'graph'");
    };
    p.directed = directed;
    p.advance()?;
    let name = if p.tok == Tok::Punct('{') { None } else { Some(p.need_id("a graph name or '{'")?) };
    let stmts = p.subgraph_body()?;
    if p.tok != Tok::End {
        return p.fail("the end of the file after the graph");
    }
    Ok(DotGraph { directed, name, stmts })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_grammar_s_forms() {
        let g = parse(
            "/* c */ strict DiGraph \"g\" + \"x\" {\n# line comment\n rankdir=LR; graph [a=1]\n node [shape=box]\n\
             a:p:n -> {b; c} -> subgraph s { d } [w=\"1\", x=2; y=3]\n {e f} -> g\n h [label=<<b>x</b>>]\n -1.5 -> .5\n}\n// end",
        )
        .unwrap();
        assert!(g.directed);
        assert_eq!(g.name.as_deref(), Some("gx"));
        let edges: Vec<&Stmt> = g.stmts.iter().filter(|s| matches!(s, Stmt::Edge(..))).collect();
        assert_eq!(edges.len(), 3);
        match edges[0] {
            Stmt::Edge(vs, attrs, _) => {
                assert_eq!(vs.len(), 3);
                assert_eq!(attrs.len(), 3);
            }
            _ => unreachable!(),
        }
        assert!(g.stmts.iter().any(|s| matches!(s, Stmt::Node(n, a) if n == "h" && a[0].1 == "<b>x</b>")));
    }

    #[test]
    fn errors_have_positions() {
        let e = parse("digraph {\n  a -> ;\n}").unwrap_err().to_string();
        assert!(e.contains("line 2, column 8") && e.contains("after the edge operator"), "{e}");
        let e = parse("digraph { a [x=\"1] }").unwrap_err().to_string();
        assert!(e.contains("never closed"), "{e}");
        let e = parse("digraph { a } b").unwrap_err().to_string();
        assert!(e.contains("end of the file"), "{e}");
        let e = parse("tree { }").unwrap_err().to_string();
        assert!(e.contains("'digraph' or 'graph'"), "{e}");
        let deep = format!("digraph {{ {} }}", "{ ".repeat(100) + &"}".repeat(100));
        assert!(parse(&deep).unwrap_err().to_string().contains("nest deeper"));
    }
}
