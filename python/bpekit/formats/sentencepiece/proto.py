"""The ``sentencepiece.ModelProto`` message (proto2), built in code and parsed by python-protobuf.

The descriptors are assembled at import time from the field tables of
``sentencepiece_model.proto`` (docs: ``formats.md`` section 4) into a private descriptor pool, so
bpekit neither ships generated ``*_pb2`` code nor depends on the ``sentencepiece`` package, and
the names never clash with a ``sentencepiece_model_pb2`` that the caller imports. proto2 keeps
field presence, float bit patterns and unknown fields, so a parsed file re-serializes to the same
bytes when its fields were written in field-number order (what every sentencepiece writer does).
"""

from __future__ import annotations

from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message, message_factory

from bpekit.errors import FormatError

_F = descriptor_pb2.FieldDescriptorProto
_OPT, _REP = _F.LABEL_OPTIONAL, _F.LABEL_REPEATED
_STRING, _BYTES, _BOOL, _FLOAT = _F.TYPE_STRING, _F.TYPE_BYTES, _F.TYPE_BOOL, _F.TYPE_FLOAT
_INT32, _UINT64, _ENUM, _MESSAGE = _F.TYPE_INT32, _F.TYPE_UINT64, _F.TYPE_ENUM, _F.TYPE_MESSAGE
_EXTENSIONS_END = 536870912  # ``extensions 200 to max``: the end is exclusive, max = 2**29 - 1

# (name, number, label, type, type name or None, default or None), as in sentencepiece_model.proto.
_TRAINER_SPEC = [
    ("input", 1, _REP, _STRING, None, None),
    ("input_format", 7, _OPT, _STRING, None, None),
    ("model_prefix", 2, _OPT, _STRING, None, None),
    ("model_type", 3, _OPT, _ENUM, ".sentencepiece.TrainerSpec.ModelType", "UNIGRAM"),
    ("vocab_size", 4, _OPT, _INT32, None, "8000"),
    ("accept_language", 5, _REP, _STRING, None, None),
    ("self_test_sample_size", 6, _OPT, _INT32, None, "0"),
    ("character_coverage", 10, _OPT, _FLOAT, None, "0.9995"),
    ("input_sentence_size", 11, _OPT, _UINT64, None, "0"),
    ("mining_sentence_size", 12, _OPT, _INT32, None, None),
    ("training_sentence_size", 13, _OPT, _INT32, None, None),
    ("seed_sentencepiece_size", 14, _OPT, _INT32, None, "1000000"),
    ("shrinking_factor", 15, _OPT, _FLOAT, None, "0.75"),
    ("num_threads", 16, _OPT, _INT32, None, "16"),
    ("num_sub_iterations", 17, _OPT, _INT32, None, "2"),
    ("max_sentence_length", 18, _OPT, _INT32, None, "4192"),
    ("shuffle_input_sentence", 19, _OPT, _BOOL, None, "true"),
    ("max_sentencepiece_length", 20, _OPT, _INT32, None, "16"),
    ("split_by_unicode_script", 21, _OPT, _BOOL, None, "true"),
    ("split_by_whitespace", 22, _OPT, _BOOL, None, "true"),
    ("split_by_number", 23, _OPT, _BOOL, None, "true"),
    ("treat_whitespace_as_suffix", 24, _OPT, _BOOL, None, "false"),
    ("split_digits", 25, _OPT, _BOOL, None, "false"),
    ("allow_whitespace_only_pieces", 26, _OPT, _BOOL, None, "false"),
    ("control_symbols", 30, _REP, _STRING, None, None),
    ("user_defined_symbols", 31, _REP, _STRING, None, None),
    ("vocabulary_output_piece_score", 32, _OPT, _BOOL, None, "true"),
    ("hard_vocab_limit", 33, _OPT, _BOOL, None, "true"),
    ("use_all_vocab", 34, _OPT, _BOOL, None, "false"),
    ("byte_fallback", 35, _OPT, _BOOL, None, "false"),
    ("required_chars", 36, _OPT, _STRING, None, None),
    ("unk_id", 40, _OPT, _INT32, None, "0"),
    ("bos_id", 41, _OPT, _INT32, None, "1"),
    ("eos_id", 42, _OPT, _INT32, None, "2"),
    ("pad_id", 43, _OPT, _INT32, None, "-1"),
    ("unk_surface", 44, _OPT, _STRING, None, " \u2047 "),
    ("unk_piece", 45, _OPT, _STRING, None, "<unk>"),
    ("bos_piece", 46, _OPT, _STRING, None, "<s>"),
    ("eos_piece", 47, _OPT, _STRING, None, "</s>"),
    ("pad_piece", 48, _OPT, _STRING, None, "<pad>"),
    ("train_extremely_large_corpus", 49, _OPT, _BOOL, None, "false"),
    ("enable_differential_privacy", 50, _OPT, _BOOL, None, "false"),
    ("differential_privacy_noise_level", 51, _OPT, _FLOAT, None, "0"),
    ("differential_privacy_clipping_threshold", 52, _OPT, _UINT64, None, "0"),
    ("pretokenization_delimiter", 53, _OPT, _STRING, None, ""),
    ("seed_sentencepieces_file", 54, _OPT, _STRING, None, ""),
]
_NORMALIZER_SPEC = [
    ("name", 1, _OPT, _STRING, None, None),
    ("precompiled_charsmap", 2, _OPT, _BYTES, None, None),
    ("add_dummy_prefix", 3, _OPT, _BOOL, None, "true"),
    ("remove_extra_whitespaces", 4, _OPT, _BOOL, None, "true"),
    ("escape_whitespaces", 5, _OPT, _BOOL, None, "true"),
    ("normalization_rule_tsv", 6, _OPT, _STRING, None, None),
]
_SAMPLE = [("input", 1, _OPT, _STRING, None, None), ("expected", 2, _OPT, _STRING, None, None)]
_SELF_TEST_DATA = [("samples", 1, _REP, _MESSAGE, ".sentencepiece.SelfTestData.Sample", None)]
_PIECE = [
    ("piece", 1, _OPT, _STRING, None, None),
    ("score", 2, _OPT, _FLOAT, None, None),
    ("type", 3, _OPT, _ENUM, ".sentencepiece.ModelProto.SentencePiece.Type", "NORMAL"),
]
_MODEL = [
    ("pieces", 1, _REP, _MESSAGE, ".sentencepiece.ModelProto.SentencePiece", None),
    ("trainer_spec", 2, _OPT, _MESSAGE, ".sentencepiece.TrainerSpec", None),
    ("normalizer_spec", 3, _OPT, _MESSAGE, ".sentencepiece.NormalizerSpec", None),
    ("self_test_data", 4, _OPT, _MESSAGE, ".sentencepiece.SelfTestData", None),
    ("denormalizer_spec", 5, _OPT, _MESSAGE, ".sentencepiece.NormalizerSpec", None),
]
MODEL_TYPES = {"UNIGRAM": 1, "BPE": 2, "WORD": 3, "CHAR": 4}
PIECE_TYPES = {"NORMAL": 1, "UNKNOWN": 2, "CONTROL": 3, "USER_DEFINED": 4, "UNUSED": 5, "BYTE": 6}


def _message(name: str, fields: list[tuple[Any, ...]]) -> descriptor_pb2.DescriptorProto:
    msg = descriptor_pb2.DescriptorProto(name=name)
    for fname, number, label, ftype, type_name, default in fields:
        field = msg.field.add(name=fname, number=number, label=label, type=ftype)
        if type_name is not None:
            field.type_name = type_name
        if default is not None:
            field.default_value = default
    msg.extension_range.add(start=200, end=_EXTENSIONS_END)
    return msg


def _enum(name: str, values: dict[str, int]) -> descriptor_pb2.EnumDescriptorProto:
    enum = descriptor_pb2.EnumDescriptorProto(name=name)
    for vname, number in values.items():
        enum.value.add(name=vname, number=number)
    return enum


def _file() -> descriptor_pb2.FileDescriptorProto:
    fd = descriptor_pb2.FileDescriptorProto(
        name="bpekit/sentencepiece_model.proto", package="sentencepiece", syntax="proto2"
    )
    fd.options.optimize_for = descriptor_pb2.FileOptions.LITE_RUNTIME
    trainer = _message("TrainerSpec", _TRAINER_SPEC)
    trainer.enum_type.append(_enum("ModelType", MODEL_TYPES))
    self_test = _message("SelfTestData", _SELF_TEST_DATA)
    self_test.nested_type.append(_message("Sample", _SAMPLE))
    piece = _message("SentencePiece", _PIECE)
    piece.enum_type.append(_enum("Type", PIECE_TYPES))
    model = _message("ModelProto", _MODEL)
    model.nested_type.append(piece)
    fd.message_type.extend([trainer, _message("NormalizerSpec", _NORMALIZER_SPEC), self_test, model])
    return fd


_POOL = descriptor_pool.DescriptorPool()
_POOL.Add(_file())


def _class(full_name: str) -> Any:
    desc = _POOL.FindMessageTypeByName(full_name)
    if hasattr(message_factory, "GetMessageClass"):
        return message_factory.GetMessageClass(desc)
    return message_factory.MessageFactory(_POOL).GetPrototype(desc)  # protobuf < 4.22


ModelProto: Any = _class("sentencepiece.ModelProto")
TrainerSpec: Any = _class("sentencepiece.TrainerSpec")
NormalizerSpec: Any = _class("sentencepiece.NormalizerSpec")


def parse_model_proto(data: bytes) -> Any:
    """Parses serialized ``ModelProto`` bytes; a corrupt or truncated message is a FormatError."""
    msg = ModelProto()
    try:
        msg.ParseFromString(data)
    except message.DecodeError as e:
        raise FormatError(f"not a SentencePiece model: the protobuf message is corrupt or truncated ({e})") from e
    return msg
