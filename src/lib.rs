//! bpekit's Rust core: the hot loops of byte-level BPE, with no Python in sight.
//!
//! The pipeline is the module tree: [`pretokenize`] splits text into pieces, [`merge`] turns each
//! piece into token ids, [`special`] finds special tokens, [`core`] composes them into an encoder
//! and decoder, and [`parallel`] runs batches on a thread pool. Everything PyO3 lives in `py/`.

pub mod aligned;
pub mod alloc;
pub mod core;
pub mod error;
#[cfg(any(test, feature = "fuzzing"))]
pub mod fuzzing;
pub mod merge;
pub mod normalizer;
pub mod offsets;
pub mod pairbpe;
pub mod parallel;
pub mod precompiled;
pub mod prefetch;
pub mod pretokenize;
pub mod rankfile;
pub mod sentencepiece;
pub mod special;
pub mod surrogates;
pub mod hf_unicode;
pub mod train;
pub mod utf8;
pub mod vocab;

#[cfg(feature = "python")]
mod py;

/// The Python extension's allocator: the system one, large blocks advised for huge pages.
#[cfg(feature = "python")]
#[global_allocator]
static GLOBAL: alloc::HugePageAllocator = alloc::HugePageAllocator;

pub use crate::core::CoreBpe;
pub use crate::error::{Error, Result};
pub use crate::vocab::Rank;
