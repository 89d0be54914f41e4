"""The resident hook server does not load an HTTP client it never uses (issue 28: its peak RSS
is held to 300 MB): ``httpx`` and ``ssl``'s certificates (~18 MB resident) are loaded only when
an LLM endpoint provider is built, not by importing the wiring the server shares with forge."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.support import REPO

CHECK = """
import sys
import swarmq.cli.served
import swarmq.wiring.flywheel
loaded = {"httpx", "pygments"} & {name.split(".")[0] for name in sys.modules}
assert not loaded, f"loaded: {loaded}"
from swarmq.llm.config import LLMConfig
from swarmq.llm.factory import build_provider
provider = build_provider(
    LLMConfig(provider="openai", base_url="http://127.0.0.1:9/v1", model="m",
              api_key_env=None)
)
assert type(provider).__name__ == "OpenAICompatible" and "httpx" in sys.modules
"""


def test_the_server_program_imports_no_http_client_until_an_endpoint_is_built() -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-c", CHECK], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
