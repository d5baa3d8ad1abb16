"""llama.cpp's pre-tokenizer table: each ``tokenizer.ggml.pre`` name with its regex list and flags.

Data, written from formats.md §5.7 (llama.cpp ``src/llama-vocab.cpp`` as vendored in
llama_cpp_python 0.3.36; the machine-readable copy is ``llamacpp_pre_regex.json`` beside it).
How a list is applied: each regex in turn splits every current chunk on its own, matches and the
gaps between them both kept (HF ``Split(..., Isolated)`` in a ``Sequence``); then, when
``byte_encode``, every byte goes through GPT-2's ``bytes_to_unicode``.

The regexes are exactly llama.cpp's, including its "adapted" forms written for C++ ``std::regex``
(``(?:'[sS]|'[tT]|...)`` for ``(?i:'s|'t|...)``). :func:`upstream_regexes` gives the forms the
models' own ``tokenizer.json`` files use, which is what the GGUF test vectors were made with
(formats.md §5.7, §5.10). Non-ASCII characters are escaped (``\\uXXXX``) so that no editor can
NFC-normalise them (the DeepSeek classes change under NFC).

Flags (formats.md §5.4, §5.7): ``ignore_merges`` (a whole word that is a token is emitted as is),
``add_bos``, ``add_sep``, ``clean_spaces`` (detokenizer clean-up, default true for BPE),
``escape_whitespaces`` (spaces become U+2581 before splitting).
"""

from __future__ import annotations

from typing import NamedTuple

from bpekit.errors import FormatError
from bpekit.patterns import O200K
from bpekit.patterns import KIMI_K2 as KIMI_K2_PATTERN
from bpekit.patterns import TEKKEN as TEKKEN_PATTERN


class Pre(NamedTuple):
    """One pre-tokenizer: llama.cpp's internal type, the regex list, flags, byte-level mapping."""

    type: str
    regexes: tuple[str, ...]
    flags: dict[str, bool]
    byte_encode: bool


# The regexes, exactly as in llama.cpp (Python string literals; non-ASCII escaped).
DEFAULT_1 = "[\\p{P}\\$\\+<=>\\^~\\|]+"
GPT2 = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)"
DIGIT_RUN = "\\p{N}+"
THREE_DIGITS = "[0-9][0-9][0-9]"
DIGITS_1_3 = "\\p{N}{1,3}"
MINICPM5_2 = "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}+| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"
LLAMA3 = "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"
NEWLINE_CHAR = "[\r\n]"
DEEPSEEK_LLM_2 = "\\s?[A-Za-z\xb5\xc0-\xd6\xd8-\xf6\xf8-\u01ba\u01bc-\u01bf\u01c4-\u0293\u0295-\u02af\u0370-\u0373\u0376\u0377\u037b-\u037d\u037f\u0386\u0388-\u038a\u038c\u038e-\u03a1\u03a3-\u03f5\u03f7-\u0481\u048a-\u052f\u0531-\u0556\u10a0-\u10c5\u13a0-\u13f5\u13f8-\u13fd\u1c90-\u1cba\u1cbd-\u1cbf\u1d00-\u1d2b\u1d6b-\u1d77\u1d79-\u1d9a\u1e00-\u1f15\u1f18-\u1f1d\u1f20-\u1f45\u1f48-\u1f4d\u1f50-\u1f57\u1f59\u1f5b\u1f5d\u1f5f-\u1f7d\u1f80-\u1fb4\u1fb6-\u1fbc\u1fbe\u1fc2-\u1fc4\u1fc6-\u1fcc\u1fd0-\u1fd3\u1fd6-\u1fdb\u1fe0-\u1fec\u1ff2-\u1ff4\u1ff6-\u1ffc\u2102\u2107\u210a-\u2113\u2115\u2119-\u211d\u2124\u2126\u2128\u212a-\u212d\u212f-\u2134\u2139\u213c-\u213f\u2145-\u2149\u214e\u2183\u2184\u2c00-\u2c7b\u2c7e-\u2ce4\u2ceb-\u2cee\u2cf2\u2cf3\ua640-\ua66d\ua680-\ua69b\ua722-\ua76f\ua771-\ua787\ua78b-\ua78e\uab70-\uabbf\ufb00-\ufb06\ufb13-\ufb17\uff21-\uff3a\uff41-\uff5a\U00010400-\U0001044f\U000104b0-\U000104d3\U000104d8-\U000104fb\U00010c80-\U00010cb2\U00010cc0-\U00010cf2\U000118a0-\U000118df\U0001e900-\U0001e943]+"
DEEPSEEK_LLM_3 = "\\s?[!-/:-~\uff01-\uff0f\uff1a-\uff5e\u2018-\u201f\u3000-\u3002]+"
DEEPSEEK_LLM_4 = "\\s+$"
CJK_HANGUL = "[\u4e00-\u9fa5\u0800-\u4e00\uac00-\ud7ff]+"
DEEPSEEK_CODER_2 = "\\s?\\p{L}+"
DEEPSEEK_CODER_3 = "\\s?\\p{P}+"
DIGIT = "\\p{N}"
CJK_KANA = "[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+"
DEEPSEEK3_LLM_3 = "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+"
SPARK2_5_3 = "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+|[\r\n]|\\s+(?!\\S)|\\s+"
YOUTU_1 = "[\uac00-\ud7a3\u3131-\u318e]+|[\uff01\u2026\u201c\u201d\u2018\u2019\u2014\uff1a\uff1b\uff0c\u3001-\u303f\ufe30-\ufe4f]+|[\u3105-\u312f]+|[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+"
YOUTU_2 = "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"
FALCON_1 = "[\\p{P}\\$\\+<=>\\^~\\|`]+"
JAIS2 = "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s{512}(?!\\S)|\\s{256}(?!\\S)|\\s{128}(?!\\S)|\\s{64}(?!\\S)|\\s{32}(?!\\S)|\\s{16}(?!\\S)|\\s{8}(?!\\S)|\\s{4}(?!\\S)|\\s{1,2}(?!\\S)|\\s{1}"
NEWLINE_RUNS = "[^\\n]+|[\\n]+"
WHITESPACE = "\\S+"
QWEN2 = "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"
QWEN35 = "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}| ?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"
PORO = " ?[^(\\s|.,!?\u2026\u3002\uff0c\u3001\u0964\u06d4\u060c)]+"
TEKKEN = "[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))*((?=[\\p{L}])([^A-Z]))+|[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))+((?=[\\p{L}])([^A-Z]))*|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"
EXAONE_MOE = "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?(?:\\p{L}\\p{M}*(?: \\p{L}\\p{M}*)*)+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]?|\\s*[\\r\\n]|\\s+(?!\\S)|\\s+"
CHAMELEON_1 = "<sentinel:[0-9]+>"
CHAMELEON_2 = "(IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z"
CHAMELEON_3 = "([\\t\\n]|    |  )"
CHAMELEON_5 = "[\\p{P}!-/:-@\\[-`{-~]"
GPT4O = "[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))*((?=[\\p{L}])([^A-Z]))+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))+((?=[\\p{L}])([^A-Z]))*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"
GRANITE_EMB_MULTI = "[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}\\p{M}])([^a-z]))*((?=[\\p{L}\\p{M}])([^A-Z]))+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}\\p{M}])([^a-z]))+((?=[\\p{L}\\p{M}])([^A-Z]))*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"
TINY_AYA_1 = "\\d{1,3}(?=(?:\\d{3})*\\b)"
TINY_AYA_2 = "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"
SUPERBPE_2 = "(?=(\\d{3})+(?!\\d))"
BAILINGMOE = "'(?:[sSdDmMtT]|[lL][lL]|[vV][eE]|[rR][eE])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]|\\s+(?!\\S)|\\s+"
SEED_CODER = "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1}| ?[^\\s\\p{L}\\p{N}\\r\\n]+|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"
KIMI_K2 = "\\p{Han}+"
UFAKZEKA = "[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"
AFMOE_1 = "\\p{AFMoE_digits}"
AFMOE_2 = "[\u4e00-\u9fff\u3400-\u4dbf\u8c48-\ufaff\u3040-\u309f\u30a0-\u30ff\uff65-\uff9f\u2f00-\u2fdf\u0e40-\u0e7f\u0e80-\u0eff\u1780-\u17ff\u1000-\u109f\uaa60-\uaa7f\ua9e0-\ua9ff\uac00-\ud7af\u1100-\u11ff]+"
AFMOE_3 = "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\\r\\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"

PRE_TOKENIZERS: dict[str, Pre] = {
    "default": Pre("DEFAULT", (DEFAULT_1, GPT2, DIGIT_RUN, THREE_DIGITS), {}, True),
    "minicpm5": Pre(
        "MINICPM5", (DIGITS_1_3, MINICPM5_2), {"ignore_merges": True}, True
    ),
    "llama3": Pre("LLAMA3", (LLAMA3,), {"ignore_merges": True, "add_bos": True}, True),
    "llama-v3": Pre(
        "LLAMA3", (LLAMA3,), {"ignore_merges": True, "add_bos": True}, True
    ),
    "llama-bpe": Pre(
        "LLAMA3", (LLAMA3,), {"ignore_merges": True, "add_bos": True}, True
    ),
    "falcon3": Pre("LLAMA3", (LLAMA3,), {"ignore_merges": True, "add_bos": True}, True),
    "falcon-h1": Pre(
        "LLAMA3", (LLAMA3,), {"ignore_merges": True, "add_bos": True}, True
    ),
    "pixtral": Pre("LLAMA3", (LLAMA3,), {"ignore_merges": True, "add_bos": True}, True),
    "midm-2.0": Pre(
        "LLAMA3", (LLAMA3,), {"ignore_merges": True, "add_bos": True}, True
    ),
    "lfm2": Pre("LLAMA3", (LLAMA3,), {"ignore_merges": True, "add_bos": True}, True),
    "jina-v5-nano": Pre(
        "LLAMA3", (LLAMA3,), {"ignore_merges": True, "add_bos": True}, True
    ),
    "deepseek-llm": Pre(
        "DEEPSEEK_LLM",
        (
            NEWLINE_CHAR,
            DEEPSEEK_LLM_2,
            DEEPSEEK_LLM_3,
            DEEPSEEK_LLM_4,
            CJK_HANGUL,
            DIGIT_RUN,
        ),
        {"clean_spaces": False},
        True,
    ),
    "deepseek-coder": Pre(
        "DEEPSEEK_CODER",
        (NEWLINE_CHAR, DEEPSEEK_CODER_2, DEEPSEEK_CODER_3, CJK_HANGUL, DIGIT),
        {"clean_spaces": False},
        True,
    ),
    "deepseek-v3": Pre(
        "DEEPSEEK3_LLM",
        (DIGITS_1_3, CJK_KANA, DEEPSEEK3_LLM_3),
        {"clean_spaces": False},
        True,
    ),
    "spark2_5": Pre(
        "SPARK2_5",
        (DIGITS_1_3, CJK_KANA, SPARK2_5_3, DIGIT),
        {"clean_spaces": False},
        True,
    ),
    "youtu": Pre(
        "YOUTU",
        (YOUTU_1, YOUTU_2),
        {"clean_spaces": False, "ignore_merges": True},
        True,
    ),
    "falcon": Pre("FALCON", (FALCON_1, GPT2, THREE_DIGITS), {}, True),
    "mpt": Pre("MPT", (GPT2,), {}, True),
    "starcoder": Pre("STARCODER", (DIGIT, GPT2), {}, True),
    "gpt-2": Pre("GPT2", (GPT2,), {}, True),
    "phi-2": Pre("GPT2", (GPT2,), {}, True),
    "jina-es": Pre("GPT2", (GPT2,), {}, True),
    "jina-de": Pre("GPT2", (GPT2,), {}, True),
    "gigachat": Pre("GPT2", (GPT2,), {}, True),
    "jina-v2-es": Pre("GPT2", (GPT2,), {}, True),
    "jina-v2-de": Pre("GPT2", (GPT2,), {}, True),
    "a.x-4.0": Pre("GPT2", (GPT2,), {}, True),
    "mellum": Pre("GPT2", (GPT2,), {}, True),
    "modern-bert": Pre("GPT2", (GPT2,), {}, True),
    "jais-2": Pre("JAIS2", (JAIS2,), {}, True),
    "gemma4": Pre("GEMMA4", (NEWLINE_RUNS,), {"escape_whitespaces": True}, False),
    "granite-embed-multi-311m": Pre(
        "GEMMA4", (NEWLINE_RUNS,), {"escape_whitespaces": True}, False
    ),
    "sarvam-moe": Pre(
        "SARVAM_MOE",
        (NEWLINE_RUNS,),
        {"escape_whitespaces": True, "clean_spaces": False},
        False,
    ),
    "jina-v1-en": Pre("GPT2", (GPT2,), {"add_sep": True}, True),
    "jina-v2-code": Pre("GPT2", (GPT2,), {"add_sep": True}, True),
    "roberta-bpe": Pre("GPT2", (GPT2,), {"add_sep": True}, True),
    "whitespace": Pre(
        "WHITESPACE", (WHITESPACE,), {"normalizer_opts.lowercase": False}, False
    ),
    "refact": Pre("REFACT", (DIGIT, GPT2), {}, True),
    "command-r": Pre("COMMAND_R", (DIGIT, GPT2), {"clean_spaces": False}, True),
    "qwen2": Pre("QWEN2", (QWEN2,), {"clean_spaces": False}, True),
    "deepseek-r1-qwen": Pre("QWEN2", (QWEN2,), {"clean_spaces": False}, True),
    "kormo": Pre("QWEN2", (QWEN2,), {"clean_spaces": False}, True),
    "f2llmv2": Pre("QWEN2", (QWEN2,), {"clean_spaces": False}, True),
    "qwen35": Pre("QWEN35", (QWEN35,), {"clean_spaces": False}, True),
    "stablelm2": Pre("STABLELM2", (QWEN2,), {}, True),
    "olmo": Pre("OLMO", (GPT2,), {}, True),
    "dbrx": Pre("DBRX", (LLAMA3,), {}, True),
    "smaug-bpe": Pre("SMAUG", (LLAMA3,), {}, True),
    "poro-chat": Pre("PORO", (PORO,), {"clean_spaces": False}, True),
    "chatglm-bpe": Pre("CHATGLM4", (LLAMA3,), {}, True),
    "glm4": Pre("CHATGLM4", (LLAMA3,), {"ignore_merges": True}, True),
    "glm5": Pre("CHATGLM4", (LLAMA3,), {"ignore_merges": True}, True),
    "viking": Pre("VIKING", (PORO, DIGIT), {"clean_spaces": False}, True),
    "jais": Pre("JAIS", (GPT2,), {}, True),
    "tekken": Pre(
        "TEKKEN",
        (TEKKEN,),
        {"clean_spaces": False, "ignore_merges": True, "add_bos": True},
        True,
    ),
    "smollm": Pre("SMOLLM", (DIGIT, GPT2), {"clean_spaces": False}, True),
    "codeshell": Pre("CODESHELL", (DIGIT, GPT2), {}, True),
    "bloom": Pre("BLOOM", (PORO,), {}, True),
    "gpt3-finnish": Pre("GPT3_FINNISH", (PORO,), {}, True),
    "exaone": Pre("EXAONE", (DIGIT, GPT2), {}, True),
    "exaone4": Pre("GPT2", (GPT2,), {}, True),
    "exaone-moe": Pre("EXAONE_MOE", (EXAONE_MOE,), {}, True),
    "chameleon": Pre(
        "CHAMELEON",
        (CHAMELEON_1, CHAMELEON_2, CHAMELEON_3, DIGIT, CHAMELEON_5, GPT2),
        {"add_bos": True, "clean_spaces": False},
        True,
    ),
    "minerva-7b": Pre("MINERVA", (DIGIT, GPT2), {}, True),
    "megrez": Pre("QWEN2", (QWEN2,), {}, True),
    "gpt-4o": Pre("GPT4O", (GPT4O,), {"clean_spaces": False}, True),
    "llama4": Pre("GPT4O", (GPT4O,), {"clean_spaces": False}, True),
    "kanana2": Pre("GPT4O", (GPT4O,), {"clean_spaces": False}, True),
    "talkie": Pre("GPT4O", (GPT4O,), {"clean_spaces": False}, True),
    "granite-embed-multi-97m": Pre(
        "GRANITE_EMB_MULTI",
        (GRANITE_EMB_MULTI,),
        {"clean_spaces": False, "ignore_merges": True},
        True,
    ),
    "tiny_aya": Pre(
        "TINY_AYA", (TINY_AYA_1, TINY_AYA_2), {"clean_spaces": False}, True
    ),
    "cohere2moe": Pre(
        "TINY_AYA", (TINY_AYA_1, TINY_AYA_2), {"clean_spaces": False}, True
    ),
    "superbpe": Pre("SUPERBPE", (DIGIT_RUN, SUPERBPE_2), {"clean_spaces": False}, True),
    "trillion": Pre("TRILLION", (GPT2,), {"clean_spaces": False}, True),
    "granite-docling": Pre("GRANITE_DOCLING", (GPT2,), {"clean_spaces": False}, True),
    "bailingmoe": Pre("BAILINGMOE", (BAILINGMOE,), {"clean_spaces": False}, True),
    "bailingmoe2": Pre("BAILINGMOE", (BAILINGMOE,), {"clean_spaces": False}, True),
    "llada-moe": Pre("BAILINGMOE", (BAILINGMOE,), {"clean_spaces": False}, True),
    "seed-coder": Pre("SEED_CODER", (SEED_CODER,), {"clean_spaces": False}, True),
    "hunyuan": Pre("HUNYUAN", (QWEN2,), {"clean_spaces": False}, True),
    "hunyuan-dense": Pre(
        "HUNYUAN_DENSE",
        (DIGITS_1_3, CJK_KANA, DEEPSEEK3_LLM_3),
        {"clean_spaces": False},
        True,
    ),
    "hy_v4": Pre(
        "HY_V4", (DIGITS_1_3, CJK_KANA, DEEPSEEK3_LLM_3), {"clean_spaces": False}, True
    ),
    "joyai-llm": Pre(
        "JOYAI_LLM",
        (DIGITS_1_3, CJK_KANA, DEEPSEEK3_LLM_3),
        {"clean_spaces": False},
        True,
    ),
    "kimi-k2": Pre("KIMI_K2", (KIMI_K2,), {"clean_spaces": False}, True),
    "ufakzeka": Pre("UFAKZEKA", (UFAKZEKA,), {"clean_spaces": False}, True),
    "grok-2": Pre("GROK_2", (QWEN2,), {"clean_spaces": False}, True),
    "afmoe": Pre("AFMOE", (AFMOE_1, AFMOE_2, AFMOE_3), {"clean_spaces": False}, True),
    "laguna": Pre("LAGUNA", (NEWLINE_RUNS, QWEN2), {"clean_spaces": False}, True),
    "minimax-m2": Pre("MINIMAX_M2", (GPT4O,), {"clean_spaces": False}, True),
    "solar-open": Pre("SOLAR_OPEN", (QWEN2,), {"clean_spaces": False}, True),
    "mellum2": Pre("MELLUM2", (DIGIT, GPT2), {}, True),
}

# A BPE vocabulary without ``tokenizer.ggml.pre`` uses "default" (llama.cpp warns about it).
DEFAULT_NAME = "default"
# ``tokenizer.ggml.model == "gemma4"`` forces this name.
GEMMA4_NAME = "gemma4"

# llama.cpp's adaptation of the case-insensitive contractions, and the upstream form (§5.7).
ADAPTED_CONTRACTIONS = "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])"
UPSTREAM_CONTRACTIONS = "(?i:'s|'t|'re|'ve|'m|'ll|'d)"
_CONTRACTION_TYPES = frozenset(
    {
        "LLAMA3",
        "DBRX",
        "SMAUG",
        "CHATGLM4",
        "GROK_2",
        "STABLELM2",
        "QWEN2",
        "HUNYUAN",
        "SOLAR_OPEN",
        "QWEN35",
        "JAIS2",
        "SEED_CODER",
        "EXAONE_MOE",
        "MINICPM5",
        "TINY_AYA",
    }
)
O200K_UPSTREAM = (
    O200K  # tiktoken's o200k pattern is what GPT-4o-style tokenizer.json files use
)
TEKKEN_UPSTREAM = TEKKEN_PATTERN  # Mistral's tokenizer.json (bpekit.patterns.TEKKEN)
BAILINGMOE_UPSTREAM = (
    "'(?i:[sdmt]|ll|ve|re)|[^\\r\\n\\p{L}\\p{N}]?+\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]++[\\r\\n]*"
    "|\\s*[\\r\\n]|\\s+(?!\\S)|\\s+"
)
_WHOLE_LIST_UPSTREAM = {
    "GPT4O": O200K_UPSTREAM,
    "MINIMAX_M2": O200K_UPSTREAM,
    "TEKKEN": TEKKEN_UPSTREAM,
    # llama.cpp's `\p{Han}+` trigger stands for a hand-written splitter of Kimi's whole pattern
    "KIMI_K2": KIMI_K2_PATTERN,
    "BAILINGMOE": BAILINGMOE_UPSTREAM,
}
# Triggers for llama.cpp's hand-written splitters: not regexes any other engine can run.
HAND_WRITTEN = frozenset({"\\p{AFMoE_digits}", "\\p{Han}+"})


def lookup(name: str | None, model: str = "gpt2") -> tuple[str, Pre]:
    """The table entry llama.cpp uses for ``tokenizer.ggml.pre = name`` (absent: "default"; a
    ``gemma4`` model: "gemma4"). FormatError for a name llama.cpp does not know."""
    if model == "gemma4":
        name = GEMMA4_NAME
    elif name is None:
        name = DEFAULT_NAME
    pre = PRE_TOKENIZERS.get(name)
    if pre is None:
        raise FormatError(
            f"unknown pre-tokenizer type: {name!r} (llama.cpp knows {len(PRE_TOKENIZERS)} names)"
        )
    return name, pre


def upstream_regexes(pre: Pre) -> tuple[str, ...]:
    """The regex list in the form the models' ``tokenizer.json`` files use (formats.md §5.7).
    FormatError when llama.cpp runs a hand-written splitter that no regex expresses."""
    if pre.type in _WHOLE_LIST_UPSTREAM:
        return (_WHOLE_LIST_UPSTREAM[pre.type],)
    if any(rx in HAND_WRITTEN for rx in pre.regexes):
        raise FormatError(
            f"pre-tokenizer type {pre.type} uses a hand-written llama.cpp splitter that has no regex form"
        )
    if pre.type in _CONTRACTION_TYPES:
        return tuple(
            UPSTREAM_CONTRACTIONS + rx[len(ADAPTED_CONTRACTIONS) :]
            if rx.startswith(ADAPTED_CONTRACTIONS)
            else rx
            for rx in pre.regexes
        )
    return pre.regexes


def is_gpt2_regex_only(pre: Pre) -> bool:
    """True when the list is just GPT-2's regex: HF's ``ByteLevel(use_regex=true)`` does the same
    split (its regex has a final ``|\\s+`` that llama.cpp omits, equivalent since gaps are kept)."""
    return pre.regexes == (GPT2,) and pre.byte_encode
