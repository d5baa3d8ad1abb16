"""llama.cpp's pre-tokenizer table: every name matches the spec's machine-readable copy, every
name resolves, and every regex list that has a regex form splits text in Hugging Face
``tokenizers`` (Oniguruma) exactly as the documented llama.cpp procedure does in Python."""

from __future__ import annotations

import json

import pytest
import regex
from bpekit.errors import FormatError
from bpekit.formats import llamacpp
from bpekit.formats.gguf.to_hf import pre_tokenizer
from bpekit.patterns import KIMI_K2
from bpekit.pipeline.onig import _intersections
from datapaths import ROOT

tokenizers = pytest.importorskip("tokenizers")
SPEC = ROOT.parent / "shared" / "docs" / "llamacpp_pre_regex.json"
NAMES = sorted(llamacpp.PRE_TOKENIZERS)
SAMPLE = (
    "Hello World! It's 2024, they'll pay $1,234.56 -- OK?\n\n  indented\tTAB  end  \n"
    "ÀÉÎ café naïve ſ 北京欢迎你 こんにちは 한국어 ١٢٣ x²+y³ ... ¿Qué? «quote» 'S 'LL"
)


def test_table_is_the_spec_copy() -> None:
    if not SPEC.is_file():
        pytest.skip(f"spec copy {SPEC} not found")
    spec = json.loads(SPEC.read_text(encoding="utf-8"))["pre"]
    assert sorted(spec) == NAMES and len(NAMES) == 91
    for name, entry in spec.items():
        pre = llamacpp.PRE_TOKENIZERS[name]
        assert (pre.type, list(pre.regexes), pre.flags, pre.byte_encode) == (
            entry["type"],
            entry["regex"],
            entry["flags"],
            entry["byte_encode"],
        ), name


def test_lookup_defaults_and_unknown_names() -> None:
    assert llamacpp.lookup(None) == ("default", llamacpp.PRE_TOKENIZERS["default"])
    assert llamacpp.lookup("gpt-2", model="gemma4")[0] == "gemma4"
    with pytest.raises(FormatError, match="unknown pre-tokenizer type: 'nope'"):
        llamacpp.lookup("nope")


def test_upstream_forms() -> None:
    (llama3,) = llamacpp.upstream_regexes(llamacpp.PRE_TOKENIZERS["llama-bpe"])
    assert llama3.startswith(
        "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}"
    )
    assert llamacpp.upstream_regexes(llamacpp.PRE_TOKENIZERS["gpt-4o"]) == (
        llamacpp.O200K_UPSTREAM,
    )
    assert (
        llamacpp.upstream_regexes(llamacpp.PRE_TOKENIZERS["falcon"])
        == llamacpp.PRE_TOKENIZERS["falcon"].regexes
    )
    # llama.cpp's Kimi trigger stands for tokenization_kimi.py's pattern (session 20)
    assert llamacpp.upstream_regexes(llamacpp.PRE_TOKENIZERS["kimi-k2"]) == (KIMI_K2,)
    with pytest.raises(FormatError, match="hand-written"):
        llamacpp.upstream_regexes(llamacpp.PRE_TOKENIZERS["afmoe"])


def llamacpp_split(regexes: tuple[str, ...], text: str) -> list[str]:
    """formats.md §5.7: each regex splits every chunk on its own; matches and gaps are kept."""
    chunks = [text]
    for rx in regexes:
        # `$` is end of text in the engines concerned; Kimi's class intersections as bpekit's
        # Python pipeline rewrites them for `regex` (checked here against Oniguruma)
        pat = regex.compile(_intersections(rx.replace("\\s+$", "\\s+\\Z")))
        out = []
        for chunk in chunks:
            pos = 0
            for m in pat.finditer(chunk):
                if m.start() > pos:
                    out.append(chunk[pos : m.start()])
                if m.end() > m.start():
                    out.append(m.group())
                pos = max(pos, m.end())
            if pos < len(chunk):
                out.append(chunk[pos:])
        chunks = out
    return chunks


def hf_split(pre_doc: dict, text: str) -> list[str]:
    doc = {
        "version": "1.0",
        "pre_tokenizer": pre_doc,
        "model": {"type": "BPE", "vocab": {}, "merges": []},
    }
    tok = tokenizers.Tokenizer.from_str(json.dumps(doc))
    assert tok.pre_tokenizer is not None
    byte_decoder = {ch: b for b, ch in enumerate(_byte_table())}
    return [
        bytes(byte_decoder[ch] for ch in piece).decode("utf-8")
        for piece, _ in tok.pre_tokenizer.pre_tokenize_str(text)
    ]


def _byte_table() -> list[str]:
    from bpekit.tokenizer_export import bytes_to_unicode

    return list(bytes_to_unicode())


@pytest.mark.parametrize("name", NAMES)
def test_every_name_splits_in_tokenizers_as_llamacpp_documents(name: str) -> None:
    pre = llamacpp.PRE_TOKENIZERS[name]
    if not pre.byte_encode:
        with pytest.raises(FormatError, match="not byte-level"):
            pre_tokenizer(pre)
        assert llamacpp_split(pre.regexes, SAMPLE)  # still a valid regex list
        return
    if any(rx in llamacpp.HAND_WRITTEN for rx in pre.regexes) and pre.type != "KIMI_K2":
        with pytest.raises(FormatError):
            pre_tokenizer(pre)
        return
    upstream = llamacpp.upstream_regexes(pre)
    assert "".join(llamacpp_split(upstream, SAMPLE)) == SAMPLE
    assert hf_split(pre_tokenizer(pre), SAMPLE) == llamacpp_split(upstream, SAMPLE)
