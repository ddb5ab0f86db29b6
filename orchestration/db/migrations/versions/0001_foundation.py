"""Foundation: searches, entities, raw documents, the job queue, its triggers and the roles.

Revision ID: 0001
Revises:
"""

from orchestration.db.migrate import run_sql_file

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    run_sql_file("0001_schema.sql")
    run_sql_file("0001_functions.sql")
    run_sql_file("0001_roles.sql")


def downgrade() -> None:
    run_sql_file("0001_downgrade.sql")
