"""Dagster assembled: its instance (config and storages), the Celery app and executor config of a
worker host, and the one module that touches Dagster's internals. The only core package that
imports Dagster, besides the code location (``orchestration/definitions.py``)."""
