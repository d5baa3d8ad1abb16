//! DeepSeek-V3's last split stage (the `tokenizer.json` of DeepSeek-V3 and R1; llama.cpp's
//! `deepseek-v3`, `hunyuan-dense`, `hy_v4` and `joyai-llm`), which runs on what `\p{N}{1,3}` and
//! the CJK and kana runs leave: six alternatives, tried in order.
//!
//! 1. ``[!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+``
//! 2. `[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+`
//! 3. ` ?[\p{P}\p{S}]+[\r\n]*`
//! 4. `\s*[\r\n]+`, 5. `\s+(?!\S)`, 6. `\s+`
//!
//! Unlike the other families' patterns this one does not match everywhere: a char that is no
//! letter, mark, punctuation, symbol or whitespace (a digit, a control or format char, an
//! unassigned code point) and does not prefix a letter run starts no match. As a Hugging Face
//! `Split(Isolated)` stage the text between matches is a piece too, so [`super::Isolating`]
//! joins such chars into gap pieces.

use super::unicode::{Tables, L, M, PS, S};
use super::{char_at, run_any, run_bytes, swar, ws_newline_first, ws_run};

/// The end of the match that starts at `i`, or `None` when no alternative matches there.
/// With `SPARK`, Spark 2.5's third stage (llama.cpp's `spark2_5`): 3 is ` ?[\p{P}\p{S}]+`
/// (no line ends after it), then `[\r\n]` (one line end), `\s+(?!\S)` and `\s+` (a whitespace
/// run that starts with another space takes the line ends in it).
#[inline(always)]
pub(super) fn match_end<const SPARK: bool>(t: &Tables, b: &[u8], i: usize) -> Option<usize> {
    let x = b[i];
    let (f, n) = char_at(t, b, i);
    // 1. The ASCII chars of `[\p{P}\p{S}]` are exactly the class's 32 punctuation chars.
    if x < 0x80 && f & PS != 0 && b.get(i + 1).is_some_and(u8::is_ascii_alphabetic) {
        let mut e = swar::ascii_run(b, i + 1, L);
        while e < b.len() && b[e].is_ascii_alphabetic() {
            e += 1;
        }
        return Some(e);
    }
    // 2 from `i`: a letter cannot be the prefix, and a mark as the prefix ends where the run
    // from the mark itself ends.
    if f & (L | M) != 0 {
        return Some(run_any(t, b, i + n, L | M));
    }
    let (g, m) = if i + n < b.len() { char_at(t, b, i + n) } else { (0, 0) };
    // 2 with a prefix: any char but `\r`, `\n`, letters, punctuation and symbols.
    if g & (L | M) != 0 && f & PS == 0 && x != b'\r' && x != b'\n' {
        return Some(run_any(t, b, i + n + m, L | M));
    }
    // 3, with or without the space.
    let trail: &[u8] = if SPARK { b"" } else { b"\r\n" };
    if f & PS != 0 {
        return Some(run_bytes(b, run_any(t, b, i + n, PS), trail));
    }
    if x == b' ' && g & PS != 0 {
        return Some(run_bytes(b, run_any(t, b, i + 1 + m, PS), trail));
    }
    // 4 to 6.
    if f & S == 0 {
        return None;
    }
    if !SPARK {
        return Some(ws_newline_first(t, b, i));
    }
    if x == b'\r' || x == b'\n' {
        return Some(i + 1);
    }
    Some(ws_run(t, b, i).lookahead_end(i, b.len()))
}
