"""Dagster's storage kept bounded: finished runs older than HREG_DAGSTER_RETENTION_DAYS are
deleted with their events, unless the UI still reads them, and finished backfills without runs
(orchestration.assembly.dagster_retention)."""

import dagster as dg

from orchestration.assembly.dagster_retention import delete_old_runs
from resources.dagster_retention import DagsterRetentionResource


@dg.sensor(
    name="dagster_retention_sensor",
    minimum_interval_seconds=300,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Deletes finished runs older than HREG_DAGSTER_RETENTION_DAYS with their events, in batches, "
    "keeping unfinished runs, runs of unfinished backfills and runs holding an asset partition's latest event "
    "or the input its latest materialization read, "
    "and then the finished backfills as old that have no run left.",
)
def dagster_retention_sensor(context: dg.SensorEvaluationContext, dagster_retention: DagsterRetentionResource):
    # Bookkeeping of Dagster's storage, not job work, so it runs in the tick; the cursor is where
    # the last tick stopped among the old runs.
    done = delete_old_runs(context.instance, dagster_retention.created_before(), resume_after=context.cursor or None)
    context.update_cursor(done.resume_after or "")
    return dg.SkipReason(done.describe())
