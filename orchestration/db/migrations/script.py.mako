"""${message}

Revision ID: ${up_revision}
Revises: ${down_revision | comma,n}
"""

from orchestration.db.migrate import run_sql_file

revision = ${repr(up_revision)}
down_revision = ${repr(down_revision)}
branch_labels = None
depends_on = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
