"""The automation schema as SQLAlchemy Core tables (the DDL is in db/sql/schema.sql)."""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import JSONB, UUID

metadata = sa.MetaData(schema="automation")

trigger_rule = sa.Table(
    "trigger_rule",
    metadata,
    sa.Column("id", sa.Integer, sa.Identity(always=True), primary_key=True),
    sa.Column("name", sa.String(255), nullable=False),
    sa.Column("source_type", sa.String(40), nullable=False),
    sa.Column("source_config", JSONB, nullable=False),
    sa.Column("action_type", sa.String(30), nullable=False),
    sa.Column("action_config", JSONB, nullable=False),
    sa.Column("enabled", sa.Boolean, nullable=False, server_default=sa.true()),
    sa.Column("frequency", sa.String(20), nullable=False, server_default="once_per_hour"),
    sa.Column("cooldown_seconds", sa.Integer),
    sa.Column("organization_id", UUID(as_uuid=True), nullable=False),
    sa.Column("created_by", UUID(as_uuid=True)),
    sa.Column("updated_by", UUID(as_uuid=True)),
    sa.Column("created_date", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()),
    sa.Column("updated_date", sa.DateTime(timezone=True)),
    sa.Column("deleted_date", sa.DateTime(timezone=True)),
)

watch_list = sa.Table(
    "watch_list",
    metadata,
    sa.Column("id", sa.BigInteger, sa.Identity(always=True), primary_key=True),
    sa.Column("organization_id", UUID(as_uuid=True), nullable=False),
    sa.Column("trigger_rule_id", sa.Integer),
    sa.Column("entity_id", UUID(as_uuid=True), nullable=False),
    sa.Column("added_by", UUID(as_uuid=True)),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()),
)

trigger_log = sa.Table(
    "trigger_log",
    metadata,
    sa.Column("id", sa.BigInteger, sa.Identity(always=True), primary_key=True),
    sa.Column("trigger_rule_id", sa.Integer, nullable=False),
    sa.Column("event_key", sa.Text, nullable=False),
    sa.Column("subject_id", UUID(as_uuid=True), nullable=False),
    sa.Column("trigger_on", sa.String(40), nullable=False),
    sa.Column("event", JSONB, nullable=False),
    sa.Column("action_type", sa.String(30), nullable=False),
    sa.Column("action_config", JSONB),
    sa.Column("status", sa.String(20), nullable=False),
    sa.Column("error_message", sa.Text),
    sa.Column("organization_id", UUID(as_uuid=True), nullable=False),
    sa.Column("created_date", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()),
    sa.Column("completed_date", sa.DateTime(timezone=True)),
)

scheduled_action = sa.Table(
    "scheduled_action",
    metadata,
    sa.Column("id", sa.BigInteger, sa.Identity(always=True), primary_key=True),
    sa.Column("trigger_rule_id", sa.Integer),
    sa.Column("trigger_log_id", sa.BigInteger),
    sa.Column("subject_id", UUID(as_uuid=True), nullable=False),
    sa.Column("organization_id", UUID(as_uuid=True), nullable=False),
    sa.Column("action_type", sa.String(30), nullable=False),
    sa.Column("action_config", JSONB, nullable=False),
    sa.Column("source_config", JSONB),
    sa.Column("event", JSONB, nullable=False),
    sa.Column("execute_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("expires_at", sa.DateTime(timezone=True)),
    sa.Column("status", sa.String(20), nullable=False, server_default="pending"),
    sa.Column("retry_count", sa.Integer, nullable=False, server_default="0"),
    sa.Column("max_retries", sa.Integer, nullable=False, server_default="0"),
    sa.Column("last_error", sa.Text),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()),
    sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()),
    sa.Column("executed_at", sa.DateTime(timezone=True)),
)

scheduled_trigger_execution = sa.Table(
    "scheduled_trigger_execution",
    metadata,
    sa.Column("id", sa.BigInteger, sa.Identity(always=True), primary_key=True),
    sa.Column("trigger_rule_id", sa.Integer, nullable=False),
    sa.Column("scheduled_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("started_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()),
    sa.Column("completed_at", sa.DateTime(timezone=True)),
    sa.Column("status", sa.String(20), nullable=False, server_default="processing"),
    sa.Column("total_entities", sa.Integer, nullable=False, server_default="0"),
    sa.Column("processed_entities", sa.Integer, nullable=False, server_default="0"),
    sa.Column("failed_entities", sa.Integer, nullable=False, server_default="0"),
    sa.Column("error_message", sa.Text),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()),
    sa.UniqueConstraint("trigger_rule_id", "scheduled_at", name="uq_scheduled_trigger_execution"),
)

notifications = sa.Table(
    "notifications",
    metadata,
    sa.Column("id", sa.BigInteger, sa.Identity(always=True), primary_key=True),
    sa.Column("organization_id", UUID(as_uuid=True), nullable=False),
    sa.Column("user_id", UUID(as_uuid=True)),
    sa.Column("trigger_rule_id", sa.Integer),
    sa.Column("trigger_log_id", sa.BigInteger),
    sa.Column("entity_id", UUID(as_uuid=True)),
    sa.Column("title", sa.Text, nullable=False),
    sa.Column("event", JSONB, nullable=False),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()),
    sa.Column("read_at", sa.DateTime(timezone=True)),
)
