"""The tokenizer keys of a GGUF file (formats.md §5.2), typed and checked: ``GGUFVocab``.

Reading checks what llama.cpp's loader relies on: ``tokenizer.ggml.model`` and ``.tokens`` exist
with the right types; ``token_type``/``scores`` have one entry per token; special ids are UINT32
(out-of-range ids are kept but reported, as llama.cpp falls back to its defaults for them); token
strings are unique (llama.cpp aborts on duplicates); merges are ``"left right"`` strings. Every
other key (architecture, chat templates, model hyper-parameters) is kept in order, so a vocabulary
read from a file writes back to the same bytes.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from bpekit.errors import FormatError, InputTypeError, VocabError
from bpekit.formats.gguf import container as c

PREFIX = "tokenizer.ggml."
SPECIAL_ID_KEYS = (
    "bos_token_id", "eos_token_id", "eot_token_id", "eom_token_id", "unknown_token_id", "seperator_token_id",
    "padding_token_id", "mask_token_id", "cls_token_id", "fim_pre_token_id", "fim_suf_token_id", "fim_mid_token_id",
    "fim_pad_token_id", "fim_rep_token_id", "fim_sep_token_id", "prefix_token_id", "suffix_token_id",
    "middle_token_id",
)  # fmt: skip
FLAG_KEYS = (
    "add_bos_token", "add_eos_token", "add_sep_token", "add_space_prefix", "remove_extra_whitespaces",
    "normalizer.lowercase", "normalizer.strip_accents",
)  # fmt: skip
MODELS = (
    "llama",
    "gpt2",
    "bert",
    "t5",
    "gemma4",
    "rwkv",
    "plamo2",
    "hybriddna",
    "whitespace",
    "test",
    "no_vocab",
    "none",
)
# token_type values (formats.md §5.3): the SentencePiece numbering.
UNDEFINED, NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = range(7)
TYPE_NAMES = (
    "UNDEFINED",
    "NORMAL",
    "UNKNOWN",
    "CONTROL",
    "USER_DEFINED",
    "UNUSED",
    "BYTE",
)


@dataclass
class GGUFVocab:
    """A tokenizer as GGUF stores it. ``file`` holds every KV pair (tokenizer and other) in order;
    the attributes are views of the tokenizer keys, checked."""

    model: str
    tokens: list[str]
    token_types: list[int] | None = None
    scores: list[float] | None = None
    merges: list[tuple[str, str]] | None = None
    pre: str | None = None
    special_ids: dict[str, int] = field(default_factory=dict)
    flags: dict[str, bool] = field(default_factory=dict)
    file: c.GGUFFile = field(default_factory=c.GGUFFile)

    def __post_init__(self) -> None:
        """The types of a vocabulary built in Python (a file's are checked as it is read): a str
        of tokens was iterated as characters, a flag "no" was true, a short ``token_types`` an
        ``IndexError`` at the first lookup."""

        def bad(what: str) -> InputTypeError:
            return InputTypeError(f"GGUFVocab {what}")

        if self.model not in MODELS:
            raise bad(f"model must be one of {', '.join(MODELS)}, got {self.model!r}")
        if not isinstance(self.tokens, list) or not all(type(t) is str for t in self.tokens):
            raise bad("tokens must be a list of str")
        n = len(self.tokens)
        for name, arr, kinds in (("token_types", self.token_types, (int,)), ("scores", self.scores, (int, float))):
            if arr is None:
                continue
            if not isinstance(arr, list) or not all(type(v) in kinds for v in arr):
                raise bad(f"{name} must be a list of {' or '.join(k.__name__ for k in kinds)}")
            if len(arr) < n:
                raise bad(f"{name} has {len(arr)} entries for {n} tokens")
        if self.merges is not None and (
            not isinstance(self.merges, list)
            or not all(isinstance(m, tuple) and len(m) == 2 and all(type(x) is str for x in m) for m in self.merges)
        ):
            raise bad("merges must be a list of (str, str) pairs")
        if self.pre is not None and not isinstance(self.pre, str):
            raise bad(f"pre must be a str or None, got {type(self.pre).__name__}")
        if not isinstance(self.special_ids, dict) or not all(
            isinstance(k, str) and type(v) is int for k, v in self.special_ids.items()
        ):
            raise bad("special_ids must map str -> int")
        if not isinstance(self.flags, dict) or not all(
            isinstance(k, str) and type(v) is bool for k, v in self.flags.items()
        ):
            raise bad("flags must map str -> bool")

    @property
    def architecture(self) -> str | None:
        return self.file.get("general.architecture")

    def token_type(self, i: int) -> int:
        return self.token_types[i] if self.token_types is not None else NORMAL

    def special_id(self, name: str) -> int | None:
        """``bos``, ``eos``, ``unknown``... id if the file sets it inside the vocabulary."""
        v = self.special_ids.get(f"{name}_token_id")
        return v if v is not None and 0 <= v < len(self.tokens) else None

    @property
    def chat_template(self) -> str | None:
        return self.file.get("tokenizer.chat_template")

    @classmethod
    def read(cls, path: str | os.PathLike[str]) -> GGUFVocab:
        return cls.from_file(c.read(path), os.fspath(path))

    @classmethod
    def from_file(cls, gf: c.GGUFFile, source: str = "<gguf>") -> GGUFVocab:
        def get(
            key: str,
            vtype: int,
            sub: int | tuple[int, ...] | None = None,
            required: bool = False,
        ) -> object:
            v = gf.kv.get(PREFIX + key)
            if v is None:
                if required:
                    raise FormatError(
                        f"{source}: no {PREFIX}{key} key; this GGUF file holds no tokenizer"
                    )
                return None
            subs = sub if isinstance(sub, tuple) else (sub,)
            if v.type != vtype or (vtype == c.ARRAY and v.sub_type not in subs):
                want = c.TYPE_NAMES[vtype] + (
                    f"[{'|'.join(c.TYPE_NAMES[s] for s in subs if s is not None)}]"
                    if sub is not None
                    else ""
                )
                got = c.TYPE_NAMES.get(v.type, str(v.type)) + (
                    f"[{c.TYPE_NAMES.get(-1 if v.sub_type is None else v.sub_type, '?')}]"
                    if v.type == c.ARRAY
                    else ""
                )
                raise FormatError(f"{source}: {PREFIX}{key} must be {want}, got {got}")
            return v.value

        model = get("model", c.STRING, required=True)
        tokens = get("tokens", c.ARRAY, c.STRING, required=True)
        if not isinstance(model, str) or not isinstance(tokens, list):
            raise FormatError(f"{source}: malformed tokenizer.ggml.model or tokens")
        if model not in MODELS:
            raise FormatError(f"{source}: unknown tokenizer: {model!r}")
        n = len(tokens)
        types = get("token_type", c.ARRAY, c.INT32)
        scores = get("scores", c.ARRAY, (c.FLOAT32, c.INT32))
        for name, arr in (("token_type", types), ("scores", scores)):
            if isinstance(arr, list) and len(arr) < n:
                raise FormatError(
                    f"{source}: {PREFIX}{name} has {len(arr)} entries for {n} tokens"
                )
        raw_merges = get("merges", c.ARRAY, c.STRING)
        merges = None if raw_merges is None else _split_merges(raw_merges, source)  # type: ignore[arg-type]
        pre = get("pre", c.STRING)
        special_ids = {
            k: get(k, c.UINT32) for k in SPECIAL_ID_KEYS if PREFIX + k in gf.kv
        }
        flags = {k: get(k, c.BOOL) for k in FLAG_KEYS if PREFIX + k in gf.kv}
        vocab = cls(
            model=model,
            tokens=tokens,
            token_types=None if types is None else list(types[:n]),  # type: ignore[index]
            scores=None if scores is None else [float(s) for s in scores[:n]],  # type: ignore[index]
            merges=merges,
            pre=pre,  # type: ignore[arg-type]
            special_ids=special_ids,  # type: ignore[arg-type]
            flags=flags,  # type: ignore[arg-type]
            file=gf,
        )
        vocab.check(source)
        return vocab

    def check(self, source: str = "<gguf>") -> None:
        """VocabError for what llama.cpp would refuse: duplicate tokens, merges out of vocabulary
        for a model that needs them."""
        index: dict[str, int] = {}
        for i, t in enumerate(self.tokens):
            j = index.setdefault(t, i)
            if j != i:
                raise VocabError(
                    f"{source}: token {t!r} appears twice (ids {j} and {i}); llama.cpp refuses such a vocabulary"
                )
        if (
            self.model in ("gpt2", "gemma4")
            and self.merges is None
            and self.pre != "kimi-k2"
        ):
            raise FormatError(
                f"{source}: a {self.model!r} tokenizer needs {PREFIX}merges"
            )

    def to_file(self) -> c.GGUFFile:
        """The GGUF KV pairs: the file's own pairs in order, the tokenizer keys updated from the
        attributes (new keys are appended)."""
        kv = dict(self.file.kv)

        def put(key: str, value: c.Value | None) -> None:
            if value is None:
                kv.pop(PREFIX + key, None)
            else:
                kv[PREFIX + key] = value

        put("model", c.Value(c.STRING, self.model))
        put("pre", None if self.pre is None else c.Value(c.STRING, self.pre))
        put("tokens", c.Value(c.ARRAY, list(self.tokens), c.STRING))
        old_scores = self.file.kv.get(PREFIX + "scores")
        score_type = old_scores.sub_type if old_scores is not None else c.FLOAT32
        put(
            "scores",
            None
            if self.scores is None
            else c.Value(c.ARRAY, _scores(self.scores, score_type), score_type),
        )
        put(
            "token_type",
            None
            if self.token_types is None
            else c.Value(c.ARRAY, list(self.token_types), c.INT32),
        )
        merges = None if self.merges is None else [f"{a} {b}" for a, b in self.merges]
        put("merges", None if merges is None else c.Value(c.ARRAY, merges, c.STRING))
        for k in SPECIAL_ID_KEYS:
            put(
                k,
                c.Value(c.UINT32, self.special_ids[k])
                if k in self.special_ids
                else None,
            )
        for k in FLAG_KEYS:
            put(k, c.Value(c.BOOL, self.flags[k]) if k in self.flags else None)
        return c.GGUFFile(
            version=self.file.version,
            tensor_count=0,
            kv=kv,
            big_endian=self.file.big_endian,
        )


def _scores(scores: list[float], sub: int | None) -> list[float] | list[int]:
    return [int(s) for s in scores] if sub == c.INT32 else list(scores)


def _split_merges(merges: list[str], source: str) -> list[tuple[str, str]]:
    """llama.cpp's split: at the first space at byte index >= 1 (formats.md §5.5)."""
    out = []
    for i, m in enumerate(merges):
        cut = m.find(" ", 1)
        if cut < 0:
            raise FormatError(
                f"{source}: merge {i} ({m!r}) is not two tokens separated by a space"
            )
        out.append((m[:cut], m[cut + 1 :]))
    return out
