"""The markdown tables of a ``benches/speed.py`` run, from its JSON results, and the update of the
generated block in ``docs/benchmarks.md`` (between the two marker comments)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.timing import median_mbps, paired_ratio

BEGIN = "<!-- benches/speed.py: begin generated tables -->"
END = "<!-- benches/speed.py: end generated tables -->"


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    return [_row(header), "|" + "---|" * len(header), *(_row(r) for r in rows)]


def _short(status: str) -> str:
    """``CRASH (exit -6: message)`` -> ``CRASH (exit -6)`` (the message is in the JSON)."""
    head = status.split(":")[0]
    return head + ")" if head.count("(") > head.count(")") else head


def _differs(res: dict[str, Any], enc: str, corpus: str, lib: str, mode: str) -> bool:
    return any(m["lib"] == lib and m["mode"] == mode and m.get("corpus") == corpus
               for m in res["encodings"][enc]["mismatches"])


def _speed_cell(res: dict[str, Any], enc: str, corpus: str, key: str, base: str) -> str:
    c = res["encodings"][enc]["corpora"][corpus]
    secs = c["seconds"].get(key)
    if not secs:
        return "—"
    lib, mode = key.split("|")
    cell = f"{median_mbps(c['mb'], secs):.1f} ({paired_ratio(secs, c['seconds'][base]):.2f}x)"
    return cell + (" DIFFERS" if _differs(res, enc, corpus, lib, mode) else "")


def speed_tables(res: dict[str, Any]) -> list[str]:
    libs = res["libs"]
    lines: list[str] = []
    specs = [
        ("Single thread, per-document calls, list output", "list", "tiktoken|list", "x tiktoken list"),
        ("Single thread, per-document calls, numpy output", "numpy", "tiktoken|list", "x tiktoken list"),
        ("2-thread batch, list output", "batch", None, "x the same library's 1-thread list"),
        ("2-thread batch, flat numpy output", "batch_numpy", None, "x the same library's 1-thread numpy"),
    ]
    for title, mode, base, what in specs:
        cols = [lib for lib in libs if any(f"{lib}|{mode}" in c["seconds"]
                                           for e in res["encodings"].values() for c in e["corpora"].values())]
        if not cols:
            continue
        rows = []
        for enc, e in res["encodings"].items():
            for corpus, c in e["corpora"].items():
                cells = []
                for lib in cols:
                    b = base
                    if b is None:
                        one = "numpy" if mode == "batch_numpy" and f"{lib}|numpy" in c["seconds"] else "list"
                        b = f"{lib}|{one}"
                    cells.append(_speed_cell(res, enc, corpus, f"{lib}|{mode}", b))
                rows.append([enc, f"{corpus} ({c['mb']:.2f})", *cells])
        lines += [f"**{title}**: MB/s of input ({what}, median of per-round ratios)", ""]
        lines += _table(["encoding", "corpus (MB)", *cols], rows) + [""]
    return lines


def worst_table(res: dict[str, Any]) -> list[str]:
    libs = [lib for lib in res["libs"] if any(lib in e.get("worst", {}) for e in res["encodings"].values())]
    if not libs:
        return []
    rows = []
    for enc, e in res["encodings"].items():
        w = e.get("worst", {})
        cases = [c for c in next(iter(w.values()), {}) if c != "english"] if w else []
        for case in ["english", *cases]:
            cells = []
            for lib in libs:
                r = w.get(lib, {}).get(case)
                eng = w.get(lib, {}).get("english", {})
                if r is None:
                    cells.append("—")
                elif "status" in r:
                    cells.append(_short(r["status"]))
                else:
                    ratio = f" ({r['seconds'] / eng['seconds']:.2f}x)" if case != "english" and "seconds" in eng else ""
                    cells.append(f"{r['seconds']:.3f}{ratio}" + (" DIFFERS" if r.get("differs") else ""))
            rows.append([enc, case, *cells])
    n = res["settings"]["worst_bytes"]
    title = (f"**Worst case**: seconds for one `encode` call on {n:,} bytes (x the same library's "
             f"{n:,} bytes of English), fresh process, {res['settings']['worst_timeout']:.0f} s timeout")
    return [title, "", *_table(["encoding", "input", *libs], rows), ""]


def load_table(res: dict[str, Any]) -> list[str]:
    encs = list(res["encodings"])
    libs = [lib for lib in res["libs"] if any(lib in e.get("load", {}) for e in res["encodings"].values())]
    if not libs:
        return []
    rows = []
    for lib in libs:
        cells = []
        for enc in encs:
            ld = res["encodings"][enc].get("load", {}).get(lib)
            tk = res["encodings"][enc].get("load", {}).get("tiktoken")
            if isinstance(ld, dict):
                total = ld["import_s"] + ld["load_s"]
                ratio = f" ({total / (tk['import_s'] + tk['load_s']):.2f}x)" if isinstance(tk, dict) else ""
                cells.append(f"{total:.3f}{ratio}, load {ld['load_s']:.3f}")
            else:
                cells.append(_short(str(ld or "—")))
        for enc in encs:
            rss = res["encodings"][enc].get("rss", {}).get(lib)
            cells.append(f"{rss:.0f}" if isinstance(rss, float) else _short(str(rss or "—")))
        rows.append([lib, *cells])
    base = [f"{res['encodings'][e].get('rss', {}).get('none', float('nan')):.0f}" for e in encs]
    rows.append(["(interpreter + corpora only)", *["" for _ in encs], *base])
    title = (f"**Load and memory**: seconds to import the library and load the encoding from the local "
             f"rank file in a fresh process (median of {res['settings']['load_runs']}; x tiktoken; then the load "
             "alone, import excluded), and peak RSS (MB) of a fresh process that loads it and encodes every "
             "corpus document by document")
    return [title, "", *_table(["library", *(f"load {e} (s)" for e in encs), *(f"peak RSS {e} (MB)" for e in encs)], rows), ""]


def notes(res: dict[str, Any]) -> list[str]:
    out = [f"- {lib} {v}" for lib, v in res["versions"].items()]
    out += [f"- {lib}: not measured: {why}" for lib, why in res["unavailable"].items()]
    out += [f"- {lib}: {note}" for lib, note in res["notes"].items()]
    for enc, e in res["encodings"].items():
        out += [f"- {enc}, {m['corpus']}: {m['text']}" for m in e["mismatches"]]
    return ["Libraries:", "", *out, ""]


def markdown(res: dict[str, Any]) -> str:
    s = res["settings"]
    passes = "each timed pass after an untimed one" if s.get("warm") else "cold passes (no untimed pass first)"
    head = [f"`{s['command']}` — {s['date']}, {s['rounds']} round(s), {passes}, load average {s['load']}", ""]
    return "\n".join(head + speed_tables(res) + worst_table(res) + load_table(res) + notes(res))


def update_docs(doc: Path, table: str) -> None:
    """Replaces the generated block of ``doc`` (which must have both markers) with ``table``."""
    from bpekit.atomicfile import atomic_write

    text = doc.read_text(encoding="utf-8")
    if BEGIN not in text or END not in text:
        raise SystemExit(f"{doc} has no generated block ({BEGIN} ... {END}); add the markers first")
    pre, rest = text.split(BEGIN, 1)
    post = rest.split(END, 1)[1]
    atomic_write(doc, (pre + BEGIN + "\n" + table.rstrip() + "\n" + END + post).encode())
