"""Job archive: completed jobs leave the hot table after a retention period (seeds/003).

Revision ID: 0007
Revises: 0006
"""

from orchestration.db.migrate import run_sql_file

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    run_sql_file("0007_job_archive.sql")


def downgrade() -> None:
    run_sql_file("0007_job_archive_downgrade.sql")
