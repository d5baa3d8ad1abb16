//! A batch cut into chunks by bytes and run on `threads` threads of which the calling thread is
//! one: it encodes chunks like the pool workers and, between its own chunks, hands every finished
//! chunk to the batch's Python-side step (list output: making the lists) with the GIL held.
//!
//! Performance note: before, a 2-thread batch ran two pool workers that encoded while the calling
//! thread, a third busy thread on two cores, made the lists of finished chunks. Here a pool of
//! `threads - 1` workers and the caller take chunks from one counter, so encoding plus conversion
//! is spread over exactly `threads` threads, and whichever thread is free takes the next chunk.
//! The chunks shrink towards the end and a text much longer than the room left in a chunk starts
//! the next one, so the thread that finishes first waits at most one small chunk for the other. Numbers in
//! src/PERFORMANCE.md, "Batches, fifth round" and "Batches, seventh round".

use crate::parallel;
use pyo3::prelude::*;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;

/// Each chunk holds about 1/(`SHARE` x threads) of the bytes not yet cut (guided scheduling: big
/// chunks first, then smaller and smaller ones, so the threads finish together).
const SHARE: usize = 4;
/// The smallest size a chunk is cut to (a chunk closed before a long text, or the last, may be
/// smaller).
pub(super) const MIN_CHUNK_BYTES: usize = 16 << 10;

/// Whether a batch of texts of `lens` bytes (`total` in all) runs on one thread, as one chunk.
pub(super) fn one_chunk(lens: &[usize], total: usize, threads: usize) -> bool {
    threads == 1 || total < 2 * MIN_CHUNK_BYTES || lens.len() < 2
}

/// A run of texts (`start..end` of the batch) and their bytes.
pub(super) struct Chunk {
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) bytes: usize,
}

/// The chunks of texts of `lens` bytes for `threads` threads (at least one text each), largest first: each
/// about 1/(`SHARE` x threads) of the bytes left and at least [`MIN_CHUNK_BYTES`], except that a
/// text which would take a chunk further past that size than the chunk is short of it starts the
/// next chunk (so a chunk cut before a long text, like the last, may be smaller). Chunks are taken
/// in order, so a huge text starts first instead of last (a 230 kB module among 1 MB of code left
/// one thread alone with it at the end), and the last chunks are small: the thread that finishes
/// first waits at most one small chunk for the other. (The English corpus ends with a 130 kB
/// text: glued to the texts before it, it kept every chunk's size up and the smallest was 73 kB.)
pub(super) fn chunks(lens: &[usize], total: usize, threads: usize) -> Vec<Chunk> {
    let mut out = Vec::new();
    let target = |left: usize| (left / (SHARE * threads)).max(MIN_CHUNK_BYTES);
    let (mut start, mut bytes, mut left) = (0, 0, total);
    for (i, &len) in lens.iter().enumerate() {
        let (goal, with) = (target(left), bytes + len);
        if bytes > 0 && with > goal && with - goal > goal - bytes {
            out.push(Chunk { start, end: i, bytes });
            (start, left, bytes) = (i, left - bytes, 0);
        }
        bytes += len;
        if bytes >= target(left) {
            out.push(Chunk { start, end: i + 1, bytes });
            (start, left, bytes) = (i + 1, left - bytes, 0);
        }
    }
    if start < lens.len() {
        out.push(Chunk { start, end: lens.len(), bytes });
    }
    out.sort_by_key(|c| std::cmp::Reverse(c.bytes));
    out
}

/// Runs `work(chunk)` for every chunk on `threads` threads (>= 2), the calling thread one of them
/// (it runs `work` with the GIL released), and hands each result, in the order they finish, to
/// `done(chunk, result)` on the calling thread with the GIL held (a panic in `work` is its
/// `Err`). The first error `done` returns stops the batch (chunks not started are skipped) and is
/// returned once every started chunk has finished.
pub(super) fn run_shared<T, W, D>(py: Python<'_>, threads: usize, chunks: &[Chunk], work: W, mut done: D) -> PyResult<()>
where
    T: Send,
    W: Fn(&Chunk) -> T + Sync,
    D: FnMut(&Chunk, std::thread::Result<T>) -> PyResult<()>,
{
    let n = chunks.len();
    let next = AtomicUsize::new(0);
    let take = || Some(next.fetch_add(1, Ordering::Relaxed)).filter(|&i| i < n);
    let run = |i: usize| catch_unwind(AssertUnwindSafe(|| work(&chunks[i])));
    let mut result = Ok(());
    let mut finish = |i: usize, r: std::thread::Result<T>| {
        if result.is_ok() {
            result = done(&chunks[i], r);
            if result.is_err() {
                next.store(n, Ordering::Relaxed); // no new chunks (a late `fetch_add` stays >= n)
            }
        }
    };
    let (tx, rx) = mpsc::channel();
    parallel::pool(threads - 1).in_place_scope(|s| {
        for _ in 1..threads {
            let (tx, take, run) = (tx.clone(), &take, &run);
            s.spawn(move |_| {
                while let Some(i) = take() {
                    if tx.send((i, run(i))).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        while let Some(i) = take() {
            let r = py.detach(|| run(i));
            finish(i, r);
            while let Ok((j, r)) = rx.try_recv() {
                finish(j, r);
            }
        }
        let mut rx = rx;
        loop {
            let msg = match rx.try_recv() {
                Ok(m) => m,
                Err(mpsc::TryRecvError::Disconnected) => break,
                Err(mpsc::TryRecvError::Empty) => {
                    let (m, back) = py.detach(move || (rx.recv(), rx));
                    rx = back;
                    match m {
                        Ok(m) => m,
                        Err(_) => break,
                    }
                }
            };
            finish(msg.0, msg.1);
        }
    });
    result
}
