"""Worker hosts that share nothing with the control host but the network: each Celery worker of the
cluster layout in a network namespace of its own, on a bridge that carries the services'
address, and in a mount namespace of its own, with a private ``/tmp`` and an empty cluster data
directory, so that a hidden dependency on another host's disk (a compute log, a temporary file, a
path passed in run config) fails as it would on separate machines. Linux only, as root (``ip
netns``, ``unshare``); ``scripts/cluster.sh --isolated-hosts``.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

# Each worker host sees its disk through this script: the directories it keeps (its home, the
# code) are bound aside; then, outermost path first, each hidden directory (/tmp, the cluster's
# data directory) is replaced by an empty file system and each kept one is moved back to its path,
# so a home inside the hidden data directory, or a project under /tmp, is still there.
HOST_MOUNTS = r"""
set -eu
mount -t tmpfs hreg-stage /mnt
n=0
while [ "$1" = bind ]; do mkdir "/mnt/$n"; mount --bind "$2" "/mnt/$n"; n=$((n + 1)); shift 2; done
while [ "$1" != run ]; do
    case "$1" in
        hide) mkdir -p "$2"; mount -t tmpfs hreg-private "$2"; shift 2 ;;
        move) mkdir -p "$3"; mount --move "/mnt/$2" "$3"; shift 3 ;;
    esac
done
shift
umount /mnt
exec "$@"
"""


def _ip(*args: str, check: bool = True) -> None:
    subprocess.run(["ip", *args], check=check, capture_output=True)


@dataclass(frozen=True)
class HostNetwork:
    """The test network of one cluster: a bridge whose address the services listen on, and one
    namespace per worker host with an address of its own on it."""

    tag: str  # a few digits that name this cluster's interfaces and namespaces
    subnet: int  # the third octet of 10.213.<subnet>.0/24

    @classmethod
    def for_data_dir(cls, data_dir: Path) -> HostNetwork:
        digest = int(hashlib.sha256(str(data_dir.resolve()).encode()).hexdigest()[:8], 16)
        subnet = digest % 200 + 20
        return cls(tag=str(subnet), subnet=subnet)

    @property
    def bridge(self) -> str:
        return f"hreg{self.tag}br"

    @property
    def services_address(self) -> str:
        return f"10.213.{self.subnet}.1"

    @property
    def cidr(self) -> str:
        return f"10.213.{self.subnet}.0/24"

    def namespace(self, index: int) -> str:
        return f"hreg{self.tag}h{index}"

    def host_address(self, index: int) -> str:
        return f"10.213.{self.subnet}.{10 + index}"

    def create(self, hosts: int) -> None:
        self.remove(hosts)  # what a cluster killed before its stop left behind
        _ip("link", "add", self.bridge, "type", "bridge")
        _ip("addr", "add", f"{self.services_address}/24", "dev", self.bridge)
        _ip("link", "set", self.bridge, "up")
        for index in range(1, hosts + 1):
            namespace, veth = self.namespace(index), f"hreg{self.tag}v{index}"
            _ip("netns", "add", namespace)
            _ip("link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", namespace)
            _ip("link", "set", veth, "master", self.bridge, "up")
            _ip("-n", namespace, "addr", "add", f"{self.host_address(index)}/24", "dev", "eth0")
            _ip("-n", namespace, "link", "set", "eth0", "up")
            _ip("-n", namespace, "link", "set", "lo", "up")

    def remove(self, hosts: int) -> None:
        for index in range(1, hosts + 1):
            _ip("netns", "delete", self.namespace(index), check=False)  # its veth goes with it
        _ip("link", "delete", self.bridge, check=False)

    def command(self, index: int, argv: list[str], keep: list[Path], hidden: list[Path]) -> list[str]:
        """``argv`` as host ``index`` runs it: in its network namespace, with ``hidden`` replaced by
        empty directories, and the ``keep`` paths (its home, the code) where they were."""
        return [
            "ip", "netns", "exec", self.namespace(index),
            "unshare", "--mount", "--propagation", "private",
            "sh", "-c", HOST_MOUNTS, "host-mounts", *mount_operations(keep, hidden), "run", *argv,
        ]  # fmt: skip


def mount_operations(keep: list[Path], hidden: list[Path]) -> list[str]:
    """The words of HOST_MOUNTS: bind each kept path aside, then hide and move back by depth."""
    kept = [path.resolve() for path in keep]
    words = [word for index, path in enumerate(kept) for word in ("bind", str(path))]
    steps = [(len(path.parts), ["hide", str(path.resolve())]) for path in hidden]
    steps += [(len(path.parts), ["move", str(index), str(path)]) for index, path in enumerate(kept)]
    for _depth, step in sorted(steps, key=lambda item: item[0]):
        words += step
    return words


def code_paths() -> list[Path]:
    """What a worker host needs of the control host's disk to run at all: the project and its
    virtualenv (on a real host, its own installation of the same release)."""
    from orchestration.stacks.devstack import PROJECT_ROOT

    return [PROJECT_ROOT, Path(sys.prefix)]
