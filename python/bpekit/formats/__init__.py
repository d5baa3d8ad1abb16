"""Readers and writers for tokenizer files made by other libraries (one subpackage per format)."""
