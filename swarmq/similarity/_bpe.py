"""The packaged model's tokenizer for a few short texts, without parsing its 1.7 MB JSON.

Loading the Llama-2 tokenizer through ``tokenizers`` parses its JSON and builds the BPE model:
70-100 ms of every fresh process that embeds a query, which is most of what a hook's or a CLI
search's model load costs. A query is one short text, so this module tokenizes it with the same
algorithm in Python over compact tables (the single-character tokens, the byte-fallback tokens
and the merges as sorted pair keys) read from a small cache file: under a millisecond to load.
The cache is derived from the tokenizer JSON the first time (the slow parse, once per machine
and installed tokenizer file; keyed by the file's path, size, mtime and inode, so a reinstall
gets new tables) and written to the user's cache directory.

What it reproduces, from ``tokenizers``' BPE (``Word::merge_all``) and the JSON's settings: the
normalizer (prepend ``▁``, every space to ``▁``), no pre-tokenizer (the whole text is one word),
a symbol per character or, for a character not in the vocabulary, per UTF-8 byte (``<0xNN>``),
then merges by lowest rank, leftmost first, a queued merge taken only if its pair still merges
to the same token. Texts this does not cover (a special token's text such as ``</s>`` inside,
which ``tokenizers`` splits out first; unencodable strings) return ``None``: the caller uses
``tokenizers``. ``tests/similarity/test_bpe.py`` compares the two on the lesson corpus.
"""

from __future__ import annotations

import contextlib
import hashlib
import heapq
import json
import os
import struct
from pathlib import Path

import numpy as np
import numpy.typing as npt

MAGIC = b"swarmq-bpe-1\n"
SPACE = "\u2581"
_HEADER = struct.Struct("<4q")


class BpeTables:
    """The tables :func:`encode` needs, as flat arrays."""

    def __init__(
        self,
        chars: str,
        char_ids: npt.NDArray[np.int32],
        byte_ids: npt.NDArray[np.int32],
        pairs: npt.NDArray[np.int64],
        ranks: npt.NDArray[np.int32],
        merged: npt.NDArray[np.int32],
        specials: list[str],
    ) -> None:
        self.chars = chars
        self.char_ids = char_ids
        self.byte_ids = byte_ids
        """Token of each byte value (``<0xNN>``), -1 when the vocabulary lacks it."""
        self.pairs = pairs
        """Merge keys ``left << 32 | right``, sorted; ``ranks`` and ``merged`` alongside."""
        self.ranks = ranks
        self.merged = merged
        self.specials = specials
        self.char_of = dict(zip(chars, char_ids.tolist(), strict=True))

    # -- building and caching ---------------------------------------------------------------

    @classmethod
    def from_json(cls, data: dict[str, object]) -> BpeTables | None:
        """The tables of a ``tokenizers`` JSON, ``None`` when it is not the setup this module
        reproduces (then ``tokenizers`` is used for every text)."""
        model = data.get("model")
        expected_normalizer = {
            "type": "Sequence",
            "normalizers": [
                {"type": "Prepend", "prepend": SPACE},
                {"type": "Replace", "pattern": {"String": " "}, "content": SPACE},
            ],
        }
        if (
            not isinstance(model, dict)
            or model.get("type") != "BPE"
            or data.get("normalizer") != expected_normalizer
            or data.get("pre_tokenizer") is not None
            or model.get("dropout") is not None
            or model.get("continuing_subword_prefix")
            or model.get("end_of_word_suffix")
            or model.get("ignore_merges")
            or not model.get("byte_fallback")
        ):
            return None
        vocab: dict[str, int] = model["vocab"]
        singles = sorted((token, i) for token, i in vocab.items() if len(token) == 1)
        byte_ids = np.array([vocab.get(f"<0x{b:02X}>", -1) for b in range(256)], dtype=np.int32)
        keys, ranks, merged = [], [], []
        for rank, merge in enumerate(model["merges"]):
            left, right = merge.split(" ") if isinstance(merge, str) else merge
            if left not in vocab or right not in vocab or left + right not in vocab:
                return None
            keys.append(vocab[left] << 32 | vocab[right])
            ranks.append(rank)
            merged.append(vocab[left + right])
        order = np.argsort(np.array(keys, dtype=np.int64), kind="stable")
        pairs = np.array(keys, dtype=np.int64)[order]
        if len(pairs) and bool((pairs[1:] == pairs[:-1]).any()):
            # a pair listed twice: tokenizers keeps the later entry; not worth reproducing
            return None
        added = data.get("added_tokens") or []
        specials = [str(t["content"]) for t in added if isinstance(t, dict)]  # type: ignore[attr-defined]
        return cls(
            "".join(token for token, _ in singles),
            np.array([i for _, i in singles], dtype=np.int32),
            byte_ids,
            pairs,
            np.array(ranks, dtype=np.int32)[order],
            np.array(merged, dtype=np.int32)[order],
            specials,
        )

    def to_bytes(self) -> bytes:
        chars = self.chars.encode("utf-8")
        specials = "\n".join(self.specials).encode("utf-8")
        return b"".join(
            [
                MAGIC,
                _HEADER.pack(len(chars), len(self.char_ids), len(self.pairs), len(specials)),
                chars,
                specials,
                self.char_ids.astype("<i4").tobytes(),
                self.byte_ids.astype("<i4").tobytes(),
                self.pairs.astype("<i8").tobytes(),
                self.ranks.astype("<i4").tobytes(),
                self.merged.astype("<i4").tobytes(),
            ]
        )

    @classmethod
    def from_bytes(cls, data: bytes) -> BpeTables:
        """Tables written by :meth:`to_bytes`; ``ValueError`` on anything else."""
        if not data.startswith(MAGIC):
            raise ValueError("not a BPE table file")
        at = len(MAGIC)
        chars_len, singles, merges, specials_len = _HEADER.unpack_from(data, at)
        at += _HEADER.size

        def take(size: int) -> bytes:
            nonlocal at
            if at + size > len(data):
                raise ValueError("BPE table file truncated")
            out = data[at : at + size]
            at += size
            return out

        chars = take(chars_len).decode("utf-8")
        specials = take(specials_len).decode("utf-8")
        tables = cls(
            chars,
            np.frombuffer(take(4 * singles), dtype="<i4").astype(np.int32),
            np.frombuffer(take(4 * 256), dtype="<i4").astype(np.int32),
            np.frombuffer(take(8 * merges), dtype="<i8").astype(np.int64),
            np.frombuffer(take(4 * merges), dtype="<i4").astype(np.int32),
            np.frombuffer(take(4 * merges), dtype="<i4").astype(np.int32),
            specials.split("\n") if specials else [],
        )
        if at != len(data) or len(chars) != singles:
            raise ValueError("BPE table file malformed")
        return tables

    # -- encoding ---------------------------------------------------------------------------

    def _merge(self, left: int, right: int) -> tuple[int, int] | None:
        key = left << 32 | right
        at = int(np.searchsorted(self.pairs, key))
        if at < len(self.pairs) and int(self.pairs[at]) == key:
            return int(self.ranks[at]), int(self.merged[at])
        return None

    def encode(self, text: str) -> list[int] | None:
        """The token ids of ``text`` as ``tokenizers`` gives them (no special tokens added,
        untruncated); ``None`` for a text this module does not cover."""
        if not text:
            return []
        if any(special in text for special in self.specials):
            return None
        symbols: list[int] = []
        for char in SPACE + text.replace(" ", SPACE):
            token = self.char_of.get(char)
            if token is not None:
                symbols.append(token)
                continue
            try:
                raw = char.encode("utf-8")
            except UnicodeEncodeError:
                return None
            fallback = [int(self.byte_ids[b]) for b in raw]
            if min(fallback) < 0:
                return None  # an unknown-token case: left to tokenizers
            symbols.extend(fallback)
        return self._merge_all(symbols)

    def _merge_all(self, symbols: list[int]) -> list[int]:
        count = len(symbols)
        following = list(range(1, count + 1))
        preceding = list(range(-1, count - 1))
        gone = [False] * count
        queue: list[tuple[int, int, int]] = []
        if count > 1:
            ids = np.array(symbols, dtype=np.int64)
            keys = ids[:-1] << 32 | ids[1:]
            at = np.minimum(np.searchsorted(self.pairs, keys), len(self.pairs) - 1)
            found = np.flatnonzero(self.pairs[at] == keys)
            queue = [
                (int(self.ranks[at[i]]), int(i), int(self.merged[at[i]])) for i in found.tolist()
            ]
            heapq.heapify(queue)
        while queue:
            _, pos, new = heapq.heappop(queue)
            if gone[pos]:
                continue
            right = following[pos]
            if right >= count:
                continue
            current = self._merge(symbols[pos], symbols[right])
            if current is None or current[1] != new:
                continue  # a queued pair that has since changed
            symbols[pos] = new
            gone[right] = True
            following[pos] = following[right]
            if following[pos] < count:
                preceding[following[pos]] = pos
            before = preceding[pos]
            if before >= 0:
                found_left = self._merge(symbols[before], new)
                if found_left is not None:
                    heapq.heappush(queue, (found_left[0], before, found_left[1]))
            after = following[pos]
            if after < count:
                found_right = self._merge(new, symbols[after])
                if found_right is not None:
                    heapq.heappush(queue, (found_right[0], pos, found_right[1]))
        out = []
        pos = 0
        while pos < count:
            out.append(symbols[pos])
            pos = following[pos]
        return out


def load_tables(tokenizer_json: Path, cache_dir: Path | None) -> BpeTables | None:
    """The tables of ``tokenizer_json``, from the cache when it holds them, else built from
    the JSON and cached (best effort: a cache that cannot be written is skipped). ``None``
    when the tokenizer is not one this module reproduces."""
    st = tokenizer_json.stat()
    identity = f"{os.path.realpath(tokenizer_json)}\0{st.st_size}\0{st.st_mtime_ns}\0{st.st_ino}"
    digest = hashlib.sha256(identity.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    cached = cache_dir / f"bpe-{digest}.bin" if cache_dir is not None else None
    if cached is not None:
        with contextlib.suppress(OSError, ValueError, struct.error):
            return BpeTables.from_bytes(cached.read_bytes())
    tables = BpeTables.from_json(json.loads(tokenizer_json.read_bytes()))
    if tables is not None and cached is not None:
        with contextlib.suppress(OSError):
            cached.parent.mkdir(parents=True, exist_ok=True)
            temp = cached.with_name(f"{cached.name}.{os.getpid()}.tmp")
            temp.write_bytes(tables.to_bytes())
            os.replace(temp, cached)
    return tables


def cache_dir() -> Path | None:
    """Where the derived tables are kept: ``$XDG_CACHE_HOME/swarmq`` (``~/.cache/swarmq``)."""
    base = os.environ.get("XDG_CACHE_HOME")
    if base:
        return Path(base) / "swarmq"
    with contextlib.suppress(RuntimeError):
        return Path.home() / ".cache" / "swarmq"
    return None
