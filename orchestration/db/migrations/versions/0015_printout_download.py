"""Printouts: the printout_download job type and raw documents of kind printout.

Revision ID: 0015
Revises: 0014
"""

from orchestration.db.migrate import run_sql_file

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    run_sql_file("0015_printout_download.sql")


def downgrade() -> None:
    run_sql_file("0015_printout_download_downgrade.sql")
