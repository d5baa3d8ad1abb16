"""``Tokenizer``: the stages of :mod:`bpekit.pipeline` composed (added tokens, normalizer,
pre-tokenizer, model, post-processor, decoder), loaded from any supported file by ``from_file``.

Two kinds of model sit in it. A *rank model* (``RankBPE``: bpekit-trained tokenizers, tiktoken
rank files, ``from_encoding``) encodes entirely in the Rust core with tiktoken's special-token
policy. A *pipeline* (``tokenizer.json``, SentencePiece) encodes as its library does: added tokens
first, then each stage, with the Rust pre-tokenizer standing in where provably the same
(``pipeline/fast.py``).

The trained byte-level model (pattern, merges, special tokens, how it was trained) saves to a
self-describing, versioned file. Ids: byte ``b`` is token ``b``; merge ``i`` makes the next new token (``256 + i`` unless an earlier
merge already spelled the same bytes, see docs/training.md); special tokens come after. Because
ids follow merge order, the ids are tiktoken-style ranks and rank-order BPE (``CoreBPE``) encodes
exactly with them.

The file format is in ``formats/bpekit_file.py``.
"""

from __future__ import annotations

import copy
import operator
import os
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from bpekit import _core
from bpekit.atomicfile import atomic_write_all
from bpekit.encoding import (
    Encoding,
    _check_batch,
    _check_cut,
    _check_text,
    _check_threads,
    _check_tokens,
    _fix_surrogates,
    _has_surrogates,
    _valid_text,
    cache_budget,
    longest_cut,
)
from bpekit.errors import (
    FormatError,
    IdRangeError,
    InputTypeError,
    InternalError,
    InvalidTokenError,
    UsageError,
    VocabError,
)
from bpekit.formats import bpekit_file
from bpekit.formats.bpekit_file import FORMAT, VERSION  # noqa: F401  (re-exported)
from bpekit.formats.recover import recover_merges
from bpekit.pipeline import decoders, pre_tokenizers
from bpekit.pipeline.added_tokens import AddedToken, AddedVocabulary
from bpekit.pipeline.base import Pattern
from bpekit.pipeline.byte_level import to_bytes, to_chars
from bpekit.pipeline.fast import (MATCHES_ONLY, char_stages, core_model, core_splitter, encode_texts, isolated_config, metaspace_config,
                                  split_config)
from bpekit.pipeline.models import BPE, CACHE_MAX_WORD, dense_table_ok
from bpekit.pipeline.normalizers import aligner, core_normalizer
from bpekit.pipeline.processors import affixes, spaces_at_ends
from bpekit.pipeline.rank_model import RankBPE, SentencePieceStage
from bpekit.specials import check_list, check_map
from bpekit.tokenizer_export import onig_pattern, tiktoken_sidecar, tiktoken_text

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

Pair = tuple[bytes, bytes]
Specials = Literal["all"] | Collection[str]


_PIECE_CACHE = 1 << 17
# `Tokenizer.count` of a pipeline counts in Rust from this many characters; a shorter text goes
# through the bound `encode` (Llama 3's GGUF: 200 characters 1.26 us counted in Rust from Python,
# 0.67 us as len(encode); 2,000: 5.1 / 5.0 us; 20,000: 46 / 51 us).
_COUNT_IN_RUST_FROM = 4096
# Bytes counted per entry of the Python path's piece cache when a budget is set (a str key, a
# list of ints and the dict's slot): budget // this = the entries it may hold.
_PY_ENTRY_BYTES = 256
# What a pipeline's batch call returns (the Rust batches' `out` code): lists of ids, one flat
# array and offsets, or each text's number of ids.
LISTS, FLAT, COUNTS = 0, 1, 2


def _check_flag(name: str, value: object) -> None:
    """``add_special_tokens`` / ``skip_special_tokens`` must be ``True`` or ``False``: a second
    text (Hugging Face's ``encode(text, pair)``) was read as a true flag."""
    if not isinstance(value, bool):
        raise InputTypeError(f"{name} must be True or False, got {value!r}"
                             + (" (encode takes one text; encode_batch takes several)" if isinstance(value, str) else ""))


def _token_bytes(x: object, n: int) -> bytes:
    """One side of merge ``n`` as bytes (``bytes(5)`` would be five NULs, a str has no encoding)."""
    if isinstance(x, bytes | bytearray | memoryview):
        return bytes(x)
    raise InputTypeError(f"merge {n} must be a pair of bytes, got a {type(x).__name__} {x!r}")


def _merge_pairs(merges: object) -> list[Pair]:
    if isinstance(merges, str | bytes) or not isinstance(merges, Iterable):
        raise InputTypeError(f"merges must be a list of (bytes, bytes) pairs, got {type(merges).__name__}")
    pairs = []
    for n, m in enumerate(merges):
        if not isinstance(m, tuple | list) or len(m) != 2:
            raise InputTypeError(f"merge {n} must be a pair of bytes, got {m!r}")
        pairs.append((_token_bytes(m[0], n), _token_bytes(m[1], n)))
    return pairs


def _specials(special_tokens: Mapping[str, int] | Sequence[str], first_id: int) -> dict[str, int]:
    if isinstance(special_tokens, Mapping):
        specials = check_map(special_tokens)
    else:
        specials = {s: first_id + i for i, s in enumerate(check_list(special_tokens))}
    clash = [s for s, i in specials.items() if i < first_id]
    if clash:
        raise VocabError(f"special tokens {clash!r} have the id of an ordinary token")
    return specials


def _token_list(tokens: Any) -> list[Any]:
    if isinstance(tokens, (str, bytes)) or not isinstance(tokens, Iterable):
        raise InputTypeError(f"tokens to add are a list of str or AddedToken, not {type(tokens).__name__}")
    return list(tokens)


def _added(item: Any, special: bool) -> AddedToken:
    """A ``str`` or an added-token object (bpekit's, or ``tokenizers.AddedToken``, read by its
    attributes) as an AddedToken with a placeholder id; a ``str``'s flags are Hugging Face's
    defaults (``normalized`` unless special)."""
    if isinstance(item, str):
        return AddedToken(0, item, normalized=not special, special=special)
    content = getattr(item, "content", None)
    if not isinstance(content, str):
        raise InputTypeError(f"a token to add is a str or an AddedToken, not {type(item).__name__}")
    flags = {k: getattr(item, k, default) for k, default in
             (("single_word", False), ("lstrip", False), ("rstrip", False), ("normalized", not special))}
    for k, v in flags.items():
        if not isinstance(v, bool):
            raise InputTypeError(f"AddedToken {content!r}: {k} must be a bool, got {v!r}")
    return AddedToken(0, content, special=special or bool(getattr(item, "special", False)), **flags)


def ranks_from_merges(merges: Iterable[Pair]) -> dict[bytes, int]:
    """Byte tokens 0..255, then each merge's bytes in order (a repeated spelling keeps its id)."""
    ranks = {bytes([i]): i for i in range(256)}
    for n, (left, right) in enumerate(merges):
        if left not in ranks or right not in ranks:
            raise VocabError(f"merge {n} ({left!r}, {right!r}) uses a token that no earlier merge made")
        ranks.setdefault(left + right, len(ranks))
    return ranks


# The stages `Tokenizer._refresh` derives the Rust splitter and model (and added-token matchers)
# from, by their place in its key.
_STAGE_KEYS = {"normalizer": 0, "pre_tokenizer": 1, "model": 2, "added_tokens": 3}


class Tokenizer:
    """A tokenizer pipeline: added tokens, ``normalizer``, ``pre_tokenizer``, ``model``,
    ``post_processor``, ``decoder`` (Hugging Face's design), loaded from any supported file with
    :meth:`from_file`.

    ``Tokenizer(pattern=..., merges=..., special_tokens=...)`` is the byte-level BPE tokenizer that
    bpekit trains (a rank model encoded by the Rust core, tiktoken's special-token policy);
    ``Tokenizer(model, normalizer=..., ...)`` composes stages of :mod:`bpekit.pipeline`.
    """

    def __init__(
        self,
        model: Any = None,
        *,
        normalizer: Any = None,
        pre_tokenizer: Any = None,
        post_processor: Any = None,
        decoder: Any = None,
        added_tokens: Iterable[AddedToken] = (),
        pattern: str | None = None,
        merges: Sequence[Pair] | None = None,
        special_tokens: Mapping[str, int] | Sequence[str] = (),
        training: Mapping[str, Any] | None = None,
        pattern_name: str | None = None,
    ) -> None:
        self.source_format: str | None = None
        self.source_document: Any = None  # what a loader read, to re-save unchanged parts byte-exactly
        self.hf_layout: tuple[int | None, bool, bool] | None = None  # JSON layout of a loaded tokenizer.json
        self.encoding: Encoding | None = None
        if model is None:
            if pattern is None or merges is None:
                raise UsageError("Tokenizer needs a model, or pattern= and merges= for a byte-level BPE")
            if not isinstance(pattern, str):
                raise FormatError(f"pattern must be a str, got {type(pattern).__name__}")
            pairs = _merge_pairs(merges)
            ranks = ranks_from_merges(pairs)
            self._rank_model(ranks, pairs, _specials(special_tokens, len(ranks)), pattern, "bpekit-trained",
                             pattern_name, dict(training or {}))
            return
        self.pattern: str | None = None
        self.pattern_name = None
        self.training = {}
        self.normalizer = normalizer
        self.pre_tokenizer = pre_tokenizer
        self.model = model
        self.post_processor = post_processor
        self.decoder = decoder
        self.added_tokens = AddedVocabulary(added_tokens, normalizer.normalize if normalizer else None)
        self.special_tokens = {t.content: t.id for t in self.added_tokens.tokens if t.special}
        self._built_for: tuple[int, ...] = ()
        self._refresh()

    # What a Tokenizer derives from its stages (the Rust splitter and model, caches, the bound
    # `encode` and `decode`): left out of a pickle and rebuilt after it, so that a pipeline
    # crosses to other processes.
    _DERIVED = ("_splitter", "_fast", "_added_fast", "_normalize", "_aligner", "_pieces", "_built_for",
                "_decode_built", "encode", "decode", "_calls_bound", "_offset_table")
    # Whether `encode` and `decode` were bound in Rust (or found not bindable) since a public
    # attribute was last assigned; see `_bind_calls`.
    _calls_bound = False

    def __getstate__(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k not in self._DERIVED}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        if self.encoding is None:
            self._built_for = ()
            self._refresh()

    def __setattr__(self, name: str, value: Any) -> None:
        """Assigning a public attribute (a stage, the encoding, ...) drops the bound ``encode`` and
        ``decode``, which the class methods bind again on their next call, and marks a replaced
        stage for ``_refresh`` (by name, not by ``id``: a new stage may reuse a freed one's
        address)."""
        object.__setattr__(self, name, value)
        if name[0] != "_":
            d = self.__dict__
            d.pop("encode", None)
            d.pop("decode", None)
            d["_calls_bound"] = False
            if (i := _STAGE_KEYS.get(name)) is not None and len(built := d.get("_built_for", ())) == len(_STAGE_KEYS):
                d["_built_for"] = (*built[:i], None, *built[i + 1:])

    def _stage_key(self) -> tuple[int, ...]:
        return (id(self.normalizer), id(self.pre_tokenizer), id(self.model), id(self.added_tokens))

    def _refresh(self) -> None:
        """Rebuilds what depends on the stages when one was replaced (stages are values: replace a
        stage rather than change it in place)."""
        key = self._stage_key()
        if key == self._built_for:
            return
        built = self._built_for or (None,) * len(_STAGE_KEYS)
        if key[0] != built[0]:
            normalize = self.normalizer.normalize if self.normalizer is not None else None
            self.added_tokens = AddedVocabulary(self.added_tokens.tokens, normalize)
        # the Rust splitter and model (with Metaspace, whether its "first" scheme can run in Rust
        # depends on the added tokens too)
        if key[:3] != built[:3] or (isinstance(self.pre_tokenizer, pre_tokenizers.Metaspace) and key[3] != built[3]):
            self._splitter = core_splitter(self.pre_tokenizer) if isinstance(self.model, BPE) else None
            # (Rust splits what core_model takes, with stages after ByteLevel that no str splitter has)
            self._fast = core_model(self.pre_tokenizer, self.model) if isinstance(self.model, BPE) else None
            if isinstance(self.model, SentencePieceStage) and self.pre_tokenizer is None:
                self._fast = self.model.spm._core  # normalizes and merges a segment in one Rust call
            elif isinstance(self.model, BPE) and self.pre_tokenizer is None:
                self._fast = self.model.fast_merge  # a segment is one word (Llama-2-style files)
            elif isinstance(self.model, BPE) and (
                ms := metaspace_config(self.pre_tokenizer, self.added_tokens.rust_matchers is not None)
            ):
                self._fast = self.model.char_merge(ms)  # Metaspace and the model in one Rust call
            elif isinstance(self.model, BPE) and self._fast is None and (stages := char_stages(self.pre_tokenizer)):
                self._fast = self.model.char_merge(None, stages)  # split stages and a character model
            self._pieces: dict[str, list[int]] = {}
            self._push_cache_budget()
        # the pair model cuts added tokens itself (`encode_added`), unless one is single_word
        self._added_fast = self.added_tokens.rust_matchers if isinstance(self._fast, _core.PairBPE) else None
        n = self.normalizer  # what `encode_added` needs of it: the call, and whether ASCII is left as it is
        self._normalize = (core_normalizer(n), n.ascii_invariant) if n is not None else (None, False)
        self._aligner = aligner(n, self._normalize[0])  # (what aligns a text for offsets)
        self._built_for = self._stage_key()  # (the added tokens may be new)

    def _bind_calls(self) -> None:
        """Binds ``encode`` and ``decode`` on this instance in Rust (``_core.TokenizerCalls``: no
        Python frame) where the core does the work in one call: ``encode`` for a rank model, a
        pair model whose added tokens Rust cuts or a SentencePiece model alone, ``decode`` for a
        decoder with a table of every id or a rank model.
        The bound ``encode`` takes ``encode(text)`` with ``add_special_tokens`` ``True`` or
        ``False`` (a rank model: and tiktoken's special-token policies), the bound ``decode`` a
        list or tuple of known ids with ``skip_special_tokens`` ``True`` or ``False``; any other
        call comes back to the class method."""
        d = self.__dict__
        d.pop("encode", None)
        d.pop("decode", None)
        cls = type(self)
        models: dict[str, Any] = {}  # the model `encode` calls, if bound: pair=, rank= or pieces=
        table = None
        if self.encoding is not None:
            if cls.encode is Tokenizer.encode and type(self.encoding).encode is Encoding.encode:
                models["rank"] = self.encoding._core_bpe
            if cls.decode is Tokenizer.decode and type(self.encoding).decode is Encoding.decode:
                table = self.encoding._core_bpe
        else:
            self._refresh()
            plain = self.normalizer is None and not self.added_tokens.strings  # (the text is one segment)
            matchers = self._added_fast or ((None, None) if plain else None)
            if cls.encode is not Tokenizer.encode:
                pass
            elif isinstance(self._fast, _core.PairBPE) and matchers is not None:
                models["pair"] = (self._fast, *matchers, *self._normalize)
            elif isinstance(self._fast, _core.SentencePieceCore) and plain:
                models["pieces"] = self._fast
            if cls.decode is Tokenizer.decode:
                table = self._decode_ids()
        if models or table is not None:
            calls = _core.TokenizerCalls(self, table=table, **models)
            if models:
                d["encode"] = calls.method("encode")
            if table is not None:
                d["decode"] = calls.method("decode")
        d["_calls_bound"] = True

    def _push_cache_budget(self) -> None:
        """Gives the Rust model this tokenizer derived the budget set on it (if one was)."""
        budget = getattr(self, "_cache_bytes", None)
        if budget is not None and hasattr(self._fast, "set_cache_capacity"):
            self._fast.set_cache_capacity(budget)

    def _init_ranks(self, ranks: dict[bytes, int], specials: dict[str, int], pattern: str, name: str,
                    encoding: Encoding | None = None) -> None:
        self.pattern = pattern
        self.ranks = ranks
        self.special_tokens = specials
        self.encoding = encoding or Encoding(name, pat_str=pattern, mergeable_ranks=ranks, special_tokens=specials)
        self._decoder = dict(zip(ranks.values(), ranks))
        self._special_ids = {i: s for s, i in specials.items()}
        byte_level = {"add_prefix_space": False, "trim_offsets": True, "use_regex": False}
        self.normalizer = None
        self.pre_tokenizer = pre_tokenizers.Sequence(
            [pre_tokenizers.Split(Pattern(onig_pattern(pattern), True), "Isolated"), pre_tokenizers.ByteLevel(**byte_level)]
        )
        self.model = RankBPE(self.encoding)
        self.post_processor = None
        self.decoder = decoders.ByteLevel(**byte_level)
        self.added_tokens = AddedVocabulary(AddedToken(i, s) for s, i in specials.items())

    @classmethod
    def _trained(cls, pattern: str, merges: list[Pair], tokens: list[bytes], special_tokens: Sequence[str],
                 training: dict[str, Any], pattern_name: str | None) -> Tokenizer:
        """What the trainer returns: ``tokens`` are the vocabulary in id order (distinct: a merge
        spelling an existing token reuses its id), so the ranks are built in one C-level pass
        instead of :func:`ranks_from_merges`' checked loop (40 ms of a 2 s training run)."""
        ranks = dict(zip(tokens, range(len(tokens))))
        if len(ranks) != len(tokens) or len(tokens) > 256 + len(merges):
            raise InternalError(f"the trainer returned {len(tokens)} tokens, {len(ranks)} distinct, for {len(merges)} merges")
        self = cls.__new__(cls)
        self._rank_model(ranks, merges, _specials(special_tokens, len(ranks)), pattern, "bpekit-trained",
                         pattern_name, training)
        return self

    @classmethod
    def from_encoding(cls, encoding: Encoding) -> Tokenizer:
        """The rank model of a bpekit (tiktoken-compatible) ``Encoding``: same pattern, ranks, specials."""
        self = cls.__new__(cls)
        self._rank_model(encoding._mergeable_ranks, None, dict(encoding._special_tokens), encoding._pat_str,
                         encoding.name, None, {}, encoding)
        return self

    def _rank_model(self, ranks: dict[bytes, int], merges: list[Pair] | None, specials: dict[str, int],
                    pattern: str, name: str, pattern_name: str | None, training: dict[str, Any],
                    encoding: Encoding | None = None) -> None:
        """Makes this a rank model (what ``pattern=``/``merges=``, the trainer and
        :meth:`from_encoding` build); ``merges`` None = recovered from the ranks when asked."""
        self.source_format, self.source_document, self.hf_layout = None, None, None
        self._merges: list[Pair] | None = merges
        self._init_ranks(ranks, specials, pattern, name, encoding)
        self.pattern_name = pattern_name
        self.training: dict[str, Any] = training

    @classmethod
    def from_file(cls, path: str | os.PathLike[str], **overrides: Any) -> Tokenizer:
        """Loads any supported file, detecting its format (``bpekit.formats.detect``); ``overrides``
        go to that format's loader (e.g. ``format=``, ``pattern=``, ``special_tokens=``, ``seed=``)."""
        from bpekit.formats.detect import load_file

        return load_file(path, **overrides)

    def __repr__(self) -> str:
        if self.encoding is not None:
            name = self.pattern_name or "custom pattern"
            return f"Tokenizer(vocab_size={self.vocab_size}, pattern={name}, special_tokens={len(self.special_tokens)})"
        return f"Tokenizer(model={self.model!r}, vocab_size={self.vocab_size}, added_tokens={len(self.added_tokens)})"

    @property
    def merges(self) -> list[Pair]:
        """The merges of a rank model (recovered from the ranks when it was not trained here)."""
        if self.encoding is None:
            raise UsageError("merges as byte pairs exist for rank models; see .model.merges")
        if self._merges is None:
            self._merges = recover_merges(self.ranks)
        return self._merges

    @property
    def pretoken_cache_bytes(self) -> int:
        """Byte budget of the per-thread cache of encoded pieces (piece -> ids); 0 means off.

        On by default: a rank model's is its ``Encoding``'s (256 KiB per thread); a pipeline's
        (``tokenizer.json``, GGUF, SentencePiece) is 8 MiB per thread and model, emptied when it
        fills; a pipeline that runs in Python (dropout, subword prefixes) keeps a dict of at most
        budget / 256 entries (default 131,072). The budget belongs to the model, so tokenizers
        sharing a model share it. The cache never changes results, only speed; setting the
        budget empties it on every thread.
        """
        if self.encoding is not None:
            return self.encoding.pretoken_cache_bytes
        self._refresh()
        if hasattr(self._fast, "cache_capacity"):
            return int(self._fast.cache_capacity())
        budget = getattr(self, "_cache_bytes", None)
        return _PIECE_CACHE * _PY_ENTRY_BYTES if budget is None else budget

    @pretoken_cache_bytes.setter
    def pretoken_cache_bytes(self, value: int) -> None:
        value = cache_budget(value)
        if self.encoding is not None:
            self.encoding.pretoken_cache_bytes = value
            return
        self._cache_bytes = value
        self._refresh()
        self._push_cache_budget()
        self._pieces = {}

    # ---- vocabulary ----

    @property
    def vocab_size(self) -> int:
        """Number of distinct tokens: the model's and the added (special) ones."""
        if self.encoding is not None:
            return len(self.ranks) + len(self.special_tokens)
        extra = [t for t in self.added_tokens.by_content if self.model.token_to_id(t) is None]
        return int(self.model.get_vocab_size()) + len(extra)

    @property
    def n_vocab(self) -> int:
        """Highest id + 1 (tiktoken's name)."""
        if self.encoding is not None:
            return self.encoding.n_vocab
        ids = [*self.added_tokens.by_id, *getattr(self.model, "vocab_r", range(self.model.get_vocab_size()))]
        return max(ids, default=-1) + 1

    def get_vocab(self, with_added_tokens: bool = True) -> dict[str, int]:
        """``{token string: id}``, as Hugging Face's ``Tokenizer.get_vocab``: the model's tokens
        (a rank model's bytes in the byte-level alphabet of the ``tokenizer.json`` that
        ``export_hf`` writes) and, with ``with_added_tokens``, the added and special tokens."""
        _check_flag("with_added_tokens", with_added_tokens)
        vocab: dict[str, int] = self.model.get_vocab()  # (a rank model's RankBPE: its special tokens are its added ones)
        if with_added_tokens:
            vocab.update((t.content, t.id) for t in self.added_tokens.tokens)
        return vocab

    def get_vocab_size(self, with_added_tokens: bool = True) -> int:
        """``len(get_vocab(with_added_tokens))``, as Hugging Face's ``Tokenizer.get_vocab_size``."""
        return len(self.get_vocab(with_added_tokens))

    def add_tokens(self, tokens: Sequence[Any]) -> int:
        """Adds tokens matched in the text before the pipeline runs, as Hugging Face's
        ``Tokenizer.add_tokens``: each a ``str`` (not special, matched in the normalized text) or an
        added-token object (``bpekit.pipeline.AddedToken`` or ``tokenizers.AddedToken``: its
        ``content`` and flags; an id it has is not used). A token already added is skipped; one the
        model has keeps the model's id; the others take the next ids. Returns how many were added.
        Rank models have special tokens only: see :meth:`add_special_tokens`."""
        if self.encoding is not None:
            raise UsageError("a rank model (tiktoken-style) has no added tokens but special ones: use add_special_tokens")
        return self._add(tokens, special=False)

    def add_special_tokens(self, tokens: Sequence[Any]) -> int:
        """Adds special tokens, as Hugging Face's ``Tokenizer.add_special_tokens`` (a ``str`` is
        special and matched in the raw text; :meth:`add_tokens` says the rest). A rank model takes
        them as tiktoken's special tokens, with the ids after its highest (``n_vocab`` on), and
        rebuilds its ``Encoding``. Returns how many were added."""
        if self.encoding is None:
            return self._add(tokens, special=True)
        contents = [_added(t, special=True).content for t in _token_list(tokens)]
        specials = dict(self.special_tokens)
        n = self.n_vocab
        for content in contents:
            if content and content not in specials:  # (an empty token matches nothing: skipped, as Hugging Face)
                specials[content] = n
                n += 1
        added = len(specials) - len(self.special_tokens)
        if added:
            specials = _specials(specials, len(self.ranks))
            self._init_ranks(self.ranks, specials, self.pattern, self.encoding.name)  # type: ignore[arg-type]
        return added

    def _add(self, tokens: Sequence[Any], special: bool) -> int:
        """Hugging Face's ``AddedVocabulary::add_tokens``: the next id is the model's size, or one
        past the highest added id when that is already past it."""
        have = {t.content for t in self.added_tokens.tokens}
        new: list[AddedToken] = []
        top = max((t.id for t in self.added_tokens.tokens), default=-1)
        size = int(self.model.get_vocab_size())
        for item in _token_list(tokens):
            token = _added(item, special)
            if not token.content or token.content in have:
                continue
            tid = self.model.token_to_id(token.content)
            if tid is None:
                tid = top + 1 if top >= size or size == 0 else size
            top = max(top, tid)
            new.append(AddedToken(tid, token.content, token.single_word, token.lstrip, token.rstrip,
                                  token.normalized, token.special))
            have.add(token.content)
        if new:
            normalize = self.normalizer.normalize if self.normalizer is not None else None
            self.added_tokens = AddedVocabulary([*self.added_tokens.tokens, *new], normalize)
            self._refresh()
        return len(new)

    def token_to_id(self, token: str | bytes) -> int | None:
        """The id of a token (``str``: special/added token or model token; ``bytes``: rank models'
        token bytes); ``None`` if absent."""
        if isinstance(token, str):
            added = self.added_tokens.by_content.get(token)
            if added is not None:
                return added.id
            if self.encoding is None:
                return self.model.token_to_id(token)  # type: ignore[no-any-return]
            token = token.encode("utf-8")
        if self.encoding is None:
            raise InputTypeError("this tokenizer's tokens are str")
        return self.ranks.get(bytes(token))

    def id_to_token(self, token_id: int) -> bytes | str:
        """A rank model's token bytes or special string; a pipeline's token string."""
        try:
            if self.encoding is not None:
                if token_id in self._decoder:
                    return self._decoder[token_id]
                if token_id in self._special_ids:
                    return self._special_ids[token_id]
            else:
                token = self.added_tokens.strings.get(token_id)
                if token is None:
                    token = self.model.id_to_token(token_id)
                if token is not None:
                    return token  # type: ignore[no-any-return]
        except TypeError:  # unhashable (a list, an array)
            pass
        try:
            token_id = operator.index(token_id)
        except TypeError:
            raise InputTypeError(f"a token id must be an int, got {type(token_id).__name__}") from None
        if not 0 <= token_id < 2**32:
            raise IdRangeError(f"token id {token_id} is out of range (0..2**32)")
        raise InvalidTokenError(f"Invalid token for decoding: {token_id}")

    # ---- encoding ----

    def encode(
        self,
        text: str,
        add_special_tokens: bool = False,
        *,
        allowed_special: Specials = frozenset(),
        disallowed_special: Specials = "all",
    ) -> list[int]:
        """Token ids of ``text``. Rank models follow tiktoken's special-token policy
        (``allowed_special``/``disallowed_special``); pipelines match added tokens always, as
        Hugging Face does, and run the post-processor when ``add_special_tokens``."""
        _check_flag("add_special_tokens", add_special_tokens)
        if not self._calls_bound:
            self._bind_calls()
        if self.encoding is not None:
            ids = self.encoding.encode(text, allowed_special=allowed_special, disallowed_special=disallowed_special)
        else:
            ids = self._encode_pipeline(_check_text(text), True)
        if add_special_tokens and self.post_processor is not None:
            ids = self.post_processor.process(ids)
        return ids

    def encode_with_offsets(
        self,
        text: str,
        add_special_tokens: bool = False,
        *,
        allowed_special: Specials = frozenset(),
        disallowed_special: Specials = "all",
    ) -> tuple[list[int], list[tuple[int, int]]]:
        """:meth:`encode` and, for each id, the span ``(start, end)`` of ``text`` it stands for, in
        characters: Hugging Face's ``Encoding.offsets`` for a ``tokenizer.json`` pipeline (the
        normalizer's changes mapped back, a byte-fallback or byte-level token inside a character
        spanning it, the post-processor's ``trim_offsets``, ``(0, 0)`` for the ids it adds); a
        rank model's are :meth:`Encoding.encode_with_offsets`'s. ``bpekit.offsets`` says more."""
        _check_flag("add_special_tokens", add_special_tokens)
        if self.encoding is not None:
            ids, offsets = self.encoding.encode_with_offsets(text, allowed_special=allowed_special,
                                                             disallowed_special=disallowed_special)
            return self._place(ids, offsets, add_special_tokens)
        return self._place(*self._pipeline_offsets(_check_text(text)), add_special_tokens)

    def _place(self, ids: list[int], offsets: list[tuple[int, int]],
               add_special_tokens: bool) -> tuple[list[int], list[tuple[int, int]]]:
        """The ids and offsets of a text with the post-processor's ids around them, if asked."""
        if add_special_tokens and self.post_processor is not None:
            marks, offsets = self.post_processor.place(offsets)
            ids = [ids[-1 - m] if m < 0 else m for m in marks]
        return ids, offsets

    def encode_batch_with_offsets(
        self,
        texts: Sequence[str],
        add_special_tokens: bool = False,
        *,
        num_threads: int = 0,
        allowed_special: Specials = frozenset(),
        disallowed_special: Specials = "all",
    ) -> list[tuple[list[int], list[tuple[int, int]]]]:
        """:meth:`encode_with_offsets` of each text (a rank model's ids encoded in parallel, as
        :meth:`Encoding.encode_batch_with_offsets`, and a byte-level pipeline's as
        :meth:`encode_batch`, where its whole texts give offsets at once; a model over characters
        split in Rust normalizes, merges and spans the texts no added token cuts on the Rust
        threads; other pipelines' text by text)."""
        _check_flag("add_special_tokens", add_special_tokens)
        texts = _check_batch(texts)
        if self.encoding is not None:
            spans = self.encoding.encode_batch_with_offsets(texts, num_threads=num_threads,
                                                            allowed_special=allowed_special,
                                                            disallowed_special=disallowed_special)
            return [self._place(ids, offsets, add_special_tokens) for ids, offsets in spans]
        from bpekit.offsets import aligned_input

        self._refresh()
        fast = self._byte_offsets()
        if fast is not None and fast[3] and len(texts) >= 2:
            return self._char_batch_offsets(texts, fast, num_threads, add_special_tokens)
        if fast is None or fast[1] or not fast[2] or fast[3] or len(texts) < 2:
            return [self._place(*self._pipeline_offsets(t), add_special_tokens) for t in texts]
        fixed = [aligned_input(t).text for t in texts]  # (lone surrogates fixed, as encode fixes them)
        batch = self.encode_batch(fixed, num_threads=num_threads)
        return [self._place(*self._pipeline_offsets(t, ids), add_special_tokens) for t, ids in zip(texts, batch)]

    def _char_batch_offsets(self, texts: list[str], fast: tuple[Any, bool, bool, bool], num_threads: int,
                            add_special_tokens: bool) -> list[tuple[list[int], list[tuple[int, int]]]]:
        """:meth:`encode_batch_with_offsets` of a model whose spans come piece by piece from Rust
        (``fast[3]``): the texts that no added token cuts, normalized by a Rust program (or by no
        normalizer), in one call on the Rust threads (``PairBPE.encode_offsets_batch``, what
        :meth:`_pipeline_offsets` does with each); any other text, and any the model gives no
        spans for, through :meth:`_pipeline_offsets`."""
        from bpekit.offsets import aligned_input

        program = self._program()
        if (self.normalizer is not None and program is None) or self.added_tokens.cuts_normalized:
            return [self._place(*self._pipeline_offsets(t), add_special_tokens) for t in texts]
        fixed = [aligned_input(t) for t in texts]  # (lone surrogates fixed, as encode fixes them)
        whole = [i for i, a in enumerate(fixed) if not self.added_tokens.in_raw_text(a.text)]
        got = self._fast.encode_offsets_batch([fixed[i].text for i in whole], fast[0], program, num_threads)
        out: list[tuple[list[int], list[tuple[int, int]]] | None] = [None] * len(texts)
        for i, one in zip(whole, got):
            if one is not None:
                ids, spans = one
                spans = fixed[i].map(spans) if fixed[i].text is not texts[i] else spans
                out[i] = ids, self._trimmed(ids, spans, [], fast)
        return [self._place(*(done if done is not None else self._pipeline_offsets(t)), add_special_tokens)
                for t, done in zip(texts, out)]

    def _program(self) -> Any:
        """The normalizer as a Rust program (``core_normalizer``'s ``_core.Normalizer``), or ``None``
        (no normalizer, or one only Python runs)."""
        program = self._normalize[0]
        return program if isinstance(program, _core.Normalizer) else None

    def _pipeline_offsets(self, text: str, known: list[int] | None = None) -> tuple[list[int], list[tuple[int, int]]]:
        """A pipeline's ids of ``text`` (added tokens matched) with their offsets, computed in
        Python through each stage's ``align`` / ``pre_tokenize_aligned`` / ``tokenize_spans``
        (``known``: ``encode``'s ids of the text, if known, for the whole-text path)."""
        from bpekit.offsets import aligned_input

        self._refresh()
        model = self.model
        if not hasattr(model, "tokenize_spans"):
            raise UsageError(f"{type(model).__name__} does not give offsets: a model stage of your own needs a "
                             "tokenize_spans() method")
        fast = self._byte_offsets()
        aligned = aligned_input(text)
        whole = self._whole_offsets(aligned.text, fast, known) if fast is not None and not fast[3] else None
        ids: list[int] = []
        offsets: list[tuple[int, int]] = []
        if whole is not None:  # (every id from one Rust call, every span from one table)
            ids, offsets = whole[0], aligned.map(whole[1]) if aligned.text is not text else whole[1]
        matched: list[tuple[int, str]] = []  # (index, text) of added tokens that took whitespace
        program = self._program()
        # a Rust program aligns a text in one call (``_aligner``); with a model over characters split
        # in Rust, whose segments no normalized added token cuts, the model's call normalizes each
        # segment itself and maps the spans back (``PairBPE.encode_offsets``)
        align = self._aligner
        fused = program is not None and fast is not None and fast[3] and not self.added_tokens.cuts_normalized
        for part, tid, first in self.added_tokens.split_aligned(aligned, None if fused else align) if whole is None else ():
            if tid is not None:  # (the span of the match, with the whitespace lstrip/rstrip took)
                if part.text != self.added_tokens.by_id[tid].content:
                    matched.append((len(ids), part.text))  # (trimmed by what it matched, as HF)
                ids.append(tid)
                offsets.append(part.span(0, len(part)))
            elif fast is not None and not fast[3] and (spelled := self._spelled(part.text, fast)) is not None:
                ids += spelled[0]  # (a byte-level model in Rust: its ids spell the part's UTF-8)
                offsets += part.map(spelled[1])
            elif fast is not None and (found := self._fast.encode_offsets(part.text, fast[0], first,
                                                                          program if fused else None)) is not None:
                ids += found[0]  # (each piece's ids spell its bytes: CLIP's stage drops spaces)
                offsets += part.map(found[1])
            else:
                part = align.align(part) if fused else part
                pieces = self.pre_tokenizer.pre_tokenize_aligned([(part, first)]) if self.pre_tokenizer else [(part, first)]
                for piece, _ in pieces:
                    got, piece_spans = model.tokenize_spans(piece.text)
                    ids += got
                    offsets += piece.map(piece_spans)
        return ids, self._trimmed(ids, offsets, matched, fast)

    def _trimmed(self, ids: list[int], offsets: list[tuple[int, int]], matched: list[tuple[int, str]],
                 fast: tuple[Any, bool, bool, bool] | None) -> list[tuple[int, int]]:
        """``offsets`` of ``ids`` as the post-processor trims them (``trim_offsets``), ``matched``
        the (index, text) of added tokens that took whitespace."""
        model = self.model
        passes = self.post_processor.trim_passes() if self.post_processor is not None else []
        if passes and fast is not None:
            at = [(k, spaces_at_ends(t)) for k, t in matched]
            for add_prefix_space in passes:
                offsets = fast[0].trim(ids, offsets, add_prefix_space, at)
        elif passes:
            added = self.added_tokens.by_id
            strings = model.vocab_r if isinstance(model, BPE) else {i: model.id_to_token(i) for i in set(ids)}
            tokens = [added[i].content if i in added else strings.get(i) or "" for i in ids]
            for k, t in matched:
                tokens[k] = t
            offsets = self.post_processor.trim(tokens, offsets)  # type: ignore[union-attr]
        return offsets

    def _spelled(self, text: str, fast: tuple[Any, bool, bool, bool]) -> tuple[list[int], list[tuple[int, int]]] | None:
        """A byte-level model's ids of one segment and their spans from the table of byte lengths,
        where the ids spell the segment's UTF-8 (after the prefix space a ``ByteLevel`` stage puts
        before it); ``None`` where they do not (a byte the vocabulary lacks was dropped: the
        Python stages then give the spans)."""
        got = self._fast.encode(text)
        skip = int(fast[1] and bool(text) and not text.startswith(" "))  # (the prefix space)
        try:
            return got, fast[0].char_offsets(text, got, skip)
        except ValueError:
            return None

    def _whole_offsets(self, text: str, fast: tuple[Any, bool, bool],
                       ids: list[int] | None = None) -> tuple[list[int], list[tuple[int, int]]] | None:
        """A byte-level pipeline's ids and spans of a whole text at once, where that gives what
        the segments would: no prefix space before segments, a text the normalizer leaves as it
        is, and ids (added tokens' included) whose bytes spell it (an ``lstrip`` / ``rstrip``
        added token's ids do not: the segments take it); else ``None``."""
        table, prefix_space, added_spelled, _ = fast
        if prefix_space or not added_spelled or not text:
            return None
        if self.normalizer is not None and self.normalizer.normalize(text) != text:
            return None
        ids = self.encode(text) if ids is None else ids
        try:
            return ids, table.char_offsets(text, ids)
        except ValueError:  # (they do not spell the text)
            return None

    def _byte_offsets(self) -> tuple[Any, bool, bool, bool] | None:
        """For a pipeline whose pre-tokenizer and model run in Rust (``_fast``), the byte length of
        each model id (``_core.ByteLengths``, made once per model), whether a prefix space goes
        before each segment, whether added tokens' ids spell them, and whether the spans must
        come piece by piece (``PairBPE.encode_offsets``: a split stage drops text, as CLIP's
        drops whitespace, or a model over characters); ``None`` where offsets take the Python
        stages (a prefix space before every piece, dropout, a subword prefix)."""
        if not isinstance(self._fast, _core.PairBPE):
            return None
        cached = self.__dict__.get("_offset_table")
        if cached is None or cached[0] is not self._fast or cached[1] is not self.added_tokens:
            config = split_config(self.pre_tokenizer)
            isolated = isolated_config(self.pre_tokenizer) if config is None else None
            table = None
            # a token's bytes are its piece's without the suffix (a subword prefix could not be
            # told from the same characters of the text: those take the Python stages)
            suffix = self.model.end_of_word_suffix or ""
            gaps = isolated is not None and any(p.startswith(MATCHES_ONLY) for p in isolated[0])
            # a model over characters split by stages (``char_stages``), by ``Metaspace`` or not at
            # all (Llama 2's): each token's own UTF-8, its unk token left to the core (the unknown
            # characters it stands for), its byte tokens one byte; piece by piece, as the stages
            # may drop text
            pre = self.pre_tokenizer
            chars = config is None and isolated is None and (
                pre is None or type(pre) is pre_tokenizers.Metaspace or char_stages(pre) is not None)
            unk = self.model.vocab.get(self.model.unk_token) if self.model.unk_token is not None else None
            if chars and unk is not None and any(self.model.unk_token in m for m in self.model.merges):
                chars = False  # (an unk token merged into others: their lengths are unknown)
            vocab, added = self.model.vocab, self.added_tokens.by_id
            # (the model's own ids are dense, as it has a Rust model: ``BPE.dense_ids``; an added id may be far out)
            dense = dense_table_ok(max(added, default=-1) + 1, len(vocab) + len(added))
            if not self.model.continuing_subword_prefix and dense and (chars or
                    (config is not None and not config[2]) or (isolated is not None and not isolated[1])):
                size = max(max(vocab.values(), default=-1), max(added, default=-1)) + 1
                lengths, ends = [0] * size, [(0, 0)] * size
                if chars:  # (each token's own UTF-8, a byte token one byte)
                    own_lengths = self.model.token_lengths()
                    lengths[:len(own_lengths)] = own_lengths
                for token, i in vocab.items():
                    if not chars:
                        own = token[:-len(suffix)] if suffix and token.endswith(suffix) else token
                        data = to_bytes(own)
                        lengths[i] = len(data) if data is not None else len(own.encode("utf-8"))
                    ends[i] = spaces_at_ends(token)
                # an added token's ids spell its content, unless the model's token of that id
                # is other bytes (then only the segments' path is exact)
                spelled = True
                for i, t in added.items():  # (the string Hugging Face trims an added token by)
                    ends[i] = spaces_at_ends(t.content)
                    n = len(t.content.encode("utf-8", "surrogatepass"))
                    spelled &= lengths[i] in (0, n)
                    lengths[i] = lengths[i] or n
                if chars and unk is not None:
                    lengths[unk] = 0  # (the model's unk: the core spans the characters it stands for)
                table = (_core.ByteLengths(lengths, ends), config is not None and config[1], spelled, gaps or chars)
            cached = self.__dict__["_offset_table"] = (self._fast, self.added_tokens, table)
        return cached[2]

    def count(
        self,
        text: str,
        add_special_tokens: bool = False,
        *,
        allowed_special: Specials = frozenset(),
        disallowed_special: Specials = "all",
    ) -> int:
        """``len(encode(text, ...))`` without building the list: a rank model's
        :meth:`Encoding.count`, a pair-merge pipeline's (``tokenizer.json``, GGUF) count in Rust
        plus the ids a post-processor only puts around the text."""
        _check_flag("add_special_tokens", add_special_tokens)
        if self.encoding is not None and not (add_special_tokens and self.post_processor is not None):
            return self.encoding.count(text, allowed_special=allowed_special, disallowed_special=disallowed_special)
        if self.encoding is None and isinstance(text, str) and len(text) >= _COUNT_IN_RUST_FROM:
            if not self._calls_bound:  # (binding refreshes the Rust model after a stage was replaced)
                self._bind_calls()
            if (matchers := self._added_fast) is not None and (around := self._around(add_special_tokens)) is not None:
                n = self._fast.encode_added(_check_text(text), *matchers, *self._normalize, True)
                return n + len(around[0]) + len(around[1])  # type: ignore[no-any-return]
        if self.encoding is None:  # (a pipeline has no policy: the bound `encode` takes this call)
            return len(self.encode(text, add_special_tokens))
        return len(self.encode(text, add_special_tokens, allowed_special=allowed_special,
                               disallowed_special=disallowed_special))

    def truncate(
        self,
        text: str,
        max_tokens: int,
        *,
        side: str = "right",
        allowed_special: Specials = frozenset(),
        disallowed_special: Specials = "all",
    ) -> str:
        """A part of ``text`` that encodes (``encode(part)``, no post-processor) to at most
        ``max_tokens`` ids: its start (``side="right"``, the default, cuts the end) or its end
        (``side="left"``). A rank model cuts as :meth:`Encoding.truncate` (with its special-token
        policy). A pipeline searches the cut (:func:`bpekit.encoding.longest_cut`): a window that
        doubles until it takes more than ``max_tokens`` ids, then a binary search over characters,
        so the work depends on the budget, not on the length of the text (its offsets would map
        ids back to the text, but only after encoding all of it)."""
        if self.encoding is not None:
            return self.encoding.truncate(text, max_tokens, side=side, allowed_special=allowed_special,
                                          disallowed_special=disallowed_special)
        text = _check_text(text)
        max_tokens = _check_cut(max_tokens, side)
        text = _fix_surrogates(text) if _has_surrogates(text) else text  # (cuts of the text encoded)
        return longest_cut(text, max_tokens, self.count, from_end=side == "left")

    def encode_ordinary(self, text: str) -> list[int]:
        """Token ids with no special-token handling (special and added tokens are plain text)."""
        if self.encoding is not None:
            return self.encoding.encode_ordinary(text)
        return self._encode_pipeline(_check_text(text), False)

    def encode_batch(
        self,
        texts: Sequence[str],
        add_special_tokens: bool = False,
        *,
        num_threads: int = 0,
        allowed_special: Specials = frozenset(),
        disallowed_special: Specials = "all",
    ) -> list[list[int]]:
        """``encode`` of each text (rank models: in parallel in the core, ``num_threads`` 0 = all)."""
        _check_flag("add_special_tokens", add_special_tokens)
        if self.encoding is not None and not (add_special_tokens and self.post_processor):
            return self.encoding.encode_batch(
                list(texts), num_threads=num_threads, allowed_special=allowed_special,
                disallowed_special=disallowed_special,
            )
        if self.encoding is not None:
            return [self.encode(t, add_special_tokens, allowed_special=allowed_special,
                                disallowed_special=disallowed_special) for t in _check_batch(texts)]
        texts, num_threads = _check_batch(texts), _check_threads(num_threads)
        around = self._around(add_special_tokens)
        if around is None:  # a post-processor that does more than add ids around the text
            return [self.post_processor.process(ids) for ids in self._pipeline_batch(texts, num_threads, LISTS)]
        return self._pipeline_batch(texts, num_threads, LISTS, around)  # type: ignore[no-any-return]

    def count_batch(
        self,
        texts: Sequence[str],
        add_special_tokens: bool = False,
        *,
        num_threads: int = 0,
        allowed_special: Specials = frozenset(),
        disallowed_special: Specials = "all",
    ) -> list[int]:
        """The number of ids ``encode_batch`` gives each text, without building the lists. Rank
        models (:meth:`Encoding.count_batch`), pair-merge pipelines (``tokenizer.json``, GGUF) and
        SentencePiece models count in Rust on ``num_threads`` threads (0 = one per core),
        keeping no ids; the ids a post-processor adds around each text (``add_special_tokens``)
        are counted with them. Other pipelines and post-processors go through ``encode_batch``."""
        _check_flag("add_special_tokens", add_special_tokens)
        texts, num_threads = _check_batch(texts), _check_threads(num_threads)
        around = self._around(add_special_tokens)
        if around is None:
            return [len(ids) for ids in self.encode_batch(texts, add_special_tokens, num_threads=num_threads,
                                                          allowed_special=allowed_special,
                                                          disallowed_special=disallowed_special)]
        if self.encoding is not None:
            counts = self.encoding.count_batch(texts, num_threads=num_threads, allowed_special=allowed_special,
                                               disallowed_special=disallowed_special)
            extra = len(around[0]) + len(around[1])
            return [n + extra for n in counts] if extra else counts
        return self._pipeline_batch(texts, num_threads, COUNTS, around)  # type: ignore[no-any-return]

    def encode_to_numpy(
        self,
        text: str,
        add_special_tokens: bool = False,
        *,
        allowed_special: Specials = frozenset(),
        disallowed_special: Specials = "all",
    ) -> npt.NDArray[np.uint32]:
        """``encode`` as a ``uint32`` numpy array, made without a list."""
        _check_flag("add_special_tokens", add_special_tokens)
        if self.encoding is not None and not (add_special_tokens and self.post_processor is not None):
            return self.encoding.encode_to_numpy(text, allowed_special=allowed_special,
                                                 disallowed_special=disallowed_special)
        flat, _ = self.encode_batch_to_numpy([_check_text(text)], add_special_tokens, num_threads=1,
                                             allowed_special=allowed_special, disallowed_special=disallowed_special)
        return flat

    def encode_batch_to_numpy(
        self,
        texts: Sequence[str],
        add_special_tokens: bool = False,
        *,
        num_threads: int = 0,
        allowed_special: Specials = frozenset(),
        disallowed_special: Specials = "all",
    ) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.int64]]:
        """``encode_batch`` as one flat ``uint32`` array and ``int64`` offsets (``len(texts) + 1``):
        the ids of text ``i`` are ``flat[offsets[i]:offsets[i + 1]]``. Rank models, pair-merge
        pipelines (``tokenizer.json``, GGUF) and SentencePiece models fill the array in Rust, on
        ``num_threads`` threads (0 = one per core), with no Python object per id, and with the
        ids a post-processor adds around each text (``add_special_tokens``: templates, BERT,
        RoBERTa). Other pipelines, and other post-processors, go through ``encode_batch``."""
        _check_flag("add_special_tokens", add_special_tokens)
        from bpekit.flat import from_lists, with_affixes

        texts, num_threads = _check_batch(texts), _check_threads(num_threads)
        around = self._around(add_special_tokens)
        if around is None:
            return from_lists(self.encode_batch(texts, add_special_tokens, num_threads=num_threads,
                                                allowed_special=allowed_special,
                                                disallowed_special=disallowed_special))
        if self.encoding is not None:
            flat, offsets = self.encoding.encode_batch_to_numpy(texts, num_threads=num_threads, allowed_special=allowed_special,
                                                                disallowed_special=disallowed_special)
            return with_affixes(flat, offsets, *around)
        return self._pipeline_batch(texts, num_threads, FLAT, around)  # type: ignore[no-any-return]

    def _around(self, add_special_tokens: bool) -> tuple[list[int], list[int]] | None:
        """The ids the post-processor puts before and after a text (none without
        ``add_special_tokens``), or ``None`` if it does more than that (read at every call: the
        post-processor runs in Python and may change in place)."""
        if not add_special_tokens or self.post_processor is None:
            return [], []
        return affixes(self.post_processor)

    def _pipeline_batch(self, texts: list[str], num_threads: int, out: int,
                        around: tuple[list[int], list[int]] = ([], [])) -> Any:
        """A pipeline's ids of ``texts`` (added tokens matched), with ``around``'s ids before and
        after each text's, as ``out`` says: lists (``LISTS``), one ``uint32`` array and offsets
        (``FLAT``), or each text's number of ids (``COUNTS``). In one Rust call where the model is
        in Rust and its added tokens are cut there (or it has none)."""
        self._refresh()
        fast = self._fast
        if (matchers := self._added_fast) is not None:  # lone surrogates fixed in Rust
            return fast.encode_added_batch(texts, *matchers, *self._normalize, num_threads, around, out)
        if fast is not None and self.normalizer is None and not self.added_tokens.strings:
            try:  # each text is one segment
                return fast.encode_batch(texts, num_threads, around, out)
            except UnicodeEncodeError:  # a lone surrogate: the segments below fix it
                pass
        if fast is not None:
            lists = encode_texts(fast, self._segments, texts, True, num_threads)
        else:
            lists = [self._encode_pipeline(t, True) for t in texts]
        prefix, suffix = around
        if out == COUNTS:
            return [len(prefix) + len(ids) + len(suffix) for ids in lists]
        if prefix or suffix:
            lists = [[*prefix, *ids, *suffix] for ids in lists]
        if out == FLAT:
            from bpekit.flat import from_lists

            return from_lists(lists)
        return lists

    def _segments(self, text: str, match_added: bool) -> list[tuple[str, int | None, bool]]:
        """``(text, None, first)`` runs for the model and ``(content, id, first)`` added tokens."""
        text = _fix_surrogates(text) if _has_surrogates(text) else text
        normalize = self.normalizer.normalize if self.normalizer is not None else None
        if match_added:
            return self.added_tokens.split(text, normalize)  # type: ignore[no-any-return]
        return [(normalize(text) if normalize else text, None, True)]

    def _encode_pipeline(self, text: str, match_added: bool) -> list[int]:
        self._refresh()
        if self._fast is not None:  # one text: each model segment in one Rust call, no batch plan
            # (a text with lone surrogates is not UTF-8: the Rust call refuses it and it is fixed
            # as tiktoken does, rather than every text being checked first)
            if self.normalizer is None and not self.added_tokens.strings:  # one segment: the text
                return _valid_text(self._fast.encode, text)  # type: ignore[no-any-return]
            if match_added and (matchers := self._added_fast) is not None:
                # added tokens cut in Rust (lone surrogates fixed there): a text made of them (a
                # megabyte of the space runs GPT-NeoX adds) costs no Python per token
                return self._fast.encode_added(text, *matchers, *self._normalize)  # type: ignore[no-any-return]
            ids: list[int] = []
            for part, tid, _ in self._segments(text, match_added):
                if tid is None:
                    ids.extend(self._fast.encode(part))
                else:
                    ids.append(tid)
            return ids
        text = _fix_surrogates(text) if _has_surrogates(text) else text
        normalize = self.normalizer.normalize if self.normalizer is not None else None
        if match_added:
            segments = self.added_tokens.split(text, normalize)
        else:
            segments = [(normalize(text) if normalize else text, None, True)]
        ids = []
        for part, tid, first in segments:
            if tid is not None:
                ids.append(tid)
            elif self._splitter is not None:
                ids.extend(self._encode_pieces(self._splitter(part)))
            elif self.pre_tokenizer is not None:
                for piece, _ in self.pre_tokenizer.pre_tokenize([(part, first)]):
                    ids.extend(self.model.tokenize(piece))
            elif part:
                ids.extend(self.model.tokenize(part))
        return ids

    def _encode_pieces(self, pieces: list[str]) -> list[int]:
        """Raw pieces through the byte alphabet and the model, with a piece -> ids cache."""
        cache, model, out = self._pieces, self.model, list[int]()
        budget = getattr(self, "_cache_bytes", None)
        most = _PIECE_CACHE if budget is None else budget // _PY_ENTRY_BYTES
        uncached = bool(model.dropout) or most == 0
        for piece in pieces:
            ids = None if uncached else cache.get(piece)
            if ids is None:
                ids = model.tokenize(to_chars(piece.encode("utf-8")))
                if not uncached and len(piece) <= CACHE_MAX_WORD:  # (a long piece: not kept)
                    if len(cache) >= most:
                        cache.clear()
                    cache[piece] = ids
            out.extend(ids)
        return out

    # ---- decoding ----

    def decode_bytes(self, tokens: Sequence[int]) -> bytes:
        if self.encoding is None:
            raise UsageError("decode_bytes needs a byte-level rank model; use decode")
        return self.encoding.decode_bytes(tokens)

    def decode(self, tokens: Sequence[int], errors: str = "replace", *, skip_special_tokens: bool = False) -> str:
        """The text of ``tokens``. Pipelines map ids to token strings (added tokens first) and run
        the decoder (or join with spaces when there is none, as Hugging Face does)."""
        _check_flag("skip_special_tokens", skip_special_tokens)
        if not self._calls_bound:
            self._bind_calls()
        if self.encoding is None and (fast := self._decode_ids()) is not None:
            if (text := fast.decode(tokens, skip_special_tokens)) is not None:
                return text  # type: ignore[no-any-return]
        tokens = _check_tokens(tokens)
        if skip_special_tokens:
            tokens = [t for t in tokens if t not in self._special_id_set()]
        if self.encoding is not None:
            return self.encoding.decode(tokens, errors)
        strings = [str(self.id_to_token(t)) for t in tokens]
        if self.decoder is None:
            return " ".join(strings)
        return self.decoder.decode(strings)  # type: ignore[no-any-return]

    def decode_batch(self, batch: Sequence[Sequence[int]], errors: str = "replace", *,
                     skip_special_tokens: bool = False, num_threads: int = 0) -> list[str]:
        """``decode`` of each id sequence (Hugging Face's ``decode_batch``): a rank model's in one
        core call on ``num_threads`` threads (0 = one per core), a pipeline's through the bound
        ``decode`` (Rust where its decoder has a table of every id)."""
        _check_flag("skip_special_tokens", skip_special_tokens)
        if isinstance(batch, (str, bytes)) or not isinstance(batch, Sequence):
            raise InputTypeError(f"a batch must be a list of token sequences, got {type(batch).__name__}")
        if self.encoding is not None and not skip_special_tokens:
            return self.encoding.decode_batch(batch, errors=errors, num_threads=_check_threads(num_threads))
        decode = self.decode
        return [decode(ids, errors, skip_special_tokens=skip_special_tokens) for ids in batch]

    def _decode_ids(self) -> Any:
        """The decoder's table for decoding ids in one Rust call (``decode_table``: ByteLevel and
        SentencePiece decoders), rebuilt when the decoder, the model or the added tokens are
        replaced; ``None`` when the decoder has none."""
        key = (self.decoder, self.model, self.added_tokens)
        built = getattr(self, "_decode_built", None)
        if built is not None and all(a is b for a, b in zip(built[0], key, strict=True)):
            return built[1]
        make = getattr(self.decoder, "decode_table", None)
        table = make(self) if make is not None else None
        self._decode_built = (key, table)
        return table

    def _special_id_set(self) -> frozenset[int]:
        if self.encoding is not None:
            return frozenset(self.special_tokens.values())
        return self.added_tokens.special_ids

    # ---- files ----

    def to_dict(self) -> dict[str, Any]:
        """The bpekit file (v1) document of a rank model whose ids follow its merges."""
        return bpekit_file.to_dict(self)

    def save(self, path: str | os.PathLike[str], format: str | None = None) -> None:
        """Writes the tokenizer atomically as ``format``: any format ``bpekit convert`` writes
        (``bpekit.formats.savers.TARGETS``: bpekit, hf, tiktoken, sentencepiece, gguf, minbpe,
        gpt2). Default: the format it was loaded from, else bpekit for trained byte-level models
        and hf for pipelines."""
        from bpekit.formats import savers

        if format is None:
            # (a trained model with no merges has `_merges == []`: it was saved as hf, announced as bpekit)
            format = self.source_format or ("bpekit" if self.encoding is not None and self._merges is not None else "hf")
        savers.save(self, path, format)

    @classmethod
    def from_str(cls, json: str, *, seed: int | None = None) -> Tokenizer:
        """A tokenizer from the text of a Hugging Face ``tokenizer.json``, as
        ``tokenizers.Tokenizer.from_str`` (``seed=``: BPE dropout's, as for ``from_file``)."""
        if not isinstance(json, str):
            raise InputTypeError(f"from_str takes the text of a tokenizer.json (str), got {type(json).__name__}; "
                                 "bytes go to from_buffer")
        try:
            raw = json.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise FormatError(f"<str>: a lone surrogate at position {exc.start} is no JSON text") from None
        return cls.from_buffer(raw, seed=seed)

    @classmethod
    def from_buffer(cls, buffer: bytes, *, seed: int | None = None) -> Tokenizer:
        """A tokenizer from the bytes of a Hugging Face ``tokenizer.json``, as
        ``tokenizers.Tokenizer.from_buffer``."""
        from bpekit.formats import hf

        if not isinstance(buffer, (bytes, bytearray, memoryview)):
            raise InputTypeError(f"from_buffer takes the bytes of a tokenizer.json, got {type(buffer).__name__}")
        return hf.loads(bytes(buffer), "<buffer>", seed=seed)  # type: ignore[no-any-return]

    def to_str(self, pretty: bool = False) -> str:
        """This tokenizer as the text of a Hugging Face ``tokenizer.json``, as
        ``tokenizers.Tokenizer.to_str`` (compact, or indented by 2 with ``pretty``); ``save(path,
        "hf")`` writes the same document to a file."""
        import json

        from bpekit.formats import hf

        _check_flag("pretty", pretty)
        return json.dumps(hf.document(self), ensure_ascii=False, indent=2 if pretty else None,
                          separators=(",", ": ") if pretty else (",", ":"))

    @classmethod
    def from_dict(cls, doc: Mapping[str, Any], source: str = "<dict>") -> Tokenizer:
        """A tokenizer from a bpekit file (v1) document."""
        return bpekit_file.from_dict(cls, doc, source)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Tokenizer:
        """A tokenizer from a bpekit file."""
        return bpekit_file.load(cls, path)

    def export_tiktoken(self, path: str | os.PathLike[str]) -> str:
        """Writes a ``.tiktoken`` rank file and, beside it, ``<path>.json`` with the pattern and the
        special tokens. Returns the sidecar's path."""
        if self.encoding is None or self.pattern is None:
            raise UsageError("a .tiktoken file holds byte-level rank models only")
        sidecar = os.fspath(path) + ".json"
        atomic_write_all([(path, tiktoken_text(self.ranks)),
                          (sidecar, tiktoken_sidecar(self.pattern, self.special_tokens, self.n_vocab))])
        return sidecar

    def export_hf(self, path: str | os.PathLike[str]) -> None:
        """Writes a Hugging Face ``tokenizer.json`` that ``tokenizers.Tokenizer.from_file`` loads
        and that encodes exactly as this tokenizer does (special tokens always matched)."""
        self.save(path, "hf")


def ordinary_pipeline(tok: Tokenizer) -> Tokenizer:
    """``tok`` without its special added tokens, so that their text in a document is encoded as
    text (tiktoken's ``encode_ordinary`` rule, which a rank model follows; Hugging Face's
    ``encode_special_tokens = True``), while its other added tokens are still matched. A shallow
    copy: the Rust model is shared."""
    if not any(t.special for t in tok.added_tokens.tokens):
        return tok
    view = copy.copy(tok)
    normalize = tok.normalizer.normalize if tok.normalizer is not None else None
    view.added_tokens = AddedVocabulary([t for t in tok.added_tokens.tokens if not t.special], normalize)
    return view
