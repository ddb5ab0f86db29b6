#!/usr/bin/env bash
# Runs the whole test suite against a real PostgreSQL, Dagster and the sample register.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
# One worker process per core, at most four, each taking whole test files (a module's stack is started
# once); `-n 0` runs everything in this process.
exec .venv/bin/python -m pytest -n auto --maxprocesses 4 --dist loadfile "$@"
