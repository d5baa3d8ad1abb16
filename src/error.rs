//! The core's error type. Every fallible core function returns [`Result`]; the Python binding
//! maps each variant to a typed `bpekit` exception.

use std::fmt;

pub type Result<T> = std::result::Result<T, Error>;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// The pre-tokenizer pattern does not compile.
    Pattern(String),
    /// The regex engine gave up on an input (e.g. its backtracking limit).
    Regex(String),
    /// The vocabulary is inconsistent (duplicate ranks, empty tokens, ...).
    Vocab(String),
    /// A byte sequence has no token (the vocabulary lacks a single byte that the text contains).
    NoToken(Vec<u8>),
    /// A token id that is neither an ordinary nor a special token.
    InvalidToken(u32),
    /// A malformed input file (rank file line, ...).
    Format(String),
    /// An input too long for a merge's 32-bit positions (a piece of 4 GiB or more).
    TooLong(usize),
    /// Internal: a piece callback ended a walk over the pieces early ([`crate::CoreBpe::truncate`]
    /// once it has its ids); the walk's caller turns it back into success, so it never reaches
    /// Python.
    Stopped,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Pattern(m) => write!(f, "invalid pre-tokenizer pattern: {m}"),
            Error::Regex(m) => write!(f, "regex engine failed on the input: {m}"),
            Error::Vocab(m) => write!(f, "invalid vocabulary: {m}"),
            Error::NoToken(b) => write!(
                f,
                "the vocabulary has no token for the bytes {:?}: every byte that can occur in the text needs a token",
                String::from_utf8_lossy(b)
            ),
            Error::InvalidToken(t) => write!(f, "Invalid token for decoding: {t}"),
            Error::Format(m) => write!(f, "{m}"),
            Error::TooLong(n) => write!(f, "a piece of {n} bytes: pieces of 4 GiB or more cannot be merged"),
            Error::Stopped => write!(f, "a walk over the pieces was stopped early"),
        }
    }
}

impl std::error::Error for Error {}
