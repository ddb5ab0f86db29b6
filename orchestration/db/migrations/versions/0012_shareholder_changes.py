"""Shareholders: the country of a shareholder's register (foreign companies), and the changes
column's text beside its rows.

Revision ID: 0012
Revises: 0011
"""

from orchestration.db.migrate import run_sql_file

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    run_sql_file("0012_shareholder_changes.sql")


def downgrade() -> None:
    run_sql_file("0012_shareholder_changes_downgrade.sql")
