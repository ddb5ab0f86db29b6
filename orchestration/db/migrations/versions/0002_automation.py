"""Automation: monitoring rules on companies, their log, scheduled actions and notifications.

Revision ID: 0002
Revises: 0001
"""

from orchestration.db.migrate import run_sql_file

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    run_sql_file("0002_automation.sql")


def downgrade() -> None:
    run_sql_file("0002_automation_downgrade.sql")
