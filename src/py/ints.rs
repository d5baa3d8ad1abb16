//! Python lists of token ids, built directly: `PyList_New` and one shared `int` object per id.
//!
//! Performance note: PyO3's generic `Vec<u32>` → `list` conversion allocates a fresh `int` per
//! id, and the list's owner frees it again: ~30 ns per id, a third of the time of a 200-byte
//! English document. Like CPython's small-int cache, but for every id an encoder has returned,
//! each encoder keeps one `int` per id (made on first use, 8 bytes of table per vocabulary entry
//! plus 32 bytes per id used) and a list item is that object with its count raised: a few ns.
//! Numbers in src/PERFORMANCE.md, "Per-call overhead and batch overlap".
//!
//! The table is plain pointers (`AtomicPtr`, a plain load on x86), not `PyOnceLock`s (16 bytes
//! with a state word read per id): half the table bytes to miss in cache, ~20% less list time
//! per id. Ints are made lazily, in first-use order, so the ids a corpus uses sit together;
//! making the lowest ids up front, or all of them, was slower (src/PERFORMANCE.md, "Sixth
//! round: the Python boundary").

use crate::vocab::Rank;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyList;
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::OnceLock;

/// Ids at or above this get a fresh `int` each time (a sparse id space must not cost a huge table).
const MAX_CACHED_ID: usize = 1 << 21;

pub struct IdInts {
    /// Table length: one past the largest id (capped at `MAX_CACHED_ID`).
    len: usize,
    /// The `int` of each id, null until first used; each non-null entry owns one reference.
    table: OnceLock<Box<[AtomicPtr<ffi::PyObject>]>>,
}

impl IdInts {
    /// A cache for ids up to `max_id`.
    pub fn new(max_id: Option<Rank>) -> Self {
        let len = max_id.map_or(0, |m| (m as usize).saturating_add(1).min(MAX_CACHED_ID));
        IdInts { len, table: OnceLock::new() }
    }

    fn table(&self) -> &[AtomicPtr<ffi::PyObject>] {
        self.table.get_or_init(|| (0..self.len).map(|_| AtomicPtr::new(std::ptr::null_mut())).collect())
    }

    /// A new reference to the `int` of `id` (null with a Python error set if out of memory).
    #[inline]
    fn int(_py: Python<'_>, table: &[AtomicPtr<ffi::PyObject>], id: Rank) -> *mut ffi::PyObject {
        match table.get(id as usize) {
            Some(slot) => {
                let mut p = slot.load(Ordering::Acquire);
                if p.is_null() {
                    p = Self::fill(slot, id);
                    if p.is_null() {
                        return p;
                    }
                }
                // SAFETY: `p` is a live object owned by the table; we hand out a new reference.
                unsafe { ffi::Py_INCREF(p) };
                p
            }
            // SAFETY: plain C API call with the GIL held (`py`).
            None => unsafe { ffi::PyLong_FromUnsignedLong(std::os::raw::c_ulong::from(id)) },
        }
    }

    /// Makes the `int` of `id` and stores it in its empty `slot` (a free-threaded build may race
    /// another thread here: the first store wins, the loser's object is released).
    #[cold]
    #[inline(never)]
    fn fill(slot: &AtomicPtr<ffi::PyObject>, id: Rank) -> *mut ffi::PyObject {
        // SAFETY: plain C API call; the caller holds the GIL (or is attached, free-threaded).
        let made = unsafe { ffi::PyLong_FromUnsignedLong(std::os::raw::c_ulong::from(id)) };
        if made.is_null() {
            return made;
        }
        match slot.compare_exchange(std::ptr::null_mut(), made, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => made,
            Err(theirs) => {
                // SAFETY: `made` is our own new reference, never shared.
                unsafe { ffi::Py_DECREF(made) };
                theirs
            }
        }
    }

    /// A list with `n` empty slots, to be filled by [`IdInts::set`] before Python sees it.
    pub fn empty_list(py: Python<'_>, n: usize) -> PyResult<Bound<'_, PyList>> {
        // SAFETY: PyList_New returns a new reference or null with an error set.
        unsafe {
            let p = ffi::PyList_New(n as ffi::Py_ssize_t);
            Ok(Bound::from_owned_ptr_or_err(py, p)?.cast_into_unchecked())
        }
    }

    /// Stores `item` (a new reference) in slot `i` of `list`, which must be empty (just made).
    pub fn set<'py>(list: &Bound<'py, PyList>, i: usize, item: Bound<'py, PyAny>) {
        debug_assert!(i < list.len());
        // SAFETY: `i` is in range and the slot is empty (null) in a list nobody else has seen;
        // SET_ITEM steals the reference `into_ptr` gives up.
        unsafe { ffi::PyList_SET_ITEM(list.as_ptr(), i as ffi::Py_ssize_t, item.into_ptr()) };
    }

    /// `ids` as a Python list of ints.
    pub fn list<'py>(&self, py: Python<'py>, ids: &[Rank]) -> PyResult<Bound<'py, PyList>> {
        let list = Self::empty_list(py, ids.len())?;
        let table = self.table();
        for (i, &id) in ids.iter().enumerate() {
            let item = Self::int(py, table, id);
            if item.is_null() {
                return Err(PyErr::fetch(py)); // the list's empty slots are fine to free
            }
            // SAFETY: as in `set`; `item` is a new reference that SET_ITEM steals.
            unsafe { ffi::PyList_SET_ITEM(list.as_ptr(), i as ffi::Py_ssize_t, item) };
        }
        Ok(list)
    }
}

impl Drop for IdInts {
    fn drop(&mut self) {
        let Some(table) = self.table.take() else { return };
        // An encoder is dropped by Python (attached); at interpreter shutdown the ints are left.
        Python::try_attach(|_py| {
            for slot in table.iter() {
                let p = slot.load(Ordering::Acquire);
                if !p.is_null() {
                    // SAFETY: the table owns this reference; attached to the interpreter.
                    unsafe { ffi::Py_DECREF(p) };
                }
            }
        });
    }
}

/// The cyclic garbage collector paused while a batch's lists are made, restored when dropped.
///
/// Every new list counts towards the collector's next run, and each run walks every young list
/// and its items: a batch of 7,000 English documents paid ~10 collections for its own lists. Paused,
/// the lists are walked by one collection after the pause. Only for code that runs with the GIL
/// held and runs no Python code (no other thread can see the collector paused); a collector that
/// was already disabled stays so.
pub struct GcPause<'py> {
    _py: Python<'py>,
    was_enabled: bool,
}

impl<'py> GcPause<'py> {
    pub fn new(py: Python<'py>) -> Self {
        // SAFETY: plain C API call with the GIL held (`py`); returns the previous state.
        let was_enabled = unsafe { ffi::PyGC_Disable() } != 0;
        GcPause { _py: py, was_enabled }
    }
}

impl Drop for GcPause<'_> {
    fn drop(&mut self) {
        if self.was_enabled {
            // SAFETY: as in `new`; the GIL is still held (the guard borrows `py`).
            unsafe { ffi::PyGC_Enable() };
        }
    }
}

