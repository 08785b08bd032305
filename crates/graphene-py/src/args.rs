//! Python arguments into Rust values, with errors that name the argument. Every user value
//! crosses here: an integer out of its type's range, a value of the wrong type, None where a
//! value is needed or a string that is not valid Unicode raises `UsageError` ("seed: -1 is out
//! of range ..."), never Python's OverflowError, TypeError or UnicodeError, and an integer is
//! never cut to fit.

use std::path::PathBuf;

use pyo3::exceptions::PyOverflowError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyByteArray, PyBytes, PyDict, PyFloat, PyList, PyString, PyTuple};

use graphene::request::Source;

use crate::{to_py, usage};

/// A Python value as a Rust one; `what` names the argument in errors.
pub(crate) trait Arg: Sized {
    fn arg(what: &str, v: &Bound<'_, PyAny>) -> PyResult<Self>;
}

/// The name of a value's type, for messages ("expected a string, not int").
pub(crate) fn type_name(v: &Bound<'_, PyAny>) -> String {
    if v.is_none() {
        return "None".into();
    }
    v.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "object".into())
}

/// A value as a message shows it, shortened when long (a 10**100 stays readable).
fn shown(v: &Bound<'_, PyAny>) -> String {
    let s = v.str().map(|s| s.to_string()).unwrap_or_else(|_| "the value".into());
    if s.chars().count() > 40 {
        let head: String = s.chars().take(20).collect();
        format!("{head}... ({} digits)", s.chars().filter(|c| c.is_ascii_digit()).count())
    } else {
        s
    }
}

/// An integer of any width: Python ints and what has `__index__` (numpy's), but not bools and
/// not floats (a 2.5 is refused, not cut to 2).
fn integer<T: for<'a> FromPyObject<'a>>(what: &str, v: &Bound<'_, PyAny>, range: (&str, String)) -> PyResult<T> {
    if v.is_instance_of::<PyBool>() || v.is_instance_of::<PyFloat>() || !v.hasattr("__index__").unwrap_or(false) {
        return Err(usage(format!("{what}: expected an integer, not {}", type_name(v))));
    }
    v.extract::<T>().map_err(|e| {
        if e.is_instance_of::<PyOverflowError>(v.py()) {
            usage(format!("{what}: {} is out of range (expected an integer from {} to {})", shown(v), range.0, range.1))
        } else {
            usage(format!("{what}: expected an integer, not {}", type_name(v)))
        }
    })
}

macro_rules! int_arg {
    ($($t:ty),*) => {$(
        impl Arg for $t {
            fn arg(what: &str, v: &Bound<'_, PyAny>) -> PyResult<Self> {
                integer(what, v, (&<$t>::MIN.to_string(), <$t>::MAX.to_string()))
            }
        }
    )*};
}
int_arg!(u32, u64, usize);

impl Arg for f64 {
    fn arg(what: &str, v: &Bound<'_, PyAny>) -> PyResult<Self> {
        // Ints and floats, numpy's too (they have __float__ or __index__); not bools or strings.
        let numeric = v.hasattr("__float__").unwrap_or(false) || v.hasattr("__index__").unwrap_or(false);
        if v.is_instance_of::<PyBool>() || v.is_instance_of::<PyString>() || !numeric {
            return Err(usage(format!("{what}: expected a number, not {}", type_name(v))));
        }
        v.extract::<f64>().map_err(|e| {
            if e.is_instance_of::<PyOverflowError>(v.py()) {
                usage(format!("{what}: {} is out of range (expected a number a 64-bit float holds)", shown(v)))
            } else {
                usage(format!("{what}: expected a number, not {}", type_name(v)))
            }
        })
    }
}

impl Arg for bool {
    fn arg(what: &str, v: &Bound<'_, PyAny>) -> PyResult<Self> {
        v.extract::<bool>().map_err(|_| usage(format!("{what}: expected True or False, not {}", type_name(v))))
    }
}

impl Arg for String {
    fn arg(what: &str, v: &Bound<'_, PyAny>) -> PyResult<Self> {
        let s =
            v.downcast::<PyString>().map_err(|_| usage(format!("{what}: expected a string, not {}", type_name(v))))?;
        // A lone surrogate (from a surrogateescape'd name, say) has no UTF-8 form.
        s.to_cow()
            .map(|c| c.into_owned())
            .map_err(|_| usage(format!("{what}: not valid Unicode text (it holds a lone surrogate)")))
    }
}

impl Arg for PathBuf {
    fn arg(what: &str, v: &Bound<'_, PyAny>) -> PyResult<Self> {
        if v.is_instance_of::<PyBytes>()
            || !(v.is_instance_of::<PyString>() || v.hasattr("__fspath__").unwrap_or(false))
        {
            return Err(usage(format!("{what}: expected a path (str or os.PathLike), not {}", type_name(v))));
        }
        v.extract::<PathBuf>().map_err(|_| usage(format!("{what}: not a usable path")))
    }
}

/// The items of a list or tuple; None for anything else (a string is one value, not a list of
/// characters).
fn sequence<'py>(v: &Bound<'py, PyAny>) -> Option<Vec<Bound<'py, PyAny>>> {
    if let Ok(l) = v.downcast::<PyList>() {
        Some(l.iter().collect())
    } else if let Ok(t) = v.downcast::<PyTuple>() {
        Some(t.iter().collect())
    } else {
        None
    }
}

/// A list or tuple of values (a string is one value, not a list of characters).
impl<T: Arg> Arg for Vec<T> {
    fn arg(what: &str, v: &Bound<'_, PyAny>) -> PyResult<Self> {
        let Some(items) = sequence(v) else {
            return Err(usage(format!("{what}: expected a list, not {}", type_name(v))));
        };
        items.iter().enumerate().map(|(i, x)| T::arg(&format!("{what}[{i}]"), x)).collect()
    }
}

/// A value that may be None (then absent).
pub(crate) fn opt<T: Arg>(what: &str, v: Option<&Bound<'_, PyAny>>) -> PyResult<Option<T>> {
    match v {
        None => Ok(None),
        Some(v) if v.is_none() => Ok(None),
        Some(v) => T::arg(what, v).map(Some),
    }
}

/// An input named `what` in errors ("dag", "dags[1]", ...): a path (str or os.PathLike); bytes,
/// decoded as a file is (UTF-8, a byte-order mark dropped); or {"text": ..., "name": ...} for
/// text in memory. Text without a name is named `name` (what a file's stem would give).
pub(crate) fn source(what: &str, name: &str, obj: &Bound<'_, PyAny>) -> PyResult<Source> {
    let bytes = |b: &Bound<'_, PyAny>, name: String| -> PyResult<Source> {
        match Source::from_bytes(b.extract::<Vec<u8>>()?, what).map_err(to_py)? {
            Source::Text { text, .. } => Ok(Source::Text { text, name }),
            path => Ok(path),
        }
    };
    if let Ok(d) = obj.downcast::<PyDict>() {
        let given: Option<String> = opt(&format!("{what}['name']"), d.get_item("name")?.as_ref())?;
        let name = given.unwrap_or_else(|| name.to_string());
        let text = d.get_item("text")?.ok_or_else(|| usage(format!("{what}: a text source needs 'text'")))?;
        if text.is_instance_of::<PyBytes>() || text.is_instance_of::<PyByteArray>() {
            return bytes(&text, name);
        }
        return Ok(Source::Text { text: String::arg(&format!("{what}['text']"), &text)?, name });
    }
    if obj.is_instance_of::<PyBytes>() || obj.is_instance_of::<PyByteArray>() {
        return bytes(obj, name.to_string());
    }
    if obj.is_instance_of::<PyString>() || obj.hasattr("__fspath__").unwrap_or(false) {
        return Ok(Source::Path(PathBuf::arg(what, obj)?));
    }
    Err(usage(format!("{what}: expected a path, bytes or a text source, not {}", type_name(obj))))
}

/// A list of inputs, each named `what[i]` in errors and `name` as text.
pub(crate) fn sources(what: &str, name: &str, obj: &Bound<'_, PyAny>) -> PyResult<Vec<Source>> {
    let Some(items) = sequence(obj) else {
        return Err(usage(format!("{what}: expected a list of inputs, not {}", type_name(obj))));
    };
    items.iter().enumerate().map(|(i, x)| source(&format!("{what}[{i}]"), name, x)).collect()
}
