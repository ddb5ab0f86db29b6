"""Job indexes: only those the claim and completion path needs.

Revision ID: 0003
Revises: 0002
"""

from orchestration.db.migrate import run_sql_file

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    run_sql_file("0003_job_indexes.sql")


def downgrade() -> None:
    run_sql_file("0003_job_indexes_downgrade.sql")
