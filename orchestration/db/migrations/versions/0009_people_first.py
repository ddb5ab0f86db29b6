"""People first: job priorities, search results, what a result row says of an entity.

Revision ID: 0009
Revises: 0008
"""

from orchestration.db.migrate import run_sql_file

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    run_sql_file("0009_people_first.sql")


def downgrade() -> None:
    run_sql_file("0009_people_first_downgrade.sql")
