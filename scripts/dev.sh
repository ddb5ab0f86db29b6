#!/usr/bin/env bash
# The main job: embedded PostgreSQL, migrations, the sample register, Dagster webserver and daemon.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
exec .venv/bin/hreg dev "$@"
