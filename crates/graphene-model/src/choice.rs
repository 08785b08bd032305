//! Enums a user picks by name: a command-line value, a request field, a Python keyword.
//!
//! [`named_enum!`](crate::named_enum) declares such an enum with the name of every value; the
//! enum then lists its values ([`Choice::CHOICES`]), parses its names ([`std::str::FromStr`]) and
//! prints them ([`std::fmt::Display`]). Each front end builds its own parser from that list (the
//! CLI its clap values, with each value's doc comment as its help), so the library needs none.

/// One value of a [`Choice`]: the value, its name, and the lines of its doc comment.
#[derive(Debug)]
pub struct Named<T: 'static> {
    pub value: T,
    pub name: &'static str,
    pub doc: &'static [&'static str],
}

impl<T> Named<T> {
    /// The one-line help of the value: the first paragraph of its doc comment, lines joined with
    /// spaces, without a final period (as clap renders doc comments); None without a comment.
    pub fn help(&self) -> Option<String> {
        let lines: Vec<&str> = self.doc.iter().map(|l| l.strip_prefix(' ').unwrap_or(l)).collect();
        let start = lines.iter().position(|l| !l.trim().is_empty())?;
        let para: Vec<&str> = lines[start..].iter().take_while(|l| !l.trim().is_empty()).map(|l| l.trim()).collect();
        let mut help = para.join(" ");
        if help.ends_with('.') && !help.ends_with("..") {
            help.pop();
        }
        Some(help)
    }
}

/// An enum whose values a user names.
pub trait Choice: Copy + PartialEq + Sized + 'static {
    /// Every value with its name, in the order a listing shows them.
    const CHOICES: &'static [Named<Self>];

    /// The name of a value.
    fn choice_name(self) -> &'static str {
        Self::CHOICES.iter().find(|c| c.value == self).map(|c| c.name).unwrap_or("?")
    }

    /// The value with this name (exact, case-sensitive).
    fn from_name(name: &str) -> Option<Self> {
        Self::CHOICES.iter().find(|c| c.name == name).map(|c| c.value)
    }

    /// Every name, in order.
    fn names() -> Vec<&'static str> {
        Self::CHOICES.iter().map(|c| c.name).collect()
    }
}

/// Declares an enum of unit variants, each with the name a user gives it
/// (`Variant = "name"`), and implements [`Choice`], `FromStr` (unknown names are an
/// [`Error::Usage`](crate::error::Error::Usage) listing the known ones) and `Display` (the name).
#[macro_export]
macro_rules! named_enum {
    (
        $(#[$meta:meta])*
        $vis:vis enum $ty:ident {
            $( $(#[doc = $doc:literal])* $variant:ident = $name:literal ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        $vis enum $ty {
            $( $(#[doc = $doc])* $variant ),*
        }

        impl $crate::choice::Choice for $ty {
            const CHOICES: &'static [$crate::choice::Named<Self>] = &[
                $( $crate::choice::Named { value: $ty::$variant, name: $name, doc: &[$($doc),*] } ),*
            ];
        }

        impl ::std::str::FromStr for $ty {
            type Err = $crate::error::Error;
            fn from_str(s: &str) -> ::std::result::Result<Self, Self::Err> {
                <$ty as $crate::choice::Choice>::from_name(s).ok_or_else(|| {
                    $crate::error::Error::Usage(format!(
                        "invalid value '{}' (known: {})",
                        s,
                        <$ty as $crate::choice::Choice>::names().join(", ")
                    ))
                })
            }
        }

        impl ::std::fmt::Display for $ty {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(<$ty as $crate::choice::Choice>::choice_name(*self))
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::Choice;

    crate::named_enum! {
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        enum Shape {
            /// A round one.
            Round = "round",
            /// A square one: four sides,
            ///   all equal.
            ///
            /// Not shown in the help.
            Square = "square",
            Other = "other-shape",
        }
    }

    #[test]
    fn names_parse_print_and_help() {
        assert_eq!(Shape::names(), ["round", "square", "other-shape"]);
        assert_eq!("other-shape".parse::<Shape>().unwrap(), Shape::Other);
        assert_eq!(Shape::Square.to_string(), "square");
        let e = "Round".parse::<Shape>().unwrap_err().to_string();
        assert_eq!(e, "invalid value 'Round' (known: round, square, other-shape)");
        let help: Vec<Option<String>> = Shape::CHOICES.iter().map(|c| c.help()).collect();
        assert_eq!(
            help,
            [Some("A round one".to_string()), Some("A square one: four sides, all equal".to_string()), None]
        );
    }
}
