"""MiniLM with int8 activations too: a dynamically quantised copy of the packaged model, built
once per machine and kept in the user's cache.

Why (docs/BENCHMARKS.md, "Issue 26: injection at 10k + 10k"): the packaged model stores int8
weights, but onnxruntime casts them to float32 when the session is created, so every query runs
float32 matrix products, and the query's forward pass is most of an injection's time. With the
activations quantised per call as well (onnxruntime's dynamic quantisation: ``MatMulInteger``
on the same per-channel int8 weights) the forward pass takes about half the CPU, and the
session holds int8 instead of float32 weights (~100 MB less per process that loads MiniLM).

The copy is derived, not shipped: the packaged weights (int8 with a float scale per output
channel, dequantised in the graph by Cast and Mul) are folded to float32, and
``onnxruntime.quantization.quantize_dynamic`` quantises every MatMul's weights per channel
again (the word-embedding table stays float32: a Gather, not quantised). The build is
deterministic (the same source and tool versions give the same bytes), takes a few seconds and
needs the ``onnx`` package (the ``minilm`` extra carries it).

The file is kept under ``$SWARMQ_MODEL_CACHE`` when set (the test suite shares one build that
way), else ``$XDG_CACHE_HOME/swarmq/models`` (``~/.cache/swarmq/models``), named by a key of
the source file's identity, the tool versions and :data:`RECIPE`, beside a manifest of its size
and SHA-256. A reader checks the bytes it loads against the manifest, so a truncated or damaged
file is rebuilt, never run; a build writes temporary files and renames them into place under a
file lock, so two processes building at once leave one valid file.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import tempfile
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING

from filelock import FileLock

from swarmq.errors import Unavailable

if TYPE_CHECKING:
    import onnx

NAME = "all-minilm-l6-v2-onnx-int8-dynamic"
"""The embedder name vectors from the quantised model are kept under (others' are refilled)."""

RECIPE = 1
"""Bumped whenever :func:`_build` would produce other bytes from the same inputs."""

LOCK_TIMEOUT = 300.0
"""Longest wait for another process's build (a build takes seconds; minutes means stuck)."""


class QuantizeUnavailable(Unavailable):
    """The quantised model can be neither read from the cache nor built here (``onnx`` missing,
    the cache unwritable, the build failing): the caller runs the float32 model and says so."""


def cache_dir() -> Path:
    """Where built models are kept (see the module docstring)."""
    override = os.environ.get("SWARMQ_MODEL_CACHE")
    if override:
        return Path(override)
    base = os.environ.get("XDG_CACHE_HOME")
    return (Path(base) if base else Path.home() / ".cache") / "swarmq" / "models"


def model_file(source: Path, cache: Path | None = None) -> Path:
    """The quantised model built from ``source``, verified: found in the cache, or built (once,
    under a lock) into it. Raises :class:`QuantizeUnavailable` when it can do neither.

    A path, not bytes: onnxruntime reading the file itself peaks ~60 MB lower than a session
    made from a bytes copy (docs/BENCHMARKS.md, "Issue 26: MiniLM quantised")."""
    target = (cache or cache_dir()) / f"{NAME}-{_key(source)}.onnx"
    if _verified(target):
        return target
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(str(target.with_name(target.name + ".lock")), timeout=LOCK_TIMEOUT):
            if not _verified(target):  # another process may have built it meanwhile
                _install(target, _build(source), source)
                _prune(target, source)
    except QuantizeUnavailable:
        raise
    except Exception as exc:  # OSError, a lock timeout, onnx's own errors: all mean "can't"
        raise QuantizeUnavailable(
            f"cannot build the quantised embedding model at {target}: {exc}"
        ) from exc
    return target


def _key(source: Path) -> str:
    """16 hex digits naming the build: the source file's identity, tool versions, recipe."""
    stat = source.stat()
    parts = [
        str(RECIPE),
        str(source.resolve()),
        str(stat.st_size),
        str(stat.st_mtime_ns),
        _version("onnx"),
        _version("onnxruntime"),
    ]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:16]


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "-"


def _manifest(target: Path) -> Path:
    return target.with_name(target.name + ".json")


def _verified(target: Path) -> bool:
    """Whether the cached file matches its manifest (size and SHA-256). The file is replaced
    only by a rename of another verified build, so what onnxruntime then reads is this one."""
    try:
        manifest = json.loads(_manifest(target).read_text("utf-8"))
        with target.open("rb") as model:
            size = os.fstat(model.fileno()).st_size
            if not isinstance(manifest, dict) or manifest.get("size") != size:
                return False
            digest = hashlib.file_digest(model, "sha256").hexdigest()
    except (OSError, ValueError):
        return False
    return bool(manifest.get("sha256") == digest)


def _install(target: Path, data: bytes, source: Path) -> None:
    """The model, then its manifest, each written to a temporary file and renamed into place
    (the caller holds the lock; a reader between the two renames sees a mismatch and waits for
    the lock)."""
    manifest = {
        "name": NAME,
        "size": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
        "source": str(source.resolve()),
    }
    _replace(target, data)
    _replace(_manifest(target), json.dumps(manifest, sort_keys=True).encode())


def _prune(target: Path, source: Path) -> None:
    """Remove the copies no process can use again, so upgrades do not pile up 58 MB files: a
    copy is named by its source's path and mtime, so one whose source file is gone (a deleted
    virtualenv) or is this very file (an upgrade rewrote it) is never chosen again. Copies of
    other sources that still exist (another virtualenv on the machine) are kept, and so are
    copies whose manifest does not say their source. Lock files stay: another process may hold
    one."""
    ours = str(source.resolve())
    for manifest in target.parent.glob(f"{NAME}-*.onnx.json"):
        model = manifest.with_name(manifest.name.removesuffix(".json"))
        if model == target:
            continue
        try:
            recorded = json.loads(manifest.read_text("utf-8")).get("source")
        except (OSError, ValueError, AttributeError):
            continue
        if not isinstance(recorded, str) or (recorded != ours and Path(recorded).exists()):
            continue
        for stale in (model, manifest):
            with contextlib.suppress(FileNotFoundError):
                stale.unlink()


def _replace(path: Path, data: bytes) -> None:
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, 0o644)  # a cache other users' processes on the machine may read
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def _build(source: Path) -> bytes:
    """Fold the packaged dequantisation into float32 weights, quantise every MatMul's weights
    per channel with dynamic int8 activations, and return the serialised model."""
    try:
        import onnx
        from onnxruntime.quantization import (  # type: ignore[import-untyped]
            QuantType,
            quantize_dynamic,
        )
    except ImportError as exc:
        raise QuantizeUnavailable(
            f"the onnx package is missing ({exc}): reinstall swarmq with the minilm extra"
        ) from exc
    model = _folded(onnx.load(str(source)))
    with tempfile.TemporaryDirectory(prefix="swarmq-quantize-") as work, _quiet_root():
        out = Path(work) / "model.onnx"
        quantize_dynamic(
            model,
            out,
            op_types_to_quantize=["MatMul"],
            per_channel=True,
            weight_type=QuantType.QInt8,
        )
        return out.read_bytes()


def _folded(model: onnx.ModelProto) -> onnx.ModelProto:
    """``model`` with each ``Mul(Cast(int8 initializer), scale initializer)`` replaced by its
    float32 product as an initializer, so the quantiser sees constant float weights."""
    import numpy as np
    from onnx import numpy_helper

    graph = model.graph
    initializers = {init.name: init for init in graph.initializer}
    consumers: dict[str, list[onnx.NodeProto]] = {}
    for node in graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)
    dropped: set[int] = set()
    folded = []
    for node in graph.node:
        if node.op_type != "Cast" or node.input[0] not in initializers:
            continue
        users = consumers.get(node.output[0], [])
        if len(users) != 1 or users[0].op_type != "Mul":
            continue
        mul = users[0]
        scales = [name for name in mul.input if name != node.output[0]]
        if len(scales) != 1 or scales[0] not in initializers:
            continue
        weights = numpy_helper.to_array(initializers[node.input[0]]).astype(np.float32)
        scale = numpy_helper.to_array(initializers[scales[0]]).astype(np.float32)
        folded.append(numpy_helper.from_array(weights * scale, mul.output[0]))
        dropped.update((id(node), id(mul)))
        for name in (node.input[0], scales[0]):
            if len(consumers.get(name, [])) == 1:
                initializers.pop(name)
    if not folded:
        raise QuantizeUnavailable("the packaged model holds no int8 weights to fold")
    nodes = [node for node in graph.node if id(node) not in dropped]
    del graph.node[:]
    graph.node.extend(nodes)
    del graph.initializer[:]
    graph.initializer.extend([*initializers.values(), *folded])
    return model


@contextlib.contextmanager
def _quiet_root() -> Iterator[None]:
    """The quantiser's advice ("consider pre-processing", through ``logging.warning``) kept off
    the user's terminal, and its implicit ``basicConfig`` from installing a root handler."""
    root = logging.getLogger()
    guard = logging.NullHandler() if not root.handlers else None
    if guard is not None:
        root.addHandler(guard)
    drop = _FromOnnxruntime()
    root.addFilter(drop)
    try:
        yield
    finally:
        root.removeFilter(drop)
        if guard is not None:
            root.removeHandler(guard)


class _FromOnnxruntime(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno >= logging.ERROR or "onnxruntime" not in record.pathname
