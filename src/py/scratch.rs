//! Buffers kept per thread for single calls: the ids of an `encode`, and the ids and bytes of a
//! `decode`.
//!
//! A single call used to fill a `Vec` of its own, copy it into the list, array, `str` or `bytes`
//! it returns, and free it. In a process whose heap other code has cut up (a long-running
//! service, a harness that holds other libraries' outputs) that `malloc` and `free` cost a
//! quarter of a per-document `encode_to_numpy` pass; the calls now take this thread's spare
//! buffer instead (src/PERFORMANCE.md, "Twenty-seventh round").

use crate::vocab::Rank;
use std::cell::Cell;
use std::ops::{Deref, DerefMut};
use std::thread::LocalKey;

/// A buffer that has grown past this many bytes is freed rather than kept for the next call (a
/// long numpy output takes its buffer over without a copy: `encoder::ids_array`).
const KEEP_BYTES: usize = 1 << 18;

thread_local! {
    static IDS: Cell<Vec<Rank>> = const { Cell::new(Vec::new()) };
    static BYTES: Cell<Vec<u8>> = const { Cell::new(Vec::new()) };
}

/// This thread's spare buffer, empty, for the length of one call. Taken out of its slot (a call
/// nested in another on the same thread finds the slot empty and grows a new buffer), and put
/// back when dropped unless it grew past [`KEEP_BYTES`].
pub(super) struct Spare<T: 'static> {
    buf: Vec<T>,
    home: &'static LocalKey<Cell<Vec<T>>>,
}

impl<T: 'static> Spare<T> {
    fn take(home: &'static LocalKey<Cell<Vec<T>>>) -> Self {
        let mut buf = home.try_with(Cell::take).unwrap_or_default();
        buf.clear();
        Spare { buf, home }
    }
}

impl<T: 'static> Deref for Spare<T> {
    type Target = Vec<T>;
    fn deref(&self) -> &Vec<T> {
        &self.buf
    }
}

impl<T: 'static> DerefMut for Spare<T> {
    fn deref_mut(&mut self) -> &mut Vec<T> {
        &mut self.buf
    }
}

impl<T: 'static> AsMut<Vec<T>> for Spare<T> {
    fn as_mut(&mut self) -> &mut Vec<T> {
        &mut self.buf
    }
}

impl<T: 'static> Drop for Spare<T> {
    fn drop(&mut self) {
        if self.buf.capacity() * size_of::<T>() <= KEEP_BYTES {
            let buf = std::mem::take(&mut self.buf);
            // (fails only while the thread is being torn down: the buffer is then freed)
            let _ = self.home.try_with(|slot| slot.set(buf));
        }
    }
}

/// This thread's spare buffer of ids.
pub(super) fn ids() -> Spare<Rank> {
    Spare::take(&IDS)
}

/// This thread's spare buffer of bytes.
pub(super) fn bytes() -> Spare<u8> {
    Spare::take(&BYTES)
}
