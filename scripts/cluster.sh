#!/usr/bin/env bash
# The multi-host layout of docs/deployment.md on this machine, as separate processes: PostgreSQL,
# Redis and an S3 object store as services, a gRPC code server, the Dagster webserver and daemon,
# and N Celery workers (--workers N, default 2) with a working directory and HREG_DATA_DIR each.
# Prints the environment a CLI on another host needs and writes it to $HREG_DATA_DIR/cluster.env
# (default data dir: .hreg-cluster/). Ctrl-C stops it all.
set -euo pipefail
cd "$(dirname "$0")/.."
exec .venv/bin/python -m orchestration.stacks.cluster "$@"
