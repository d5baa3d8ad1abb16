//! From fancy-regex's parse tree to a [`Program`]: a pattern whose alternatives are sequences of
//! one-char classes with greedy counts, literal alternations, and one trailing lookahead of a
//! char class or `$`. Anything else (nested repetition, backreferences, lookbehind, lazy counts,
//! a pattern that can match the empty string) is refused, and stays on the regex engine.

use super::classes::{self, Ranges, Table};
use super::{Alt, Ascii, Atom, Look, Program};
use fancy_regex::{Assertion, Expr, LookAround};

/// Why a pattern is not compiled (for tests and the Python helper).
pub type Refusal = &'static str;

/// At most this many atoms in one alternative (the matcher recurses once per atom).
const MAX_ATOMS: usize = 64;

#[derive(Default)]
struct Builder {
    classes: Vec<Ranges>,
}

impl Builder {
    /// The bit of `class`, shared by equal classes.
    fn bit(&mut self, class: Ranges) -> Result<u32, Refusal> {
        if let Some(k) = self.classes.iter().position(|c| *c == class) {
            return Ok(1 << k);
        }
        if self.classes.len() == 32 {
            return Err("more than 32 distinct character classes");
        }
        self.classes.push(class);
        Ok(1 << (self.classes.len() - 1))
    }

    fn ranges(&self, bits: u32) -> Ranges {
        let sets: Vec<&Ranges> = (0..self.classes.len()).filter(|k| bits >> k & 1 == 1).map(|k| &self.classes[k]).collect();
        classes::union(&sets)
    }
}

/// The class of an expression that matches exactly one char.
fn one_char(e: &Expr) -> Option<Ranges> {
    match e {
        Expr::Delegate { inner, casei } => classes::of_expression(inner, *casei),
        Expr::Literal { val, casei } => {
            let mut chars = val.chars();
            match (chars.next(), chars.next()) {
                (Some(c), None) => classes::of_char(c, *casei),
                _ => None,
            }
        }
        Expr::Any { newline, crlf } => Some(classes::any(*newline, *crlf)),
        Expr::Group(inner) => one_char(inner),
        // `(?=[A])[B]` (llama.cpp's adapted GPT-4o patterns): a one-char lookahead, then one char
        // that must be in both classes; `(?![A])[B]`: in B and not in A
        Expr::Concat(items) => match items.as_slice() {
            [single] => one_char(single),
            [Expr::LookAround(look, kind), rest] => {
                let (look, own) = (one_char(look)?, one_char(rest)?);
                match kind {
                    LookAround::LookAhead => Some(classes::intersection(&look, &own)),
                    LookAround::LookAheadNeg => Some(classes::intersection(&classes::complement(&look), &own)),
                    _ => None,
                }
            }
            _ => None,
        },
        // `(A|B|C)`: every branch one char, so the first that matches takes the same char
        Expr::Alt(branches) => {
            let sets = branches.iter().map(one_char).collect::<Option<Vec<Ranges>>>()?;
            Some(classes::union(&sets.iter().collect::<Vec<_>>()))
        }
        _ => None,
    }
}

/// The chars of a literal sequence (`'s`, `'[sS]`, `(?i:'ll)`), each as a class.
fn literal_chars(e: &Expr, out: &mut Vec<Ranges>) -> bool {
    match e {
        Expr::Literal { val, casei } => val.chars().all(|c| classes::of_char(c, *casei).map(|r| out.push(r)).is_some()),
        Expr::Concat(items) => items.iter().all(|i| literal_chars(i, out)),
        Expr::Group(inner) => literal_chars(inner, out),
        other => one_char(other).map(|r| out.push(r)).is_some(),
    }
}

/// An alternation of literal sequences, as a list of branches.
fn literal_branches(e: &Expr) -> Option<Vec<Vec<Ranges>>> {
    match e {
        Expr::Group(inner) => literal_branches(inner),
        Expr::Alt(branches) => {
            let mut out = Vec::new();
            for b in branches {
                match b {
                    Expr::Alt(_) | Expr::Group(_) if literal_branches(b).is_some() => out.extend(literal_branches(b)?),
                    _ => {
                        let mut chars = Vec::new();
                        if !literal_chars(b, &mut chars) || chars.is_empty() {
                            return None;
                        }
                        out.push(chars);
                    }
                }
            }
            Some(out)
        }
        _ => None,
    }
}

/// The top-level alternatives, in order (`(?:a|b)|c` is `a|b|c`).
fn alternatives<'e>(e: &'e Expr, out: &mut Vec<&'e Expr>) {
    match e {
        Expr::Alt(v) => v.iter().for_each(|x| alternatives(x, out)),
        Expr::Group(inner) => alternatives(inner, out),
        other => out.push(other),
    }
}

/// The items of a sequence, with groups opened (a capture changes no match).
fn items<'e>(e: &'e Expr, out: &mut Vec<&'e Expr>) {
    match e {
        Expr::Concat(v) => v.iter().for_each(|x| items(x, out)),
        Expr::Group(inner) => items(inner, out),
        other => out.push(other),
    }
}

fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// One alternative as atoms and a lookahead.
fn alternative(b: &mut Builder, e: &Expr) -> Result<Alt, Refusal> {
    let mut list = Vec::new();
    items(e, &mut list);
    let mut atoms = Vec::new();
    let mut look = Look::None;
    for (i, item) in list.iter().enumerate() {
        let last = i + 1 == list.len();
        let run = |b: &mut Builder, class: Ranges, lo: usize, hi: usize, possessive: bool| -> Result<Atom, Refusal> {
            let ascii = Ascii::of(&class);
            Ok(Atom::Run { bit: b.bit(class)?, lo: count(lo), hi: count(hi), backtrack: !possessive, ascii })
        };
        match item {
            Expr::Literal { val, casei } if val.chars().count() > 1 => {
                for c in val.chars() {
                    let class = classes::of_char(c, *casei).ok_or("a literal char regex-syntax does not take")?;
                    atoms.push(run(b, class, 1, 1, false)?);
                }
            }
            Expr::Repeat { child, lo, hi, greedy } => {
                if !greedy {
                    return Err("a lazy repetition");
                }
                if let Some(class) = one_char(child) {
                    atoms.push(run(b, class, *lo, *hi, false)?);
                } else if let (0, 1, Some(branches)) = (*lo, *hi, literal_branches(child)) {
                    atoms.push(lits(b, branches, true)?);
                } else {
                    return Err("a repetition of more than one char");
                }
            }
            Expr::AtomicGroup(inner) => match &**inner {
                Expr::Repeat { child, lo, hi, greedy: true } => {
                    let class = one_char(child).ok_or("a possessive repetition of more than one char")?;
                    atoms.push(run(b, class, *lo, *hi, true)?);
                }
                _ => return Err("an atomic group"),
            },
            Expr::LookAround(inner, kind) if last => {
                let class = one_char(inner).ok_or("a lookaround of more than one char")?;
                let bit = b.bit(class)?;
                look = match kind {
                    LookAround::LookAhead => Look::Ahead(bit),
                    LookAround::LookAheadNeg => Look::NotAhead(bit),
                    _ => return Err("a lookbehind"),
                };
            }
            Expr::Assertion(Assertion::EndText) if last => look = Look::EndText,
            Expr::Assertion(Assertion::EndLine { crlf: false }) if last => look = Look::EndLine,
            Expr::Alt(_) | Expr::Group(_) => {
                let branches = literal_branches(item).ok_or("an alternation that is not of literals")?;
                atoms.push(lits(b, branches, false)?);
            }
            other => {
                let class = one_char(other).ok_or("an assertion, lookaround or group the compiler does not take")?;
                atoms.push(run(b, class, 1, 1, false)?);
            }
        }
    }
    if atoms.len() > MAX_ATOMS {
        return Err("an alternative of more than 64 items");
    }
    let mut first = 0;
    for a in &atoms {
        first |= a.first_bits();
        if !a.optional() {
            break;
        }
    }
    if atoms.iter().all(Atom::optional) {
        return Err("an alternative that matches the empty string");
    }
    Ok(Alt { atoms, look, first })
}

fn lits(b: &mut Builder, branches: Vec<Vec<Ranges>>, optional: bool) -> Result<Atom, Refusal> {
    let mut out = Vec::with_capacity(branches.len());
    for branch in branches {
        out.push(branch.into_iter().map(|c| b.bit(c)).collect::<Result<Vec<u32>, _>>()?);
    }
    Ok(Atom::Lits { branches: out, optional })
}

/// Whether the atoms after `i` (and the lookahead) could accept, as the first char they look at,
/// a char of `class`; if not, a run of `class` at `i` never needs to give a char back (the rest
/// would start on a char of the run). `None` when the rest can match the empty string without
/// looking at any char: then the longest run always succeeds first.
fn rest_accepts(b: &Builder, atoms: &[Atom], look: Look) -> Option<Ranges> {
    let mut bits = 0;
    for a in atoms {
        bits |= a.first_bits();
        if !a.optional() {
            return Some(b.ranges(bits));
        }
    }
    let mut accepts = b.ranges(bits);
    match look {
        Look::None => return None,
        Look::Ahead(bit) => accepts = classes::union(&[&accepts, &b.ranges(bit)]),
        Look::NotAhead(bit) => accepts = classes::union(&[&accepts, &classes::complement(&b.ranges(bit))]),
        Look::EndText => {}
        Look::EndLine => accepts = classes::union(&[&accepts, &vec![(10, 10)]]),
    }
    Some(accepts)
}

/// Compiles `pattern`, or says why not.
pub fn compile(pattern: &str) -> Result<Program, Refusal> {
    let tree = Expr::parse_tree(pattern).map_err(|_| "fancy-regex does not parse it")?;
    if tree.contains_subroutines || !tree.backrefs.is_empty() {
        return Err("backreferences or subroutines");
    }
    let mut b = Builder::default();
    let mut top = Vec::new();
    alternatives(&tree.expr, &mut top);
    let mut alts = Vec::with_capacity(top.len());
    for e in top {
        alts.push(alternative(&mut b, e)?);
    }
    // Only a run that may have to give chars back backtracks (the budget in `Program::find`
    // bounds what an attempt may cost where runs overlap).
    for alt in &mut alts {
        let look = alt.look;
        for i in 0..alt.atoms.len() {
            let accepts = rest_accepts(&b, &alt.atoms[i + 1..], look);
            if let Atom::Run { bit, lo, hi, backtrack, .. } = &mut alt.atoms[i] {
                let own = b.ranges(*bit);
                *backtrack = *backtrack && lo != hi && accepts.is_some_and(|a| classes::intersect(&own, &a));
            }
        }
    }
    let first = alts.iter().fold(0, |m, a| m | a.first);
    Ok(Program { table: Table::new(&b.classes), alts, first })
}
