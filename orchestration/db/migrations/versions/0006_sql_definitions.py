"""SQL definitions: failure classes as a table, the work key as one function.

Revision ID: 0006
Revises: 0005

From here on functions, triggers and views are definitions (db/sql/functions, db/sql/views),
applied after the versioned migrations whenever their file changed.
"""

from orchestration.db.migrate import apply_definitions, run_sql_file

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    apply_definitions("functions/job_work_key.sql")  # the recomputed column calls it
    run_sql_file("0006_sql_definitions.sql")


def downgrade() -> None:
    run_sql_file("0006_sql_definitions_downgrade.sql")
