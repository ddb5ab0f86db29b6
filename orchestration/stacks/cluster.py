"""The multi-host layout of docs/deployment.md on one machine, as separate processes.

Services: PostgreSQL (Debian's server, TCP and password authentication), Redis (the Celery
broker), moto's S3 server (the object store), with ``--pgbouncer`` PgBouncer in transaction mode
in front of PostgreSQL for the workers, and, for HREG_REGISTER=sample, the sample register.
Processes: a gRPC code server of its own, the webserver and the daemon reaching it through a
``grpc_server`` workspace, the Prometheus endpoint (`hreg metrics`, at HREG_METRICS_PORT when set)
beside them, and N Celery workers, each with its own working directory and HREG_DATA_DIR. They share
nothing but the services; with ``--isolated-hosts`` each worker is a host of its own, in network and
mount namespaces (``orchestration.stacks.hosts``). ``scripts/cluster.sh`` runs ``main``.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import hashlib
import json
import logging
import os
import pwd
import secrets
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import boto3
import httpx
import yaml
from sqlalchemy.engine import URL

from orchestration.assembly.celery_config import celery_executor_config
from orchestration.assembly.dagster_instance import ensure_storage, write_instance_config
from orchestration.db.engine import dagster_url
from orchestration.runtime.processes import reset_interrupt_signals
from orchestration.settings import Settings
from orchestration.stacks.devstack import PROJECT_ROOT, stop_processes, wait_for_http
from orchestration.stacks.hosts import HostNetwork, code_paths

log = logging.getLogger(__name__)

BIN = Path(sys.executable).parent
LOCATION_NAME = "handelsregister"
BUCKET = "hreg"
PGBOUNCER = "/usr/sbin/pgbouncer"  # Debian's pgbouncer package
DATABASE = "hreg"
# moto accepts any credentials; boto3 wants some, and a region.
S3_CREDENTIALS = {"AWS_ACCESS_KEY_ID": "hreg", "AWS_SECRET_ACCESS_KEY": "hreg", "AWS_DEFAULT_REGION": "eu-central-1"}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# PostgreSQL ------------------------------------------------------------------------------------


def _pg_bin() -> Path:
    versions = sorted(Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"), key=lambda p: int(p.parent.parent.name))
    if not versions:
        raise RuntimeError("Debian's postgresql package is not installed (scripts/bootstrap.sh installs it)")
    return versions[-1].parent


@dataclass(frozen=True)
class PostgresServer:
    """A PostgreSQL server of its own, run with pg_ctl; as root, as the ``postgres`` user (the server
    refuses to run as root), with its files where that user can reach them."""

    base: Path
    port: int
    password: str
    host: str = "127.0.0.1"

    @property
    def pgdata(self) -> Path:
        return self.base / "data"

    @property
    def url(self) -> URL:
        return URL.create("postgresql+psycopg2", "postgres", self.password, self.host, self.port, database=DATABASE)

    def _run(self, *args: str) -> None:
        user = "postgres" if os.geteuid() == 0 else None
        subprocess.run([str(_pg_bin() / "pg_ctl"), "-D", str(self.pgdata), *args], check=True, user=user,
                       stdout=subprocess.DEVNULL, preexec_fn=reset_interrupt_signals)  # fmt: skip

    def start(self) -> None:
        options = f"-p {self.port} -k {self.base} -c listen_addresses={self.host}"
        self._run("-l", str(self.base / "postgres.log"), "-w", "-o", options, "start")

    def stop(self) -> None:
        self._run("-m", "fast", "-w", "stop")

    def restart(self) -> None:
        self._run("-m", "fast", "-w", "restart")


def postgres_base(data_dir: Path) -> Path:
    """Where the PostgreSQL server of ``data_dir`` keeps its files."""
    if os.geteuid() == 0:
        # The postgres user cannot enter root's private directories (pytest's, a home): its files
        # go to a directory of its own in the temp dir, named after the data dir.
        digest = hashlib.sha256(str(data_dir.resolve()).encode()).hexdigest()[:12]
        return Path(tempfile.gettempdir()) / f"hreg-cluster-pg-{digest}"
    return data_dir / "postgres-server"


def postgres_server(data_dir: Path, port: int, network: HostNetwork | None = None) -> PostgresServer:
    """The server of ``data_dir``, initialised on first use (scram-sha-256 over TCP); on the hosts'
    network when given, open to its addresses."""
    base = postgres_base(data_dir)
    password_file = data_dir / "postgres-password"
    if not password_file.exists():
        password_file.write_text(secrets.token_urlsafe(24))
        password_file.chmod(0o600)
    host = network.services_address if network else "127.0.0.1"
    server = PostgresServer(base, port, password_file.read_text().strip(), host)
    if not (server.pgdata / "PG_VERSION").exists():
        shutil.rmtree(base, ignore_errors=True)
        base.mkdir(parents=True)
        pwfile = base / "pwfile"
        pwfile.write_text(server.password)
        if os.geteuid() == 0:
            owner = pwd.getpwnam("postgres")
            for path in (base, pwfile):
                os.chown(path, owner.pw_uid, owner.pw_gid)
        subprocess.run(
            [str(_pg_bin() / "initdb"), "-D", str(server.pgdata), "-U", "postgres", "--auth=scram-sha-256",
             f"--pwfile={pwfile}", "--encoding=UTF8", "--locale=C.UTF-8"],
            check=True, user="postgres" if os.geteuid() == 0 else None, stdout=subprocess.DEVNULL,
        )  # fmt: skip
        pwfile.unlink()
    if network is not None:
        with open(server.pgdata / "pg_hba.conf", "a") as hba:
            hba.write(f"host all all {network.cidr} scram-sha-256\n")
    return server


# The layout ------------------------------------------------------------------------------------


@dataclass
class Cluster:
    data_dir: Path
    workers: int
    network: HostNetwork | None = None  # worker hosts in namespaces of their own (--isolated-hosts)
    postgres: PostgresServer | None = None
    env: dict[str, str] = field(default_factory=dict)  # what every process of the cluster gets
    worker_env: dict[str, str] = field(default_factory=dict)  # and what the workers get besides
    processes: dict[str, subprocess.Popen] = field(default_factory=dict)
    specs: dict[str, tuple[list[str], Path, dict[str, str], str | None]] = field(default_factory=dict)
    webserver_url: str = ""
    metrics_url: str = ""

    @property
    def env_file(self) -> Path:
        return self.data_dir / "cluster.env"

    @property
    def processes_file(self) -> Path:
        return self.data_dir / "cluster-processes.json"

    @property
    def services_host(self) -> str:
        """The address the services listen on: the hosts' network, else loopback."""
        return self.network.services_address if self.network else "127.0.0.1"

    def home(self, name: str) -> Path:
        """The working directory and HREG_DATA_DIR of one host's process."""
        path = self.data_dir / "hosts" / name
        path.mkdir(parents=True, exist_ok=True)
        return path

    def spawn(
        self, name: str, argv: list[str], home: Path | None = None, env: dict[str, str] | None = None,
        user: str | None = None,
    ) -> subprocess.Popen:  # fmt: skip
        """Start ``argv`` in ``home`` with the cluster's environment and ``env``, as ``user`` if given."""
        home = home or self.home(name)
        self.specs[name] = (argv, home, env or {}, user)
        env = {**os.environ, **self.env, "HREG_DATA_DIR": str(home), "DAGSTER_HOME": str(home / "dagster_home"),
               **(env or {})}  # fmt: skip
        # dagster-celery starts `celery` by name: the project's environment comes first on the path.
        env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
        log_dir = self.data_dir / "logs"
        log_dir.mkdir(parents=True, exist_ok=True)
        with open(log_dir / f"{name}.log", "ab") as out:
            process = subprocess.Popen(
                argv, cwd=home, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
                preexec_fn=reset_interrupt_signals, user=user,
            )  # fmt: skip
        self.processes[name] = process
        self.processes_file.write_text(json.dumps({n: p.pid for n, p in self.processes.items()}, indent=1))
        return process

    def respawn(self, name: str) -> subprocess.Popen:
        argv, home, env, user = self.specs[name]
        return self.spawn(name, argv, home, env, user)

    def log_path(self, name: str) -> Path:
        return self.data_dir / "logs" / f"{name}.log"


def _wait(predicate: Callable[[], bool], process: subprocess.Popen, what: str, timeout_s: float = 180) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{what}: the process exited with {process.returncode}")
        with contextlib.suppress(Exception):
            if predicate():
                return
        time.sleep(0.5)
    raise TimeoutError(f"{what} within {timeout_s:.0f}s")


def _accepts_connections(host: str, port: int) -> bool:
    socket.create_connection((host, port), timeout=1).close()
    return True


def _logs_ready(log: Path) -> bool:
    """A Celery worker's log says it is ready."""
    return b" ready." in log.read_bytes()


def start_services(cluster: Cluster, register: str) -> None:
    data_dir = cluster.data_dir
    host = cluster.services_host
    cluster.postgres = postgres_server(data_dir, free_port(), cluster.network)
    cluster.postgres.start()
    redis_port, s3_port = free_port(), free_port()
    redis_dir = cluster.home("redis")
    # A password, as off loopback Redis accepts no client without one (protected mode); in a file
    # of its own, not on a command line every process can read.
    redis_password = secrets.token_urlsafe(24)
    redis_config = redis_dir / "redis.conf"
    redis_config.touch(mode=0o600)
    redis_config.write_text(f"requirepass {redis_password}\n")
    cluster.spawn("redis", ["redis-server", str(redis_config), "--port", str(redis_port), "--bind", host,
                            "--save", "", "--appendonly", "no", "--dir", str(redis_dir)], redis_dir)  # fmt: skip
    s3 = cluster.spawn("object-store", [str(BIN / "moto_server"), "-H", host, "-p", str(s3_port)])
    endpoint = f"http://{host}:{s3_port}"
    cluster.env.update(
        {
            "HREG_CLUSTER": "1",
            "HREG_DATABASE_URL": cluster.postgres.url.render_as_string(hide_password=False),
            "HREG_DOCUMENT_STORE": f"s3://{BUCKET}/documents",
            "HREG_CELERY_BROKER_URL": f"redis://:{redis_password}@{host}:{redis_port}/0",
            "AWS_ENDPOINT_URL": endpoint,
            **S3_CREDENTIALS,
            "HREG_REGISTER": register,
        }
    )
    _wait(lambda: httpx.get(f"{endpoint}/moto-api/", timeout=2).status_code < 500, s3, "the object store")
    client = boto3.session.Session().client(
        "s3", endpoint_url=endpoint, region_name=S3_CREDENTIALS["AWS_DEFAULT_REGION"],
        aws_access_key_id=S3_CREDENTIALS["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=S3_CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
    )  # fmt: skip
    with contextlib.suppress(client.exceptions.BucketAlreadyOwnedByYou):
        client.create_bucket(Bucket=BUCKET, CreateBucketConfiguration={"LocationConstraint": "eu-central-1"})
    if register == "sample":
        port = free_port()
        register_process = cluster.spawn(
            "sample-register", [str(BIN / "hreg"), "sample-register", "--host", host, "--port", str(port)]
        )
        cluster.env["HREG_REGISTER_URL"] = f"http://{host}:{port}"
        wait_for_http(cluster.env["HREG_REGISTER_URL"] + "/", register_process, timeout_s=120)


def start_pgbouncer(cluster: Cluster) -> None:
    """PgBouncer in transaction mode in front of the server: the workers' application connections
    go through it (what must bypass it: docs/deployment.md)."""
    server = cluster.postgres
    assert server is not None, "start_services starts the server first"
    base = server.base / "pgbouncer"  # where the postgres user reaches it (PgBouncer refuses root)
    base.mkdir(exist_ok=True)
    users, config = base / "userlist.txt", base / "pgbouncer.ini"
    users.write_text(f'"postgres" "{server.password}"\n')
    port = free_port()
    config.write_text(
        f"""[databases]
{DATABASE} = host={server.host} port={server.port} dbname={DATABASE}

[pgbouncer]
listen_addr = {server.host}
listen_port = {port}
unix_socket_dir =
auth_type = scram-sha-256
auth_file = {users}
pool_mode = transaction
default_pool_size = 10
max_client_conn = 500
admin_users = postgres
"""
    )
    user = None
    if os.geteuid() == 0:
        user, owner = "postgres", pwd.getpwnam("postgres")
        for path in (base, users, config):
            os.chown(path, owner.pw_uid, owner.pw_gid)
    users.chmod(0o600)
    process = cluster.spawn("pgbouncer", [PGBOUNCER, str(config)], base, user=user)
    _wait(lambda: _accepts_connections(server.host, port), process, "PgBouncer")
    url = server.url.set(port=port).render_as_string(hide_password=False)
    cluster.worker_env["HREG_DATABASE_URL"] = url


def prepare_database(cluster: Cluster) -> None:
    """Migrate the application database as an operator would (`hreg db upgrade` with the cluster's
    environment), and write each Dagster host's instance config."""
    control = cluster.home("control")
    subprocess.run(
        [str(BIN / "hreg"), "db", "upgrade"], env={**os.environ, **cluster.env, "HREG_DATA_DIR": str(control)},
        check=True, stdout=subprocess.DEVNULL, preexec_fn=reset_interrupt_signals,
    )  # fmt: skip
    settings = Settings(
        database_url=cluster.env["HREG_DATABASE_URL"], document_store=cluster.env["HREG_DOCUMENT_STORE"]
    )
    storage_url = dagster_url(settings)
    ensure_storage(storage_url)
    for host in ("control", "code-server", *worker_names(cluster)):
        write_instance_config(cluster.home(host) / "dagster_home", storage_url, settings)


def worker_names(cluster: Cluster) -> list[str]:
    return [f"worker-{n}" for n in range(1, cluster.workers + 1)]


def start_code_server(cluster: Cluster, port: int) -> None:
    process = cluster.spawn(
        "code-server",
        [str(BIN / "dagster"), "code-server", "start", "-h", "127.0.0.1", "-p", str(port),
         "-m", "orchestration.definitions", "--location-name", LOCATION_NAME],
    )  # fmt: skip
    health = [str(BIN / "dagster"), "api", "grpc-health-check", "-p", str(port), "-h", "127.0.0.1"]
    _wait(lambda: subprocess.run(health, capture_output=True).returncode == 0, process, "the code server", 300)


def start_workers(cluster: Cluster) -> None:
    settings = Settings(celery_broker_url=cluster.env["HREG_CELERY_BROKER_URL"])
    for index, name in enumerate(worker_names(cluster), 1):
        home = cluster.home(name)
        config = home / "celery.yaml"
        config.write_text(yaml.safe_dump({"execution": {"config": celery_executor_config(settings)}}))
        argv = [str(BIN / "dagster-celery"), "worker", "start", "-A", "orchestration.assembly.celery_app",
                "-y", str(config), "-n", name, "-q", "dagster",
                "--", "--concurrency=1", "--without-gossip", "--without-mingle"]  # fmt: skip
        if cluster.network is not None:
            hidden = [Path(tempfile.gettempdir()), cluster.data_dir]
            argv = cluster.network.command(index, argv, keep=[home, *code_paths()], hidden=hidden)
        cluster.spawn(name, argv, home, env=cluster.worker_env)
    for name in worker_names(cluster):
        _wait(functools.partial(_logs_ready, cluster.log_path(name)), cluster.processes[name], name)


def start_control(cluster: Cluster, code_server_port: int, webserver_port: int) -> None:
    home = cluster.home("control")
    workspace = home / "workspace.yaml"
    workspace.write_text(
        yaml.safe_dump(
            {
                "load_from": [
                    {"grpc_server": {"host": "127.0.0.1", "port": code_server_port, "location_name": LOCATION_NAME}}
                ]
            }
        )
    )
    cluster.spawn("dagster-daemon", [str(BIN / "dagster-daemon"), "run", "-w", str(workspace)], home)
    webserver = cluster.spawn(
        "dagster-webserver",
        [str(BIN / "dagster-webserver"), "-w", str(workspace), "-h", "127.0.0.1", "-p", str(webserver_port)],
        home,
    )
    cluster.webserver_url = f"http://127.0.0.1:{webserver_port}"
    wait_for_http(cluster.webserver_url + "/server_info", webserver, timeout_s=300)


def start_metrics(cluster: Cluster, port: int) -> None:
    """The Prometheus endpoint on the control host, beside the daemon whose instance it reads."""
    process = cluster.spawn("metrics", [str(BIN / "hreg"), "metrics", "--port", str(port)], cluster.home("control"))
    cluster.metrics_url = f"http://127.0.0.1:{port}/metrics"
    wait_for_http(cluster.metrics_url, process, timeout_s=120)


def write_env_file(cluster: Cluster) -> str:
    """The environment a CLI on another host needs, as ``set -a; . cluster.env`` reads it."""
    lines = [
        f"# The cluster of {cluster.data_dir}; Dagster UI: {cluster.webserver_url}; metrics: {cluster.metrics_url}"
    ]
    lines += [f"# worker hosts: {name}={shlex.quote(value)}" for name, value in sorted(cluster.worker_env.items())]
    lines += [f"{name}={shlex.quote(value)}" for name, value in sorted(cluster.env.items())]
    text = "\n".join(lines) + "\n"
    cluster.env_file.write_text(text)
    cluster.env_file.chmod(0o600)
    return text


def start(
    data_dir: Path, workers: int, register: str, pgbouncer: bool = False, isolated_hosts: bool = False
) -> Cluster:
    cluster = Cluster(data_dir=data_dir.resolve(), workers=workers)
    cluster.data_dir.mkdir(parents=True, exist_ok=True)
    cluster.env_file.unlink(missing_ok=True)
    try:
        if isolated_hosts:
            cluster.network = HostNetwork.for_data_dir(cluster.data_dir)
            cluster.network.create(workers)
        start_services(cluster, register)
        if pgbouncer:
            start_pgbouncer(cluster)
        prepare_database(cluster)
        code_server_port = free_port()
        start_code_server(cluster, code_server_port)
        start_workers(cluster)
        start_control(cluster, code_server_port, free_port())
        # The configured port when one is set, else any free one: clusters side by side never clash.
        settings = Settings()
        start_metrics(cluster, settings.metrics_port if "metrics_port" in settings.model_fields_set else free_port())
    except BaseException:
        stop(cluster)
        raise
    write_env_file(cluster)
    return cluster


def stop(cluster: Cluster) -> None:
    stop_processes(cluster.processes)
    if cluster.postgres is not None and (cluster.postgres.pgdata / "postmaster.pid").exists():
        cluster.postgres.stop()
    if cluster.network is not None:
        cluster.network.remove(cluster.workers)
    cluster.processes_file.unlink(missing_ok=True)


def supervise(cluster: Cluster) -> None:
    """Until interrupted: a code server that exits is started again (the webserver and the daemon
    reconnect to it); any other process that exits is reported and left down."""
    reported = set()
    while True:
        for name, process in list(cluster.processes.items()):
            if process.poll() is None:
                continue
            if name == "code-server":
                log.warning("the code server exited with %s; starting it again", process.returncode)
                cluster.respawn(name)
            elif name not in reported:
                reported.add(name)
                log.warning("%s exited with %s; see %s", name, process.returncode, cluster.log_path(name))
        time.sleep(1)


def main(argv: list[str] | None = None) -> None:
    reset_interrupt_signals()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    for chatty in ("alembic", "httpx", "botocore"):
        logging.getLogger(chatty).setLevel(logging.WARNING)
    parser = argparse.ArgumentParser(prog="scripts/cluster.sh", description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=2, help="Celery workers (default 2)")
    parser.add_argument(
        "--pgbouncer", action="store_true", help="workers reach PostgreSQL through PgBouncer in transaction mode"
    )
    parser.add_argument(
        "--isolated-hosts",
        action="store_true",
        help="each worker a host of its own: network and mount namespaces, a private /tmp and data dir (root)",
    )
    settings = Settings()
    parser.add_argument("--register", choices=("sample", "live"), default=settings.register_kind)
    args = parser.parse_args(argv)
    # The cluster's hosts live apart from `hreg dev`'s data unless HREG_DATA_DIR names a directory.
    data_dir = settings.data_dir if "data_dir" in settings.model_fields_set else PROJECT_ROOT / ".hreg-cluster"

    def _interrupted(*_args) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, _interrupted)
    cluster = start(data_dir, args.workers, args.register, args.pgbouncer, args.isolated_hosts)
    try:
        print(write_env_file(cluster), end="", flush=True)
        print(f"written to {cluster.env_file}: `set -a; . {cluster.env_file}; set +a` on any host; Ctrl-C stops",
              flush=True)  # fmt: skip
        supervise(cluster)
    except KeyboardInterrupt:
        print("stopping…", flush=True)
    finally:
        stop(cluster)
        print("stopped", flush=True)


if __name__ == "__main__":
    main()
