"""The ``command`` provider: a CLI agent as a model (prompt on stdin, reply on stdout).

The argv template is run without a shell; ``{model}`` in an argument is replaced by the
configured model. The process gets its own session so a timeout kills the whole group, not just
the direct child (CLI agents often spawn helpers).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from swarmq.llm.errors import CommandFailed, MalformedReply, ProviderMissing, RequestTimeout
from swarmq.llm.provider import ChatRequest, OnSend, ProviderReply


class CommandProvider:
    name = "command"

    def __init__(
        self,
        argv: Sequence[str],
        *,
        model: str | None = None,
        timeout_seconds: float = 120.0,
        env: Mapping[str, str] | None = None,
    ) -> None:
        if not argv:
            raise ValueError("llm.command must be a non-empty argv list")
        self.template = list(argv)
        self._model = model or Path(argv[0]).name
        self.timeout_seconds = timeout_seconds
        self.env = dict(env) if env is not None else None

    @property
    def model(self) -> str:
        return self._model

    @property
    def rate_key(self) -> str:
        return f"command:{Path(self.template[0]).name}"

    def argv(self) -> list[str]:
        return [arg.replace("{model}", self._model) for arg in self.template]

    def send(self, request: ChatRequest, *, on_send: OnSend) -> ProviderReply:
        argv = self.argv()
        if shutil.which(argv[0]) is None:
            raise ProviderMissing(f"llm.command {argv[0]!r} is not an executable on PATH")
        prompt = request.as_prompt_text().encode("utf-8")
        on_send()
        try:
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=self.env,
                start_new_session=True,
            )
        except (FileNotFoundError, PermissionError) as exc:
            raise ProviderMissing(f"llm.command {argv[0]!r} cannot be run: {exc}") from exc
        try:
            out, err = proc.communicate(prompt, timeout=self.timeout_seconds)
        except subprocess.TimeoutExpired as exc:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            raise RequestTimeout(
                f"llm.command {argv[0]!r} ran past {self.timeout_seconds}s; killed"
            ) from exc
        if proc.returncode != 0:
            tail = err.decode("utf-8", "replace").strip()[-300:]
            raise CommandFailed(f"llm.command {argv[0]!r} exited {proc.returncode}: {tail!r}")
        try:
            text = out.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise MalformedReply(f"llm.command {argv[0]!r} wrote non-UTF-8 output") from exc
        if not text.strip():
            raise MalformedReply(f"llm.command {argv[0]!r} wrote nothing on stdout")
        return ProviderReply(text, self._model)

    def close(self) -> None:
        return None
