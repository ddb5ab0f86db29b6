"""Trigger throughput: the step-history and progress triggers do less per job.

Revision ID: 0005
Revises: 0004

It replaced the bodies of log_job_step_history and apply_job_progress; those are definitions now
(db/sql/functions), so the revision changes nothing itself and stays for databases stamped with it.
"""

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
