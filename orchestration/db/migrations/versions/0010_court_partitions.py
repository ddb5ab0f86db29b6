"""Court partitions: the companies of a register court found by index.

Revision ID: 0010
Revises: 0009
"""

from orchestration.db.migrate import run_sql_file

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    run_sql_file("0010_court_partitions.sql")


def downgrade() -> None:
    run_sql_file("0010_court_partitions_downgrade.sql")
