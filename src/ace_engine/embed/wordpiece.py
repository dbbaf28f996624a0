"""BERT's uncased WordPiece tokenizer, stdlib only: what the full model (semantic.py) and the
static table (static_embed.py) both read text with.

Contract: `WordPiece(vocab_path)` builds the token → id dict from a vocab.txt (one token a line);
`basic(text)` splits and normalises, `wordpiece(word)` maps one word to ids ([UNK] when it can't),
`encode(text)` adds [CLS] / [SEP]. `static_embed` subclasses it over a memory-cheap vocabulary.

Cost: importing it loads `unicodedata` only (~0.2 ms); the dict costs ~10 ms to build (30k lines),
which is why the hooks' path uses `static_embed.MappedVocab` instead.
"""

from __future__ import annotations

import unicodedata

MAX_TOKENS = 256  # the model's max_seq_length (sentence_bert_config.json)


class WordPiece:
    """BERT's uncased tokenizer (basic split + greedy longest-match WordPiece), as the model's
    tokenizer_config says: lower case, accents stripped, CJK characters split, punctuation split."""

    def __init__(self, vocab_path: str):
        with open(vocab_path, encoding="utf-8") as fh:
            self.vocab = {line.rstrip("\n"): i for i, line in enumerate(fh)}
        self.unk = self.vocab["[UNK]"]
        self.cls = self.vocab["[CLS]"]
        self.sep = self.vocab["[SEP]"]

    @staticmethod
    def _is_punct(ch: str) -> bool:
        cp = ord(ch)
        if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
            return True
        return unicodedata.category(ch).startswith("P")

    @staticmethod
    def _is_cjk(cp: int) -> bool:
        return (0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or 0x20000 <= cp <= 0x2A6DF
                or 0x2A700 <= cp <= 0x2B73F or 0x2B740 <= cp <= 0x2B81F or 0x2B820 <= cp <= 0x2CEAF
                or 0xF900 <= cp <= 0xFAFF or 0x2F800 <= cp <= 0x2FA1F)

    def basic(self, text: str) -> list[str]:
        out = []
        for ch in text:
            cp = ord(ch)
            if cp == 0 or cp == 0xFFFD:
                continue
            cat = unicodedata.category(ch)
            if ch in "\t\n\r" or cat == "Zs":
                out.append(" ")
            elif cat in ("Cc", "Cf"):
                continue
            elif self._is_cjk(cp):
                out.append(f" {ch} ")
            else:
                out.append(ch)
        tokens = []
        for word in "".join(out).split():
            word = unicodedata.normalize("NFD", word.lower())
            word = "".join(c for c in word if unicodedata.category(c) != "Mn")
            current = ""
            for ch in word:
                if self._is_punct(ch):
                    if current:
                        tokens.append(current)
                    tokens.append(ch)
                    current = ""
                else:
                    current += ch
            if current:
                tokens.append(current)
        return tokens

    def wordpiece(self, word: str) -> list[int]:
        if len(word) > 100:
            return [self.unk]
        ids, start = [], 0
        while start < len(word):
            end, found = len(word), None
            while start < end:
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                if piece in self.vocab:
                    found = self.vocab[piece]
                    break
                end -= 1
            if found is None:
                return [self.unk]
            ids.append(found)
            start = end
        return ids

    def encode(self, text: str, max_tokens: int = MAX_TOKENS) -> list[int]:
        ids: list[int] = []
        for word in self.basic(text):
            ids.extend(self.wordpiece(word))
            if len(ids) >= max_tokens - 2:
                break
        return [self.cls] + ids[: max_tokens - 2] + [self.sep]
