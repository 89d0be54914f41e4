"""The quantised MiniLM: built the same way every time, verified on load, built once when two
processes want it at once, and the fallback to the packaged model never silent."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from swarmq.similarity import quantized
from swarmq.similarity.onnx_embedder import PACKAGED_NAME, OnnxEmbedder, _model_file
from swarmq.similarity.packaged import packaged_embedder

REPO = Path(__file__).resolve().parents[2]


def shared() -> tuple[Path, bytes]:
    """The suite's built model (tests/conftest.py: ``SWARMQ_MODEL_CACHE``) and its bytes."""
    path = quantized.model_file(_model_file())
    assert path.parent == quantized.cache_dir()
    return path, path.read_bytes()


def cached_files(cache: Path) -> list[str]:
    return sorted(p.name for p in cache.iterdir() if not p.name.endswith(".lock"))


def test_two_processes_building_at_once_leave_one_file_with_the_same_bytes(
    tmp_path: Path,
) -> None:
    """Two fresh processes, an empty cache: one builds under the lock, the other waits and
    reads the result; the file is the one any other build made (the build is deterministic)."""
    path, data = shared()
    cache = tmp_path / "models"
    script = (
        "import hashlib, sys; from pathlib import Path;"
        "from swarmq.similarity import quantized, onnx_embedder;"
        "path = quantized.model_file(onnx_embedder._model_file(), Path(sys.argv[1]));"
        "data = path.read_bytes();"
        "print(hashlib.sha256(data).hexdigest())"
    )
    builders = [
        subprocess.Popen(
            [sys.executable, "-c", script, str(cache)],
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    answers = [builder.communicate(timeout=170) for builder in builders]
    assert [b.returncode for b in builders] == [0, 0], answers
    digests = {out.strip() for out, _ in answers}
    assert len(digests) == 1
    assert cached_files(cache) == [path.name, path.name + ".json"]  # no temporary left
    assert (cache / path.name).read_bytes() == data


def test_a_damaged_file_is_detected_and_rebuilt(tmp_path: Path) -> None:
    path, data = shared()
    cache = tmp_path / "models"
    cache.mkdir()
    damaged = bytearray(data)
    damaged[len(damaged) // 2] ^= 0xFF  # same size, one byte flipped
    (cache / path.name).write_bytes(bytes(damaged))
    (cache / (path.name + ".json")).write_bytes(path.with_name(path.name + ".json").read_bytes())
    assert quantized.model_file(_model_file(), cache).read_bytes() == data
    (cache / path.name).write_bytes(data[:1000])  # truncated
    assert quantized.model_file(_model_file(), cache).read_bytes() == data
    assert cached_files(cache) == [path.name, path.name + ".json"]


def test_no_cache_to_build_in_runs_the_packaged_model_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    default = packaged_embedder("minilm")  # the process's copy, loaded before the cache breaks
    assert default.name == quantized.NAME
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory", encoding="utf-8")
    monkeypatch.setenv("SWARMQ_MODEL_CACHE", str(blocker / "models"))
    with pytest.raises(quantized.QuantizeUnavailable):
        quantized.model_file(_model_file())
    with caplog.at_level(logging.WARNING, logger="swarmq.similarity.onnx_embedder"):
        fallback = OnnxEmbedder()
    assert fallback.name == PACKAGED_NAME != quantized.NAME
    assert "packaged float32 MiniLM" in caplog.text
    texts = ["Store the SQLite database in the app data directory", "bake bread at 220"]
    cosines = (fallback.embed(texts) * default.embed(texts)).sum(axis=1)
    assert cosines.min() > 0.97, "the quantised copy is not the same model"


def test_a_repeated_query_gets_the_same_vector_without_a_forward_pass() -> None:
    model = packaged_embedder("minilm")
    assert isinstance(model, OnnxEmbedder)
    text = "remember the theme choice across reloads (query cache test)"
    first = model.embed([text])
    runs: list[object] = []
    session = model._session

    class Counting:
        def run(self, *args: object) -> object:
            runs.append(args)
            return session.run(*args)

    model._session = Counting()
    try:
        first[0, 0] += 1.0  # a caller scaling its copy in place changes nothing cached
        again = model.embed([text])
        assert runs == []
        assert np.array_equal(again, model.embed([text]))
        assert np.array_equal(again[0], model.embed([text, "another text"])[0])
        assert len(runs) == 2, "a batch is embedded, not cached"
    finally:
        model._session = session
    first[0, 0] -= 1.0
    assert np.allclose(again, first)


def test_a_build_removes_copies_no_process_can_use_again(tmp_path: Path) -> None:
    """Copies of a source that is gone, or of this source before it changed, are removed by the
    next build; another existing source's copy and a copy of unknown source are kept."""
    path, data = shared()
    cache = tmp_path / "models"
    cache.mkdir()
    source = _model_file()
    other_source = tmp_path / "other-venv-model.onnx"
    other_source.write_bytes(b"stands for another virtualenv's packaged model")
    copies = {
        "gone": str(tmp_path / "deleted-venv" / "model.onnx"),
        "superseded": str(source.resolve()),
        "other": str(other_source),
        "unknown": None,
    }
    for tag, recorded in copies.items():
        model = cache / f"{quantized.NAME}-{tag}.onnx"
        model.write_bytes(b"an older build")
        manifest: dict[str, object] = {"name": quantized.NAME, "size": 14, "sha256": "0"}
        if recorded is not None:
            manifest["source"] = recorded
        (cache / (model.name + ".json")).write_text(json.dumps(manifest), encoding="utf-8")
    built = quantized.model_file(source, cache)
    assert built.read_bytes() == data
    assert json.loads(built.with_name(built.name + ".json").read_text())["source"] == str(
        source.resolve()
    )
    assert cached_files(cache) == sorted(
        [
            path.name,
            path.name + ".json",
            *(f"{quantized.NAME}-{t}.onnx{e}" for t in ("other", "unknown") for e in ("", ".json")),
        ]
    )
