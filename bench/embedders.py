"""Per-text embedding time of the packaged models: WordLlama (static, the default) and
all-MiniLM-L6-v2 (int8 ONNX, ``knowledge.dense_model: minilm``), on the labelled task queries
(query side: what every injection pays) and the real stores' lessons (entry side: paid once per
entry, cached by content hash), wall and process CPU time, ratio against WordLlama in the same
run; plus the transformer's cold start (import and session) a fresh hook process would pay.

    python -m bench.embedders [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

from bench.common import console, save, table
from swarmq.knowledge._dense import dense_text
from swarmq.knowledge.model import Entry
from swarmq.similarity.embedding import Embedder

EVAL = Path(__file__).resolve().parent.parent / "eval" / "knowledge"


def per_text(model: Embedder, texts: list[str], repeat: int) -> dict[str, float]:
    model.embed(texts[:4])  # warm
    wall: list[float] = []
    cpu: list[float] = []
    for _ in range(repeat):
        for text in texts:
            w, c = time.perf_counter(), time.process_time()
            model.embed([text])
            wall.append((time.perf_counter() - w) * 1000)
            cpu.append((time.process_time() - c) * 1000)
    return {
        "wall_p50_ms": statistics.median(wall),
        "wall_p90_ms": statistics.quantiles(wall, n=10)[-1],
        "cpu_p50_ms": statistics.median(cpu),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    queries = [q["text"] for q in json.loads((EVAL / "tasks.json").read_text("utf-8"))["queries"]]
    lessons = [
        dense_text(Entry(json.loads(line)))
        for path in sorted((EVAL / "stores").glob("*.jsonl"))
        for line in path.read_text("utf-8").splitlines()
        if line.strip()
    ][:200]
    started = time.perf_counter()
    import onnxruntime  # type: ignore[import-untyped]  # noqa: F401

    imported = time.perf_counter()
    from swarmq.similarity.onnx_embedder import OnnxEmbedder
    from swarmq.similarity.static_embedder import StaticEmbedder

    minilm = OnnxEmbedder()
    loaded = time.perf_counter()
    static = StaticEmbedder()
    results: dict[str, object] = {
        "load_avg": os.getloadavg(),
        "minilm_cold_ms": {
            "import_onnxruntime": (imported - started) * 1000,
            "session_and_tokenizer": (loaded - imported) * 1000,
        },
    }
    rows = []
    for side, texts in (("query", queries), ("entry", lessons)):
        base = per_text(static, texts, args.repeat)
        mine = per_text(minilm, texts, args.repeat)
        results[side] = {"wordllama": base, "minilm": mine, "texts": len(texts)}
        rows.append(
            [
                side,
                f"{base['wall_p50_ms']:.2f}",
                f"{mine['wall_p50_ms']:.2f}",
                f"{mine['wall_p90_ms']:.2f}",
                f"{mine['cpu_p50_ms']:.2f}",
                f"{mine['wall_p50_ms'] / max(base['wall_p50_ms'], 1e-9):.0f}x",
            ]
        )
    table(
        "per-text embedding (ms)",
        ["side", "wordllama p50", "minilm p50", "minilm p90", "minilm cpu p50", "ratio"],
        rows,
    )
    console.print(f"minilm cold start: {results['minilm_cold_ms']}; load {results['load_avg']}")
    save("embedders", results)


if __name__ == "__main__":
    main()
