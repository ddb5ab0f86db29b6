"""Dagster's internals the project relies on (orchestration/assembly/dagster_internals.py), pinned.

Each is looked up where that module takes it from and checked for the shape the project relies on:
a tag's value (what is stored in the event log and on runs), a function's parameters, a storage
method's parameters. An upgrade of Dagster that moves, renames or reshapes one fails here, naming
it. The expected values are read from Dagster 1.13.27's source
(dagster/_core/definitions/data_version.py, dagster/_core/storage/tags.py,
dagster/_core/definitions/run_request.py, dagster/_core/scheduler/instigation.py,
dagster/_core/event_api.py, dagster/_core/storage/event_log/schema.py, dagster/_daemon/controller.py,
dagster_postgres/).
"""

from __future__ import annotations

import ast
import enum as enum_module
import importlib
import inspect
from pathlib import Path

import dagster as dg
import sqlalchemy as sa

# Read, not imported, where the pins are checked: a moved symbol fails that module's import at
# the first one, and the check names them all.
INTERNALS_MODULE = "orchestration.assembly.dagster_internals"
INTERNALS_SOURCE = Path(__file__).resolve().parents[1] / "orchestration/assembly/dagster_internals.py"

# Module -> name -> the value the project relies on.
PINNED_VALUES = {
    "dagster._core.definitions.data_version": {
        "CODE_VERSION_TAG": "dagster/code_version",
        "DATA_VERSION_TAG": "dagster/data_version",
        "DATA_VERSION_IS_USER_PROVIDED_TAG": "dagster/data_version_is_user_provided",
        "NULL_EVENT_POINTER": "NULL",
        "INPUT_EVENT_POINTER_TAG_PREFIX": "dagster/input_event_pointer",
    },
    "dagster._core.storage.tags": {
        "BACKFILL_ID_TAG": "dagster/backfill",
        "PARTITION_NAME_TAG": "dagster/partition",
        "ASSET_PARTITION_RANGE_START_TAG": "dagster/asset_partition_range_start",
        "ASSET_PARTITION_RANGE_END_TAG": "dagster/asset_partition_range_end",
    },
    "dagster._daemon.asset_daemon": {"EVALUATIONS_TTL_DAYS": 30},
    "dagster._daemon.controller": {"DEFAULT_DAEMON_INTERVAL_SECONDS": 30},
}
# Module -> enum -> the values of its members the project names.
PINNED_ENUMS = {
    "dagster._core.definitions.run_request": {"InstigatorType": {"SENSOR", "SCHEDULE", "AUTO_MATERIALIZE"}},
    "dagster._core.scheduler.instigation": {"TickStatus": {"STARTED", "SKIPPED", "SUCCESS", "FAILURE"}},
}
# Module -> class -> the keyword arguments the project builds one with, which it keeps as fields.
PINNED_CLASSES = {
    "dagster._core.event_api": {"PartitionKeyFilter": {"key": "Berlin"}},
}
# Module -> Dagster's table -> (its name in the database, the columns the project deletes by).
PINNED_TABLES = {
    "dagster._core.storage.event_log.schema": {
        "AssetCheckExecutionsTable": ("asset_check_executions", ["run_id"]),
        "AssetEventTagsTable": ("asset_event_tags", ["event_id"]),
        "SqlEventLogStorageTable": ("event_logs", ["id", "run_id", "event", "dagster_event_type"]),
    },
    "dagster._core.storage.runs.schema": {
        "BackfillTagsTable": ("backfill_tags", ["backfill_id"]),
        "BulkActionsTable": ("bulk_actions", ["key"]),
    },
}
# Module -> function -> (its parameters, what it returns for the documents asset).
DOCUMENTS = dg.AssetKey("raw_si_documents")
PINNED_FUNCTIONS = {
    "dagster._core.definitions.data_version": {
        "get_input_data_version_tag": (["input_key", "prefix"], "dagster/input_data_version/raw_si_documents"),
        "get_input_event_pointer_tag": (["input_key"], "dagster/input_event_pointer/raw_si_documents"),
    },
}
# dagster-postgres's helpers that read a storage's config, by their parameters.
PINNED_HELPERS = {
    "dagster_postgres.utils": {
        "pg_url_from_config": ["config_value"],
        "get_token_provider_from_config": ["config_value"],
    },
}
# The storage methods whose answers are kept once true, by their parameters after self.
PINNED_METHODS = {
    "dagster_postgres.run_storage.PostgresRunStorage": {
        "has_run_stats_index_cols": [],
        "has_bulk_actions_selector_cols": [],
        "has_backfill_id_column": [],
        "has_bulk_action_job_name_column": [],
        "has_backfill_tags_table": [],
    },
    "dagster_postgres.event_log.PostgresEventLogStorage": {
        "has_table": ["table_name"],
        "_has_asset_key_col_on_connection": ["conn", "column_name"],
    },
    "dagster_postgres.schedule_storage.PostgresScheduleStorage": {
        "has_instigators_table": [],
        "_has_instigators_table": ["conn"],
        "_has_asset_daemon_asset_evaluations_table": ["conn"],
        "has_secondary_index_table": [],
        "has_built_index": ["migration_name"],
    },
}
# The storage methods the project calls, by their parameters after self.
CALLED_METHODS = {
    "dagster_postgres.event_log.PostgresEventLogStorage": {"index_connection": []},
}
# What each storage is built with, from the instance config (dagster_internals.FromInstanceConfig).
STORAGE_PARAMETERS = ["postgres_url", "should_autocreate_tables", "inst_data", "token_provider"]
OUR_STORAGES = {
    "dagster_postgres.run_storage.PostgresRunStorage": "RunStorage",
    "dagster_postgres.event_log.PostgresEventLogStorage": "EventLogStorage",
    "dagster_postgres.schedule_storage.PostgresScheduleStorage": "ScheduleStorage",
}
MISSING = object()


def look_up(path: str) -> object:
    """The object at a dotted path: a module, or an attribute of one (a class's too)."""
    parts = path.split(".")
    for split in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:split]))
        except ImportError:
            continue
        for part in parts[split:]:
            found = getattr(found, part, MISSING)
        return found
    return MISSING


def parameters(function: object, *, skip_self: bool = False) -> list[str]:
    names = list(inspect.signature(function).parameters)  # type: ignore[arg-type]
    return names[1:] if skip_self else names


def moved_values() -> list[str]:
    moved = []
    for module, values in PINNED_VALUES.items():
        for name, expected in values.items():
            found = look_up(f"{module}.{name}")
            if found is MISSING:
                moved.append(f"{module}.{name}: missing")
            elif found != expected:
                moved.append(f"{module}.{name}: expected {expected!r}, found {found!r}")
    return moved


def moved_enums() -> list[str]:
    moved = []
    for module, enums in PINNED_ENUMS.items():
        for name, values in enums.items():
            enum = look_up(f"{module}.{name}")
            found = {member.value for member in enum} if isinstance(enum, enum_module.EnumMeta) else set()
            if not values <= found:
                moved.append(f"{module}.{name}: missing or without {sorted(values - found)}")
    return moved


def moved_functions() -> list[str]:
    moved = []
    for module, functions in PINNED_FUNCTIONS.items():
        for name, (expected_parameters, expected_tag) in functions.items():
            function = look_up(f"{module}.{name}")
            if not callable(function):
                moved.append(f"{module}.{name}: missing")
            elif parameters(function) != expected_parameters or function(DOCUMENTS) != expected_tag:
                moved.append(f"{module}.{name}: parameters {parameters(function)}, gives {function(DOCUMENTS)!r}")
    for module, helpers in PINNED_HELPERS.items():
        for name, expected_parameters in helpers.items():
            function = look_up(f"{module}.{name}")
            if not callable(function) or parameters(function) != expected_parameters:
                moved.append(f"{module}.{name}: missing or parameters changed")
    return moved


def moved_classes() -> list[str]:
    moved = []
    for module, classes in PINNED_CLASSES.items():
        for name, fields in classes.items():
            built = look_up(f"{module}.{name}")
            try:
                kept = inspect.isclass(built) and all(
                    getattr(built(**fields), field) == value for field, value in fields.items()
                )
            except TypeError:
                kept = False
            if not kept:
                moved.append(f"{module}.{name}: missing or not built from {sorted(fields)}")
    return moved


def moved_tables() -> list[str]:
    moved = []
    for module, tables in PINNED_TABLES.items():
        for name, (table_name, columns) in tables.items():
            table = look_up(f"{module}.{name}")
            if not isinstance(table, sa.Table) or table.name != table_name or not set(columns) <= set(table.c.keys()):
                moved.append(f"{module}.{name}: missing, renamed or without {columns}")
    return moved


def moved_methods() -> list[str]:
    moved = []
    for storage, methods in PINNED_METHODS.items():
        storage_class = look_up(storage)
        if not inspect.isclass(storage_class):
            moved.append(f"{storage}: missing")
            continue
        built_with = parameters(storage_class.__init__, skip_self=True)
        if built_with != STORAGE_PARAMETERS:
            moved.append(f"{storage}.__init__: parameters {built_with}")
        for name, expected_parameters in methods.items():
            method = getattr(storage_class, name, MISSING)
            if not callable(method) or parameters(method, skip_self=True) != expected_parameters:
                moved.append(f"{storage}.{name}: missing or parameters changed")
    for storage, methods in CALLED_METHODS.items():
        for name, expected_parameters in methods.items():
            method = look_up(f"{storage}.{name}")
            if not callable(method) or parameters(method, skip_self=True) != expected_parameters:
                moved.append(f"{storage}.{name}: missing or parameters changed")
    return moved


def test_the_pinned_internals_of_dagster_are_where_and_as_the_project_expects_them():
    moved = moved_values() + moved_enums() + moved_functions() + moved_classes() + moved_tables() + moved_methods()
    assert moved == []


def private_imports() -> dict[str, set[str]]:
    """What dagster_internals imports from Dagster's private modules, by module."""
    imported: dict[str, set[str]] = {}
    for node in ast.walk(ast.parse(INTERNALS_SOURCE.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module.startswith("dagster._"):
            imported.setdefault(node.module, set()).update(alias.name for alias in node.names)
    return imported


def test_every_internal_the_project_takes_is_pinned():
    pinned: dict[str, set[str]] = {}
    for table in (PINNED_VALUES, PINNED_ENUMS, PINNED_FUNCTIONS, PINNED_CLASSES, PINNED_TABLES):
        for module, names in table.items():
            pinned.setdefault(module, set()).update(names)
    assert private_imports() == pinned
    # Every storage method we override is pinned, and our storages derive from the pinned classes.
    internals = importlib.import_module(INTERNALS_MODULE)
    for storage, name in OUR_STORAGES.items():
        ours = getattr(internals, name)
        overridden = {name for name, member in vars(ours).items() if hasattr(member, "__wrapped__")}
        assert overridden == set(PINNED_METHODS[storage]), storage
        assert issubclass(ours, look_up(storage))
