"""The Celery app of a worker host (``dagster-celery worker start -A orchestration.assembly.celery_app``):
dagster-celery's own, once the settings say this host may work."""

from __future__ import annotations

from orchestration.db.engine import refuse_embedded_in_cluster
from orchestration.settings import Settings

# Before any task is taken: a worker of the cluster without the cluster's database would claim
# nothing and store what it read where no other host sees it.
refuse_embedded_in_cluster(Settings())

from dagster_celery.app import app  # noqa: E402 - registers dagster-celery's tasks on import

__all__ = ["app"]
