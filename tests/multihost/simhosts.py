"""Simulated hosts: own network, PID, mount and UTS namespaces, on a bridge the test creates.

Each host is an ``ip netns`` with a veth into a private bridge (10.231.X.0/24, X random), and
inside it ``unshare --pid --mount --uts --fork --mount-proc`` around a small init that sets the
hostname, bind-mounts the shared workspace at the host's own path, and reaps orphans. Commands
run in it through ``nsenter``; killing its init kills every process of the host at once, as a
power loss would. :func:`namespaces_unavailable` says why a machine cannot do this (then skip).
"""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import psutil
import redis

from swarmq.workers.embedded_redis import server_binary
from tests.coord.redis_server import free_port

INIT = (
    "import os, signal, time\n"
    "signal.signal(signal.SIGTERM, lambda *a: os._exit(0))\n"
    "while True:\n"
    "    try:\n"
    "        os.wait()\n"
    "    except ChildProcessError:\n"
    "        time.sleep(0.2)\n"
)


def namespaces_unavailable() -> str | None:
    """Why two simulated hosts cannot be made here, or None when they can."""
    if sys.platform != "linux":
        return "needs Linux namespaces"
    if os.geteuid() != 0:
        return "needs root (network, PID and mount namespaces, a bridge and veth pairs)"
    for tool in ("ip", "unshare", "nsenter", "mount"):
        if shutil.which(tool) is None:
            return f"needs the {tool!r} command"
    probe = subprocess.run(
        ["unshare", "--net", "--pid", "--mount", "--uts", "--fork", "--mount-proc", "true"],
        capture_output=True,
        text=True,
        timeout=20,
    )
    if probe.returncode != 0:
        return f"unshare refused: {probe.stderr.strip() or probe.returncode}"
    return None


def sh(*argv: str) -> None:
    done = subprocess.run(list(argv), capture_output=True, text=True, timeout=30)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: {done.stderr.strip()}")


@dataclass
class SimHost:
    name: str
    netns: str
    address: str
    view: Path
    """Where this host mounts the shared workspace."""
    env: dict[str, str] = field(default_factory=dict)
    init: subprocess.Popen[bytes] | None = None

    @property
    def init_pid(self) -> int:
        """The host's PID 1, as seen from the test's namespace."""
        assert self.init is not None
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            children = psutil.Process(self.init.pid).children()
            if children:
                return children[0].pid
            time.sleep(0.05)
        raise RuntimeError(f"host {self.name}: its init did not start")

    def start(self, shared: Path) -> SimHost:
        script = (
            f"hostname {self.name} && mount --bind {shared} {self.view} && "
            f'exec {sys.executable} -c "$SIMHOST_INIT"'
        )
        self.init = subprocess.Popen(
            [
                "ip",
                "netns",
                "exec",
                self.netns,
                "unshare",
                "--pid",
                "--mount",
                "--uts",
                "--fork",
                "--mount-proc",
                "sh",
                "-c",
                script,
            ],
            env={**os.environ, "SIMHOST_INIT": INIT},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        pid = self.init_pid
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:  # the bind mount is in place
            probe = self.run(["test", "-e", str(self.view / "swarm.yaml")], timeout=10, check=False)
            if probe.returncode == 0:
                return self
            time.sleep(0.1)
        raise RuntimeError(f"host {self.name} (pid {pid}) never saw the workspace at {self.view}")

    def run(
        self,
        argv: Sequence[str],
        *,
        timeout: float = 120,
        check: bool = True,
        env: Mapping[str, str] | None = None,
    ) -> subprocess.CompletedProcess[str]:
        """Run ``argv`` inside this host (its network, PIDs, mounts and hostname)."""
        # cd inside: nsenter's --wd would resolve the directory in the caller's mounts
        full = [
            "nsenter",
            "-t",
            str(self.init_pid),
            "--net",
            "--pid",
            "--mount",
            "--uts",
            "--",
            "sh",
            "-c",
            f'cd "{self.view}" && exec "$@"',
            "sh",
            *argv,
        ]
        done = subprocess.run(
            full,
            env={**os.environ, **self.env, **(env or {})},
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if check and done.returncode != 0:
            raise AssertionError(
                f"on {self.name}: {' '.join(argv)} → {done.returncode}\n{done.stdout}\n{done.stderr}"
            )
        return done

    def swarmq(
        self, *args: str, timeout: float = 180, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        return self.run(
            [sys.executable, "-m", "swarmq.cli", "--config", str(self.view / "swarm.yaml"), *args],
            timeout=timeout,
            check=check,
        )

    def kill(self) -> None:
        """Power off: SIGKILL the host's PID 1, which takes every process of the host with it."""
        if self.init is not None and self.init.poll() is None:
            with contextlib.suppress(psutil.NoSuchProcess, RuntimeError):
                os.kill(self.init_pid, 9)
            self.init.wait(timeout=20)


@dataclass
class Cluster:
    """Two (or more) simulated hosts on one bridge, and a Redis on the bridge address."""

    root: Path
    shared: Path
    subnet: int
    bridge: str
    hosts: list[SimHost] = field(default_factory=list)
    redis: subprocess.Popen[bytes] | None = None
    redis_url: str = ""

    @property
    def gateway(self) -> str:
        return f"10.231.{self.subnet}.1"


@contextlib.contextmanager
def simulated_cluster(root: Path, names: Sequence[str]) -> Iterator[Cluster]:
    """Bridge, namespaces, veths and a Redis; everything is removed on exit, whatever happened."""
    tag = uuid.uuid4().hex[:5]
    cluster = Cluster(root, root / "shared", random.randint(1, 250), f"swqbr{tag}")
    cluster.shared.mkdir(parents=True, exist_ok=True)
    links: list[str] = []
    try:
        sh("ip", "link", "add", cluster.bridge, "type", "bridge")
        links.append(cluster.bridge)
        sh("ip", "addr", "add", f"{cluster.gateway}/24", "dev", cluster.bridge)
        sh("ip", "link", "set", cluster.bridge, "up")
        for n, name in enumerate(names, start=2):
            netns, outside, inside = (
                f"swq{name[-1]}{tag}",
                f"swq{name[-1]}{tag}o",
                f"swq{name[-1]}{tag}i",
            )
            host = SimHost(
                name, netns, f"10.231.{cluster.subnet}.{n}", root / f"{name}-view" / "workspace"
            )
            host.view.mkdir(parents=True)
            sh("ip", "netns", "add", netns)
            cluster.hosts.append(host)
            sh("ip", "link", "add", outside, "type", "veth", "peer", "name", inside)
            links.append(outside)
            sh("ip", "link", "set", inside, "netns", netns)
            sh("ip", "link", "set", outside, "master", cluster.bridge)
            sh("ip", "link", "set", outside, "up")
            sh(
                "ip",
                "netns",
                "exec",
                netns,
                "ip",
                "addr",
                "add",
                f"{host.address}/24",
                "dev",
                inside,
            )
            sh("ip", "netns", "exec", netns, "ip", "link", "set", inside, "up")
            sh("ip", "netns", "exec", netns, "ip", "link", "set", "lo", "up")
        port = free_port()
        cluster.redis = subprocess.Popen(
            [
                str(server_binary()),
                "--port",
                str(port),
                "--bind",
                "127.0.0.1",
                cluster.gateway,
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(root),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        cluster.redis_url = f"redis://{cluster.gateway}:{port}/0"
        deadline = time.monotonic() + 10
        while True:
            try:
                redis.Redis.from_url(cluster.redis_url, socket_connect_timeout=0.3).ping()
                break
            except redis.ConnectionError:
                if cluster.redis.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"Redis on {cluster.redis_url} did not start") from None
                time.sleep(0.05)
        yield cluster
    finally:
        for host in cluster.hosts:
            host.kill()
        if cluster.redis is not None:
            cluster.redis.terminate()
            cluster.redis.wait(timeout=10)
        for host in cluster.hosts:
            with contextlib.suppress(RuntimeError):
                sh("ip", "netns", "delete", host.netns)
        for link in reversed(links):
            with contextlib.suppress(RuntimeError):
                sh("ip", "link", "delete", link)
