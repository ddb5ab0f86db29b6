#!/usr/bin/env bash
# Runs the whole test suite against a real PostgreSQL, Dagster and the sample register.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
exec .venv/bin/python -m pytest "$@"
