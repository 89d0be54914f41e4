"""SHA-256 for processes that must start small (a command the resident server answers).

``hashlib`` loads OpenSSL's libcrypto when it is imported, 3.7 MB of a fresh process's peak
resident set (10.9 MB for ``python -c pass``), to name a socket and a state directory by a
16-character digest. CPython's built-in SHA-256 module gives the same digest without it; where
that module is missing (a build without it), ``hashlib`` is used. No ``typing`` either (2 ms
of a fresh process): its names are the type checker's only.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing's flag without importing typing (the type checker reads it)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Protocol

    class _Hash(Protocol):
        def hexdigest(self) -> str: ...


_SHA256: Callable[[bytes], _Hash] | None = None


def sha256_hex(data: bytes) -> str:
    """The hex SHA-256 digest of ``data`` (equal to ``hashlib.sha256(data).hexdigest()``)."""
    global _SHA256
    if _SHA256 is None:
        for name in ("_sha2", "_sha256"):  # 3.12+, 3.11
            try:
                _SHA256 = __import__(name).sha256
                break
            except (ImportError, AttributeError):
                continue
        else:
            import hashlib

            _SHA256 = hashlib.sha256
    return _SHA256(data).hexdigest()
