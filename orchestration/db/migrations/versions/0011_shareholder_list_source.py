"""Shareholder lists: where a list's words came from, and whether OCR replaced a poor text layer.

Revision ID: 0011
Revises: 0010
"""

from orchestration.db.migrate import run_sql_file

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    run_sql_file("0011_shareholder_list_source.sql")


def downgrade() -> None:
    run_sql_file("0011_shareholder_list_source_downgrade.sql")
