"""Foundation: searches, entities, raw documents, the job queue and the roles.

The trigger functions it once created are definitions now (db/sql/functions), applied after the
versioned migrations.

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
    run_sql_file("0001_roles.sql")


def downgrade() -> None:
    run_sql_file("0001_downgrade.sql")
