"""Reading the register's announcements for the monitoring rules: a daily job, one results page
per watched court and ended day (orchestration.automation.announcements)."""

import dagster as dg

from orchestration.automation.announcements import poll_announcements
from resources.database import DatabaseResource
from resources.register import RegisterResource


@dg.op(description="Reads the announcement pages of the courts of watched companies, one per court and ended day.")
def poll_register_announcements(
    context: dg.OpExecutionContext, database: DatabaseResource, register: RegisterResource
) -> None:
    # Monitoring: no person waits for it, so it leaves the bucket's reserve to people.
    with register.get_client(priority="background") as client:
        summary = poll_announcements(database.get_engine(), client)
    context.log.info(summary.describe())
    if summary.errors:
        # The courts that failed are read again at the next poll.
        context.log.warning("; ".join(summary.errors))


@dg.job(
    name="register_announcements_job",
    executor_def=dg.in_process_executor,
    description="Reads new register announcements about watched companies; the monitoring rules fire on them.",
)
def register_announcements_job() -> None:
    poll_register_announcements()


register_announcements_schedule = dg.ScheduleDefinition(
    name="register_announcements_schedule",
    job=register_announcements_job,
    # Early in the morning: the day before is complete, and people start work after it.
    cron_schedule="30 5 * * *",
    execution_timezone="Europe/Berlin",
    default_status=dg.DefaultScheduleStatus.RUNNING,
)
