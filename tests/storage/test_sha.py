"""``swarmq.storage.sha``: hashlib's SHA-256 digest, without loading OpenSSL."""

from __future__ import annotations

import hashlib
import subprocess
import sys

import pytest

from swarmq.storage.sha import sha256_hex


@pytest.mark.parametrize(
    "data", [b"", b"abc", "/home/é/swarm.yaml".encode(), bytes(range(256)) * 9]
)
def test_the_digest_is_hashlibs(data: bytes) -> None:
    assert sha256_hex(data) == hashlib.sha256(data).hexdigest()


def test_it_does_not_import_hashlib() -> None:
    code = (
        "import sys; from swarmq.storage.sha import sha256_hex; sha256_hex(b'x'); "
        "assert 'hashlib' not in sys.modules and '_hashlib' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
