"""Sensor ticks while the database is unreachable: one line saying so, not a traceback."""

from __future__ import annotations

import functools
from collections.abc import Callable

import dagster as dg
import sqlalchemy as sa

from orchestration.db.problems import database_problem


def skip_while_database_unavailable(evaluate: Callable) -> Callable:
    """Wraps a sensor's function: a tick that fails on the database (unreachable, missing, not
    migrated) is skipped with what is wrong and what to run; the next tick tries again, so the
    sensor recovers by itself when the database returns."""

    @functools.wraps(evaluate)
    def evaluate_or_skip(context: dg.SensorEvaluationContext, **resources):
        try:
            return evaluate(context, **resources)
        except sa.exc.DBAPIError as error:
            problem = database_problem(error)
            if problem is None:
                raise
            context.log.warning(problem)
            return dg.SkipReason(f"database unavailable: {problem}")

    return evaluate_or_skip
