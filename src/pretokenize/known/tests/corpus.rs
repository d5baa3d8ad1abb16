//! Real text: every corpus file under the shared data directory, whole and line by line, and the
//! Python standard library's sources. Read in place; skipped with a message when absent.
//!
//! `BPEKIT_TEST_DATA` names the data directory (default `$CARGO_MANIFEST_DIR/../shared/data`);
//! `BPEKIT_TEST_PYLIB` a directory of `.py` files (default pyenv's Python 3.11 library).

use super::{compare, splitters, Scratch};
use rayon::prelude::*;
use std::path::{Path, PathBuf};

fn data_dir() -> PathBuf {
    std::env::var_os("BPEKIT_TEST_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data"))
}

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            files_under(&path, out);
        } else {
            out.push(path);
        }
    }
}

fn full_parity() -> bool {
    std::env::var("BPEKIT_FULL_PARITY").is_ok_and(|v| v == "1")
}

/// Compares the patterns on each file, whole and line by line; returns the chars compared.
fn check_files(files: &[PathBuf], all_spellings: bool) -> usize {
    let splitters = splitters(all_spellings);
    let results: Vec<(usize, Vec<String>)> = files
        .par_iter()
        .map(|path| {
            let Ok(text) = std::fs::read_to_string(path) else {
                eprintln!("skipping {} (not UTF-8)", path.display());
                return (0, Vec::new());
            };
            let mut scratch = Scratch::default();
            let mut failures = Vec::new();
            let chars = text.chars().count();
            let mut compared = 0;
            for (_, known, regex) in &splitters {
                if let Err(e) = compare(*known, regex, &text, &mut scratch) {
                    failures.push(format!("{}: {e}", path.display()));
                }
                // Per line: every line of small files; every 8th line of large ones unless
                // BPEKIT_FULL_PARITY=1 (the whole-file comparison above always covers everything).
                let stride = if text.len() > 200_000 && !full_parity() { 8 } else { 1 };
                for (n, line) in text.split_inclusive('\n').enumerate().step_by(stride) {
                    if let Err(e) = compare(*known, regex, line, &mut scratch) {
                        failures.push(format!("{} line {}: {e}", path.display(), n + 1));
                    }
                }
                compared += chars + chars / stride;
            }
            (compared, failures)
        })
        .collect();
    let failures: Vec<&String> = results.iter().flat_map(|r| &r.1).collect();
    assert!(
        failures.is_empty(),
        "{} mismatches, first: {:#?}",
        failures.len(),
        &failures[..failures.len().min(5)]
    );
    results.iter().map(|r| r.0).sum()
}

#[test]
fn corpora_agree() {
    let dir = data_dir().join("corpora");
    let mut files = Vec::new();
    files_under(&dir, &mut files);
    if files.is_empty() {
        eprintln!("skipping: no corpora under {} (set BPEKIT_TEST_DATA)", dir.display());
        return;
    }
    files.sort();
    let compared = check_files(&files, false);
    eprintln!(
        "corpora: {} files, {compared} chars compared (one pattern per family, whole and per line)",
        files.len()
    );
}

#[test]
fn python_sources_agree() {
    let dir = std::env::var_os("BPEKIT_TEST_PYLIB")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/root/.pyenv/versions/3.11.7/lib/python3.11"));
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "py"))
                .collect()
        })
        .unwrap_or_default();
    if files.is_empty() {
        eprintln!("skipping: no .py files in {} (set BPEKIT_TEST_PYLIB)", dir.display());
        return;
    }
    files.sort();
    let compared = check_files(&files, true);
    eprintln!("python sources: {} files, {compared} chars compared", files.len());
}
