//! Batch parallelism: rayon pools, one per requested thread count, built once and reused.
//!
//! Performance note: a rayon batch beats a Python `ThreadPoolExecutor` over the same core
//! (no per-item GIL round trip); building a pool costs ~50 µs, so pools are cached.

use rayon::prelude::*;
use rayon::{ThreadPool, ThreadPoolBuilder};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

fn pools() -> &'static Mutex<HashMap<usize, Arc<ThreadPool>>> {
    static POOLS: OnceLock<Mutex<HashMap<usize, Arc<ThreadPool>>>> = OnceLock::new();
    POOLS.get_or_init(Default::default)
}

/// The number of threads `n` asks for: `0` = one per core, and never more than one per core
/// (the cores are looked up once per process: `available_parallelism` reads cgroup files, ~60 µs
/// and ~20 system calls each time, which the trainer once paid at every merge; rayon too sizes
/// its pools once). The work is CPU-bound, so threads past the cores only wait; and each count
/// asked for keeps a pool of its own: `num_threads=3000` started 3,000 spinning threads on two
/// cores and a batch did not finish in a minute (session 29).
pub fn thread_count(n: usize) -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    let cores = *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |p| p.get()));
    if n == 0 {
        cores
    } else {
        n.min(cores)
    }
}

/// The shared pool of `n` threads (`0` = one per core).
pub fn pool(n: usize) -> Arc<ThreadPool> {
    let n = thread_count(n);
    let mut map = pools().lock().unwrap_or_else(|e| e.into_inner());
    map.entry(n)
        .or_insert_with(|| {
            Arc::new(
                ThreadPoolBuilder::new()
                    .num_threads(n)
                    .thread_name(|i| format!("bpekit-{i}"))
                    .build()
                    .expect("failed to start a thread pool"),
            )
        })
        .clone()
}

/// Maps `f` over `items` on `threads` threads, in order. One thread runs inline, with no pool.
pub fn map<T: Sync, R: Send>(items: &[T], threads: usize, f: impl Fn(&T) -> R + Sync + Send) -> Vec<R> {
    if threads == 1 || items.len() <= 1 {
        return items.iter().map(f).collect();
    }
    pool(threads).install(|| items.par_iter().map(f).collect())
}
