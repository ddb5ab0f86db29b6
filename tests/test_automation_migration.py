"""Migration 0002: the automation schema with the indexes and constraint of seeds/004, and its downgrade."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import command

from orchestration.db.migrate import _alembic_config

SEED_INDEXES = {
    "uq_scheduled_trigger_execution",
    "idx_scheduled_action_pending",
    "idx_scheduled_action_processing",
    "idx_scheduled_action_subject",
    "idx_trigger_log_rule_created",
    "idx_trigger_rule_organization",
    "idx_trigger_rule_deleted_date",
}


def automation_indexes(conn: sa.Connection) -> set[str]:
    return set(conn.execute(sa.text("SELECT indexname FROM pg_indexes WHERE schemaname = 'automation'")).scalars())


def test_downgrade_removes_the_automation_schema_and_upgrade_restores_it(engine):
    with engine.begin() as conn:
        assert automation_indexes(conn) >= SEED_INDEXES
        command.downgrade(_alembic_config(conn), "0001")
        assert conn.execute(sa.text("SELECT to_regnamespace('automation')")).scalar() is None
        assert conn.execute(sa.text("SELECT to_regclass('content.entities_created_at_idx')")).scalar() is None
        command.upgrade(_alembic_config(conn), "head")
        assert automation_indexes(conn) >= SEED_INDEXES
