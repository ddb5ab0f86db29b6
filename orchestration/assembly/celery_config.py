"""The one configuration of Dagster's Celery executor: the runs that send steps and the workers
that execute them read the same (``execution.config`` of a worker's ``celery.yaml``)."""

from __future__ import annotations

from orchestration.settings import Settings


def celery_executor_config(settings: Settings) -> dict:
    return {
        "broker": settings.celery_broker_url,
        "backend": settings.celery_broker_url,
        "config_source": {
            # A step is acknowledged when it ended, not when it began: a worker whose pool process
            # dies hands its step back, and the broker gives a step whose whole host died to another
            # worker after the visibility timeout. Otherwise the run waits for its result forever.
            "task_acks_late": True,
            "task_reject_on_worker_lost": True,
            # A worker reserves only the step it runs: none waits on a busy or dead worker.
            "worker_prefetch_multiplier": 1,
            "broker_transport_options": {
                "visibility_timeout": settings.celery_visibility_timeout_s,
                # Look for unacknowledged steps every restore interval (10 s), not every tenth.
                "unacked_restore_throttle": 1,
            },
        },
    }
