"""Printouts: the printout_download job type and raw documents of kind printout.

Revision ID: 0014
Revises: 0013
"""

from orchestration.db.migrate import run_sql_file

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    run_sql_file("0014_printout_download.sql")


def downgrade() -> None:
    run_sql_file("0014_printout_download_downgrade.sql")
