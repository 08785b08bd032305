//! Kasahara's Standard Task Graph (STG) format, as the STG set of Waseda University publishes it.
//!
//! ```text
//!    4            <- n, the number of real tasks
//!    0  0  0      <- task 0: the entry dummy (processing time 0, no predecessors)
//!    1  5  1  0   <- task id, processing time, number of predecessors, the predecessors
//!    2  3  1  0
//!    3  7  2  1 2
//!    4  2  1  3
//!    5  0  1  4   <- task n+1: the exit dummy
//! # anything after the n+2 records (and any line starting with '#') is a comment
//! ```
//!
//! The records are read as a stream of integers, so a long predecessor list may wrap onto the
//! next line. Tasks are named `t<id>`; each takes one processor (`cpu` 1, nothing else: run it on
//! `--machines P --capacity cpu=1` for P processors) for its processing time. The entry and exit
//! dummies are left out when their processing time is 0, which is what the format means by
//! them; their edges carry no work. STG's variant with communication costs is not read.

use super::task_graph::{demand, TaskGraph, TaskNode};
use crate::error::{Error, Result};
use crate::model::Dag;

/// True when the first token that is not a comment is an unsigned integer alone on its line.
pub fn looks_like(text: &str) -> bool {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'))
        .is_some_and(|l| !l.is_empty() && l.bytes().all(|b| b.is_ascii_digit()))
}

struct Tokens<'a> {
    lines: std::iter::Peekable<std::iter::Enumerate<std::str::Lines<'a>>>,
    current: Vec<&'a str>,
    line: usize,
}

impl<'a> Tokens<'a> {
    fn new(text: &'a str) -> Tokens<'a> {
        Tokens { lines: text.lines().enumerate().peekable(), current: Vec::new(), line: 0 }
    }

    /// The next integer and its line, or an error naming `what` was expected (formatted only
    /// for an error).
    fn next<W: std::fmt::Display>(&mut self, what: impl Fn() -> W) -> Result<(u64, usize)> {
        while self.current.is_empty() {
            match self.lines.next() {
                Some((i, l)) => {
                    let l = l.trim();
                    if l.starts_with('#') {
                        continue;
                    }
                    self.line = i + 1;
                    self.current = l.split_whitespace().rev().collect();
                }
                None => {
                    return Err(Error::Syntax {
                        line: self.line.max(1),
                        column: 1,
                        message: format!("the file ends where {} was expected (a truncated graph?)", what()),
                    })
                }
            }
        }
        let tok = self.current.pop().expect("non-empty");
        let v = tok.parse::<u64>().map_err(|_| Error::Syntax {
            line: self.line,
            column: 1,
            message: format!("{}: '{tok}' is not a non-negative integer", what()),
        })?;
        Ok((v, self.line))
    }
}

pub fn parse(text: &str, name: &str) -> Result<Dag> {
    let mut t = Tokens::new(text);
    let (n, _) = t.next(|| "the number of tasks")?;
    let total = n.checked_add(2).ok_or_else(|| Error::field("(task count)", format!("{n} is too many")))?;
    crate::limits::current().check_tasks(total, "STG task count")?;
    // Nothing is allocated for the declared counts (a ten-byte file can declare ten million
    // tasks, a record a million predecessors): vectors grow with the records actually read.
    let mut g = TaskGraph::default();
    // Per task id: its index in `g` (None for a dummy left out), its predecessors and its line.
    let mut index: Vec<Option<usize>> = Vec::new();
    let mut preds: Vec<(u64, Vec<u64>, usize)> = Vec::new();
    for k in 0..total {
        crate::deadline::poll()?;
        let (id, line) = t.next(|| "a task id")?;
        if id != k {
            return Err(Error::Syntax {
                line,
                column: 1,
                message: format!("task id {id} where {k} was expected (ids run 0..{} in order)", n + 1),
            });
        }
        let (time, _) = t.next(|| format!("task {id}'s processing time"))?;
        let (np, _) = t.next(|| format!("task {id}'s number of predecessors"))?;
        if np > k {
            return Err(Error::Syntax {
                line,
                column: 1,
                message: format!("task {id} has {np} predecessors, but only {k} tasks come before it"),
            });
        }
        let mut ps = Vec::new();
        for _ in 0..np {
            let (p, pl) = t.next(|| format!("a predecessor of task {id}"))?;
            if p >= id {
                return Err(Error::Syntax {
                    line: pl,
                    column: 1,
                    message: format!("task {id}'s predecessor {p} does not come before it"),
                });
            }
            ps.push(p);
        }
        let dummy = (k == 0 || k == n + 1) && time == 0;
        index.push(if dummy {
            None
        } else {
            Some(g.add(TaskNode {
                name: format!("t{id}"),
                group: format!("t{id}"),
                duration: time as f64,
                demand: demand(1.0, 0.0, 0.0),
                at: format!("line {line} (task {id})"),
            })?)
        });
        preds.push((id, ps, line));
    }
    for (id, ps, line) in preds {
        let Some(child) = index[id as usize] else { continue };
        for p in ps {
            if let Some(parent) = index[p as usize] {
                g.edge_at(parent, child, 0.0, || format!("line {line} (task {id})"))?;
            }
        }
    }
    g.build(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL: &str = "  4\n  0 0 0\n  1 5 1 0\n  2 3 1 0\n  3 7 2\n 1 2\n  4 2 1 3\n  5 0 1 4\n# a comment\n";

    #[test]
    fn reads_tasks_and_edges_without_the_dummies() {
        assert!(looks_like(SMALL));
        let d = parse(SMALL, "small").unwrap();
        assert_eq!(d.len(), 4);
        let t3 = d.stage_by_name("t3").unwrap() as usize;
        let mut ps: Vec<&str> = d.stages[t3].parents.iter().map(|p| d.stages[p.stage as usize].name.as_str()).collect();
        ps.sort();
        assert_eq!(ps, ["t1", "t2"]);
        assert_eq!(d.tasks[d.stages[t3].first as usize].duration, 7.0);
    }

    #[test]
    fn errors_name_the_line() {
        let e = parse("2\n0 0 0\n1 4 1 0\n2 3 1 5\n3 0 1 2\n", "x").unwrap_err().to_string();
        assert!(e.contains("line 4") && e.contains("predecessor 5"), "{e}");
        let e = parse("2\n0 0 0\n1 4 1 0\n", "x").unwrap_err().to_string();
        assert!(e.contains("ends where a task id"), "{e}");
        let e = parse("2\n0 0 0\n1 x 1 0\n", "x").unwrap_err().to_string();
        assert!(e.contains("line 3") && e.contains("'x'"), "{e}");
        let e = parse("2\n0 0 0\n2 4 1 0\n", "x").unwrap_err().to_string();
        assert!(e.contains("task id 2 where 1"), "{e}");
        assert!(!looks_like("{\"stages\": []}"));
    }
}
