"""What is wrong with the database, in one line a person can act on."""

from __future__ import annotations

import re

import sqlalchemy as sa

# SQLSTATEs that mean the schema is older than the code: a table, column, function or type is missing.
_NOT_MIGRATED = {"3F000", "42P01", "42703", "42883", "42704"}
_MISSING_DATABASE = re.compile(r'database "[^"]+" does not exist')
_UPGRADE_HINT = "run `hreg db upgrade` (or `hreg dev`, which migrates first)"


def database_problem(error: Exception) -> str | None:
    """One line saying what is wrong with the database and what to run, or None for other errors."""
    if not isinstance(error, sa.exc.DBAPIError) or isinstance(error, sa.exc.IntegrityError):
        return None
    code = getattr(error.orig, "pgcode", None)
    first_line = str(error.orig).strip().splitlines()[0] if error.orig else str(error)
    # invalid_catalog_name; at connection time the server says so without a SQLSTATE.
    if code == "3D000" or _MISSING_DATABASE.search(first_line):
        return f"the database does not exist yet ({first_line}): {_UPGRADE_HINT}"
    if code in _NOT_MIGRATED:
        return f"the database is not migrated to this version ({first_line}): {_UPGRADE_HINT}"
    if isinstance(error, sa.exc.OperationalError) and code is None:
        return (
            f"cannot reach the database ({first_line}): check HREG_DATABASE_URL, or leave it empty to use "
            "the embedded server under HREG_DATA_DIR"
        )
    return None
