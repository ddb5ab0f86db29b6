"""Event horizon: rows record their inserting transaction, so event streams never skip one.

Revision ID: 0004
Revises: 0003
"""

from orchestration.db.migrate import run_sql_file

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    run_sql_file("0004_event_horizon.sql")


def downgrade() -> None:
    run_sql_file("0004_event_horizon_downgrade.sql")
