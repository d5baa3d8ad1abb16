"""Headless Chromium for the page tests: load a page, get the DOM after its scripts ran and the
browser console's messages, take a screenshot; and a PNG decoder (zlib + PNG row filters) to
count the distinct colours of a screenshot."""

from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess
import zlib
from pathlib import Path

NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
QUIET = ("--disable-extensions", "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--no-default-browser-check", "--mute-audio", "--disable-features=Translate,MediaRouter,OptimizationHints")
CONSOLE = re.compile(r":CONSOLE[:(]\d+\)?\]? (.*)")


def find() -> str | None:
    env = os.environ.get("BPEKIT_CHROMIUM")
    return env or next((p for p in map(shutil.which, NAMES) if p), None)


def run(exe: str, url: str, profile: Path, *extra: str) -> tuple[str, list[str]]:
    """(stdout, console messages) of a headless Chromium run on ``url``."""
    cmd = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--hide-scrollbars",
           *QUIET, f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0", *extra, url]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=90, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"chromium exited with {done.returncode}: {done.stderr[-800:]}")
    console = [m.group(1) for line in done.stderr.splitlines() if (m := CONSOLE.search(line))]
    return done.stdout, console


def png_pixels(path: Path) -> tuple[int, int, list[bytes]]:
    """(width, height, rows of raw pixel bytes) of an 8-bit RGB or RGBA PNG."""
    data = path.read_bytes()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError(f"{path} is not a PNG")
    pos, idat, header = 8, [], b""
    while pos < len(data):
        (length,), kind = struct.unpack(">I", data[pos : pos + 4]), data[pos + 4 : pos + 8]
        body = data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            idat.append(body)
        pos += 12 + length
    width, height, depth, colour = struct.unpack(">IIBB", header[:10])
    if depth != 8 or colour not in (2, 6) or header[12] != 0:
        raise ValueError(f"unsupported PNG: depth {depth}, colour type {colour}, interlace {header[12]}")
    bpp = 3 if colour == 2 else 4
    raw = zlib.decompress(b"".join(idat))
    stride = width * bpp
    rows, prev = [], bytearray(stride)
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        _unfilter(kind, line, prev, bpp)
        rows.append(bytes(line))
        prev = line
    return width, height, rows


def _unfilter(kind: int, line: bytearray, prev: bytearray, bpp: int) -> None:
    n = len(line)
    if kind == 1:
        for i in range(bpp, n):
            line[i] = (line[i] + line[i - bpp]) & 255
    elif kind == 2:
        for i in range(n):
            line[i] = (line[i] + prev[i]) & 255
    elif kind == 3:
        for i in range(n):
            left = line[i - bpp] if i >= bpp else 0
            line[i] = (line[i] + ((left + prev[i]) >> 1)) & 255
    elif kind == 4:
        for i in range(n):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    elif kind != 0:
        raise ValueError(f"bad PNG row filter {kind}")


def distinct_colours(path: Path) -> int:
    """How many different pixel values the PNG holds."""
    width, _, rows = png_pixels(path)
    bpp = len(rows[0]) // width
    return len({row[i : i + bpp] for row in rows for i in range(0, len(row), bpp)})
