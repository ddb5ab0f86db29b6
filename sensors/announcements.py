"""Reading the register's announcements for the monitoring rules: a daily job, one results page
per watched court and ended day (orchestration.automation.announcements).

The poll materializes ``register_announcements`` (content.register_announcements, what it
writes), whose freshness policy has it read each morning: a poll that stops (the schedule off,
the daemon down, every run failing) shows as a failed freshness check on the asset in the UI.
"""

from datetime import timedelta

import dagster as dg

from orchestration.automation.announcements import poll_announcements
from resources.database import DatabaseResource
from resources.register import RegisterResource

TIMEZONE = "Europe/Berlin"
# Early in the morning: the day before is complete, and people start work after it.
POLL_CRON = "30 5 * * *"
# Each day's poll must have materialized between 05:30 and 08:00: two and a half hours for runs
# that wait on the rate limit or are retried.
announcements_freshness_policy = dg.FreshnessPolicy.cron(
    deadline_cron="0 8 * * *", lower_bound_delta=timedelta(hours=2, minutes=30), timezone=TIMEZONE
)


@dg.asset(
    name="register_announcements",
    freshness_policy=announcements_freshness_policy,
    description="New register announcements about the companies watched by monitoring rules "
    "(content.register_announcements): the announcement pages of their courts, one per court and ended day.",
)
def register_announcements(
    context: dg.AssetExecutionContext, database: DatabaseResource, register: RegisterResource
) -> dg.MaterializeResult:
    # Monitoring: no person waits for it, so it leaves the bucket's reserve to people.
    with register.get_client(priority="background") as client:
        summary = poll_announcements(database.get_engine(), client)
    context.log.info(summary.describe())
    if summary.errors:
        # The courts that failed are read again at the next poll.
        context.log.warning("; ".join(summary.errors))
    return dg.MaterializeResult(
        metadata={
            "pages": summary.pages,
            "announcements": summary.announcements,
            "of_known_companies": summary.of_known_companies,
            "failed_courts": len(summary.errors),
        }
    )


register_announcements_job = dg.define_asset_job(
    name="register_announcements_job",
    selection=dg.AssetSelection.assets(register_announcements),
    executor_def=dg.in_process_executor,
    description="Reads new register announcements about watched companies; the monitoring rules fire on them.",
)


register_announcements_schedule = dg.ScheduleDefinition(
    name="register_announcements_schedule",
    job=register_announcements_job,
    cron_schedule=POLL_CRON,
    execution_timezone=TIMEZONE,
    default_status=dg.DefaultScheduleStatus.RUNNING,
)
