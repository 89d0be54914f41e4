"""A throwaway RabbitMQ node of a test's own, for tests that kill the broker on purpose.

Its own node name, AMQP port, distribution port, Mnesia and log directories, config file,
plugin list (none) and Erlang cookie (``HOME``), all on loopback: killing it touches no other
RabbitMQ on the machine. A node restarted on the same directories keeps its durable queues and
persistent messages, as a crashed production broker does.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import time
import uuid
from pathlib import Path

from kombu.connection import Connection

from tests.coord.redis_server import free_port

SERVER_ENV = "SWARMQ_CHAOS_RABBITMQ_SERVER"
"""Path of a ``rabbitmq-server`` script to use instead of the one found on the machine."""

START_TIMEOUT_SECONDS = 90.0


def server_script() -> Path | None:
    """The script that starts a node as the calling user: Debian's ``/usr/sbin`` wrapper
    switches to the ``rabbitmq`` user (whose cookie and directories this node must not use),
    so its library copy comes first."""
    named = os.environ.get(SERVER_ENV)
    candidates: list[str | None] = [named] if named else ["/usr/lib/rabbitmq/bin/rabbitmq-server"]
    candidates.append(shutil.which("rabbitmq-server"))
    for candidate in candidates:
        if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
            return Path(candidate)
    return None


class RabbitMQServer:
    def __init__(self, directory: Path, *, config: str = "", advanced: str = "") -> None:
        """``config``: more ``rabbitmq.conf`` lines (e.g. ``consumer_timeout = 5000``);
        ``advanced``: settings of the ``rabbit`` application that ``rabbitmq.conf`` cannot
        hold, as Erlang terms (e.g. ``{channel_tick_interval, 1000}``), for ``advanced.config``."""
        self.script = server_script()
        if self.script is None:
            raise FileNotFoundError(f"no rabbitmq-server found (set {SERVER_ENV})")
        self.directory = directory
        self.port = free_port()
        self.dist_port = free_port()
        while self.dist_port == self.port:
            self.dist_port = free_port()
        self.node = f"swarmqchaos{uuid.uuid4().hex[:8]}@localhost"
        self.url = f"amqp://guest:guest@127.0.0.1:{self.port}//"
        self.proc: subprocess.Popen[bytes] | None = None
        for sub in ("mnesia", "log", "home"):
            (directory / sub).mkdir(parents=True, exist_ok=True)
        (directory / "rabbitmq.conf").write_text(
            f"listeners.tcp.default = 127.0.0.1:{self.port}\n"
            "loopback_users.guest = true\n"
            "log.console = false\n" + config,
            encoding="utf-8",
        )
        (directory / "enabled_plugins").write_text("[].\n", encoding="utf-8")
        (directory / "advanced.config").write_text(
            f"[{{rabbit, [{advanced}]}}].\n", encoding="utf-8"
        )

    def env(self) -> dict[str, str]:
        d = self.directory
        return {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(d / "home"),  # the node's own Erlang cookie
            "LANG": "C.UTF-8",
            "RABBITMQ_NODENAME": self.node,
            "RABBITMQ_NODE_IP_ADDRESS": "127.0.0.1",
            "RABBITMQ_NODE_PORT": str(self.port),
            "RABBITMQ_DIST_PORT": str(self.dist_port),
            "RABBITMQ_MNESIA_BASE": str(d / "mnesia"),
            "RABBITMQ_LOG_BASE": str(d / "log"),
            "RABBITMQ_CONFIG_FILE": str(d / "rabbitmq"),
            "RABBITMQ_ADVANCED_CONFIG_FILE": str(d / "advanced.config"),
            "RABBITMQ_ENABLED_PLUGINS_FILE": str(d / "enabled_plugins"),
            "RABBITMQ_PID_FILE": str(d / "rabbitmq.pid"),
            "ERL_EPMD_ADDRESS": "127.0.0.1",
        }

    def start(self) -> RabbitMQServer:
        """Start the node and return once it accepts an AMQP connection."""
        assert self.proc is None and self.script is not None
        with (self.directory / "server.out").open("ab") as out:
            self.proc = subprocess.Popen(
                [str(self.script)],
                env=self.env(),
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # one process group: the script and its beam.smp
            )
        deadline = time.monotonic() + START_TIMEOUT_SECONDS
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                break
            if self.answers():
                return self
            time.sleep(0.2)
        tail = (self.directory / "server.out").read_text("utf-8", "replace")[-2000:]
        self.kill()
        raise RuntimeError(f"test RabbitMQ {self.node} on port {self.port} did not start:\n{tail}")

    def answers(self) -> bool:
        try:
            with Connection(self.url, connect_timeout=1.0) as conn:
                conn.connect()
            return True
        except Exception:
            return False

    def kill(self) -> None:
        """SIGKILL the node (the whole process group), as a crash or an OOM kill would end it;
        Erlang's port helpers exit with it."""
        if self.proc is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=30)
        self.proc = None
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and self.answers():
            time.sleep(0.1)

    stop = kill

    def ctl(self, *args: str) -> str:
        """``rabbitmqctl`` against this node (its cookie is in the node's ``HOME``)."""
        assert self.script is not None
        ctl = self.script.with_name("rabbitmqctl")
        done = subprocess.run(
            [str(ctl), "-n", self.node, "-q", *args],
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        return done.stdout
