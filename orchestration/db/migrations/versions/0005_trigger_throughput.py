"""Trigger throughput: the step-history and progress triggers do less per job.

Revision ID: 0005
Revises: 0004

The new function bodies write the same rows as those of 0001 and fit every earlier schema, so
the downgrade keeps them.
"""

from orchestration.db.migrate import run_sql_file

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    run_sql_file("0005_trigger_throughput.sql")


def downgrade() -> None:
    pass
