"""Register announcements: the announcements read and the pages polled, a rule source type for them.

Revision ID: 0008
Revises: 0007
"""

from orchestration.db.migrate import run_sql_file

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    run_sql_file("0008_register_announcements.sql")


def downgrade() -> None:
    run_sql_file("0008_register_announcements_downgrade.sql")
