"""Job types: what a job of each type shows on its entity and which type continues it, as columns
of processing.job_types that the trigger functions read.

Revision ID: 0014
Revises: 0013
"""

from orchestration.db.migrate import run_sql_file

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    run_sql_file("0014_job_type_effects.sql")


def downgrade() -> None:
    run_sql_file("0014_job_type_effects_downgrade.sql")
