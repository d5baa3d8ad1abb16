"""The HTML shell every page shares: one self-contained file (inline CSS, inline scripts, inline
SVG), nothing fetched at view time, and helpers to escape text and embed JSON data safely."""

from __future__ import annotations

import html
import json
from typing import Any

CSS = """
:root { --fg:#1d2430; --muted:#5d6675; --bg:#fbfbfd; --line:#d9dde5; --accent:#2f6fdf; }
* { box-sizing: border-box; }
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg);
       background: var(--bg); margin: 0 auto; max-width: 1180px; padding: 24px; }
h1 { font-size: 26px; margin: 0 0 6px; } h2 { font-size: 19px; margin: 28px 0 8px; }
p.note, .muted { color: var(--muted); }
table { border-collapse: collapse; margin: 8px 0; }
th, td { border-bottom: 1px solid var(--line); padding: 4px 10px; text-align: right; }
th:first-child, td:first-child { text-align: left; }
code, .mono { font-family: ui-monospace, "SF Mono", Menlo, Consolas, monospace; }
.tokens { white-space: pre-wrap; word-break: break-word; font-family: ui-monospace, Menlo, Consolas, monospace;
          font-size: 14px; line-height: 1.9; background: #fff; border: 1px solid var(--line); padding: 10px; }
.tokens span { border-radius: 3px; padding: 1px 0; }
.tokens span:hover { outline: 2px solid #111; }
.c0{background:#f9c0b8}.c1{background:#fbe1a6}.c2{background:#d9efa5}.c3{background:#a9e3c6}
.c4{background:#a9d8ef}.c5{background:#c4c4f4}.c6{background:#ebc0e6}
.tokens .special { background:#333; color:#fff; }
svg { max-width: 100%; height: auto; background: #fff; border: 1px solid var(--line); }
"""


def esc(text: object) -> str:
    """``text`` escaped for HTML text and attribute values."""
    return html.escape(str(text), quote=True)


def json_script(element_id: str, data: Any) -> str:
    """``data`` as an inline ``application/json`` script that no text inside can close early."""
    payload = json.dumps(data, ensure_ascii=True, separators=(",", ":")).replace("<", "\\u003c")
    return f'<script type="application/json" id="{esc(element_id)}">{payload}</script>'


def page(title: str, body: str, *, extra_css: str = "", script: str = "") -> str:
    """A whole HTML document."""
    js = f"<script>\n{script}\n</script>" if script else ""
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(title)}</title><style>{CSS}{extra_css}</style></head>\n"
        f"<body>\n{body}\n{js}\n</body></html>\n"
    )
