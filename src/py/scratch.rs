//! A buffer of ids kept per thread for single encode calls of short texts.
//!
//! A single call used to encode into a `Vec` of its own, copy the ids into the list or array it
//! returns, and free the `Vec`. In a process whose heap other code has cut up (a long-running
//! service, a harness that holds other libraries' outputs) that `malloc` and `free` cost a
//! quarter of a per-document `encode_to_numpy` pass; short texts now encode into this thread's
//! buffer instead (src/PERFORMANCE.md, "Twenty-seventh round").

use crate::vocab::Rank;
use pyo3::PyResult;
use std::cell::RefCell;

/// Texts under this many bytes use the buffer. Ids are at most one per byte, so its capacity
/// stays under twice this many ids (4 bytes each); longer texts get a `Vec` of their own, which a
/// long numpy output then keeps without a copy.
pub(super) const SCRATCH_BELOW: usize = 1 << 15;

thread_local! {
    static IDS: RefCell<Vec<Rank>> = const { RefCell::new(Vec::new()) };
}

/// `finish` applied to the ids that `encode` appends to this thread's buffer (emptied first), for
/// a text of `len` bytes; `None`, with nothing run, when the text is not short or the buffer is
/// already in use on this thread.
pub(super) fn with_ids<R>(
    len: usize,
    encode: impl FnOnce(&mut Vec<Rank>) -> PyResult<()>,
    finish: impl FnOnce(&[Rank]) -> PyResult<R>,
) -> Option<PyResult<R>> {
    if len >= SCRATCH_BELOW {
        return None;
    }
    IDS.with(|cell| {
        let mut buf = cell.try_borrow_mut().ok()?;
        buf.clear();
        Some(encode(&mut buf).and_then(|()| finish(&buf)))
    })
}
