//! BPE training: learn merges from a corpus, in two phases that never hold the corpus in memory.
//!
//! 1. [`count`]: pre-tokenize the text (in parallel, chunk by chunk) and count the distinct
//!    pre-tokens ("words") with 64-bit counts. Special tokens are cut out first and never counted.
//!    [`stream`] finds where a long text may be cut into chunks without changing its pieces;
//!    [`packed`] turns short words into integer keys for the workers' maps.
//! 2. [`merge`]: learn merges over the deduplicated word table ([`table`]), updating pair counts
//!    incrementally (pair -> words index, a max-heap with lazy invalidation, [`queue`]); the corpus
//!    is never recounted. [`apply`] rewrites the words of one merge, in parallel when they are many;
//!    [`table_build`] builds the table and index on several threads; [`lists`] holds the index's
//!    word lists in one pool.
//!
//! The tie rule makes the result a function of the counts alone: the pair with the highest count
//! wins; among equal counts, the smallest `(left token bytes, right token bytes)` in byte order.
//! So the same input gives the same merges whatever the thread count or the word order, and the
//! textbook trainer (count all pairs, merge the best, repeat) gives exactly the same list.
//!
//! A second mode, [`first_seen`], has minbpe's rule instead (ties to the pair seen first in the
//! text, a new id for every merge), for `bpekit.minbpe`; it needs the words in text order
//! ([`learn_ordered`]).

pub mod apply;
pub mod count;
pub mod first_seen;
pub mod lists;
pub mod merge;
pub mod packed;
pub mod queue;
pub mod stream;
pub mod table;
pub mod table_build;
pub mod words;

pub use count::{CountStats, Counter};
pub use merge::{learn, learn_ordered, learn_owned, Learned, MergeOptions, Progress, Stopped};
pub use words::WordCounts;
