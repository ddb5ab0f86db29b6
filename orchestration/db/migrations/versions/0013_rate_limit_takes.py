"""Rate limits: every token taken in the last hour, so that the retrievals of the current hour
window can be counted.

Revision ID: 0013
Revises: 0012
"""

from orchestration.db.migrate import run_sql_file

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    run_sql_file("0013_rate_limit_takes.sql")


def downgrade() -> None:
    run_sql_file("0013_rate_limit_takes_downgrade.sql")
