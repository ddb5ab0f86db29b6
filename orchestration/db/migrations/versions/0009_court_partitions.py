"""Court partitions: the companies of a register court found by index.

Revision ID: 0009
Revises: 0008
"""

from orchestration.db.migrate import run_sql_file

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    run_sql_file("0009_court_partitions.sql")


def downgrade() -> None:
    run_sql_file("0009_court_partitions_downgrade.sql")
