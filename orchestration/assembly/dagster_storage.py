"""Dagster's PostgreSQL storages, with their schema checks answered from memory once true.

Before many calls (an event stored, a sensor's state read or written, runs listed), Dagster's
storages ask the catalog whether a table or column of a later Dagster version exists yet, over a
new connection each time (the storages hold no pool). During a backfill those checks made up the
largest part of the database's work on Dagster's behalf, ahead of the events themselves. Once a
table or column is there it stays (only `dagster instance migrate` changes the schema, and it
only adds), so a true answer is kept for the life of the process and a false one is asked again.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from dagster_postgres.event_log import PostgresEventLogStorage
from dagster_postgres.run_storage import PostgresRunStorage
from dagster_postgres.schedule_storage import PostgresScheduleStorage
from dagster_postgres.utils import get_token_provider_from_config, pg_url_from_config
from sqlalchemy.engine import Connection

Check = TypeVar("Check", bound=Callable[..., bool])


def kept_once_true(check: Check) -> Check:
    """``check`` (a storage method), asked again only until it answers True; a connection
    argument is not part of what it asks."""

    @functools.wraps(check)
    def kept(self, *args: Any) -> bool:
        question = (check.__name__, *(arg for arg in args if not isinstance(arg, Connection)))
        known = self.__dict__.setdefault("_schema_found", set())
        if question in known:
            return True
        found = check(self, *args)
        if found:
            known.add(question)
        return found

    return kept  # type: ignore[return-value]


class FromInstanceConfig:
    """Built from the instance config as the storage it is mixed into would be (whose own
    from_config_value builds its base class by name)."""

    @classmethod
    def from_config_value(cls, inst_data, config_value):
        # The storage this is mixed into takes these arguments; mypy sees only the mixin's.
        return cls(  # type: ignore[call-arg]
            inst_data=inst_data,
            postgres_url=pg_url_from_config(config_value),
            should_autocreate_tables=config_value.get("should_autocreate_tables", True),
            token_provider=get_token_provider_from_config(config_value),
        )


class RunStorage(FromInstanceConfig, PostgresRunStorage):
    has_run_stats_index_cols = kept_once_true(PostgresRunStorage.has_run_stats_index_cols)
    has_bulk_actions_selector_cols = kept_once_true(PostgresRunStorage.has_bulk_actions_selector_cols)
    has_backfill_id_column = kept_once_true(PostgresRunStorage.has_backfill_id_column)
    has_bulk_action_job_name_column = kept_once_true(PostgresRunStorage.has_bulk_action_job_name_column)
    has_backfill_tags_table = kept_once_true(PostgresRunStorage.has_backfill_tags_table)


class EventLogStorage(FromInstanceConfig, PostgresEventLogStorage):
    has_table = kept_once_true(PostgresEventLogStorage.has_table)
    _has_asset_key_col_on_connection = kept_once_true(PostgresEventLogStorage._has_asset_key_col_on_connection)


class ScheduleStorage(FromInstanceConfig, PostgresScheduleStorage):
    has_instigators_table = kept_once_true(PostgresScheduleStorage.has_instigators_table)
    _has_instigators_table = kept_once_true(PostgresScheduleStorage._has_instigators_table)
    _has_asset_daemon_asset_evaluations_table = kept_once_true(
        PostgresScheduleStorage._has_asset_daemon_asset_evaluations_table
    )
    has_secondary_index_table = kept_once_true(PostgresScheduleStorage.has_secondary_index_table)
    has_built_index = kept_once_true(PostgresScheduleStorage.has_built_index)
