"""Evaluating event-driven rules incrementally, from a cursor the caller keeps."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from time import monotonic

from sqlalchemy.engine import Engine

from orchestration.automation.firing import FiringOutcome, fire
from orchestration.automation.monitoring_rules import live_rules
from orchestration.automation.sources import (
    EVENT_SOURCE_TYPES,
    EventCursor,
    collect_events,
    load_saved_searches,
    load_watchers,
    rule_accepts,
)


@dataclass
class EvaluationSummary:
    cursor: EventCursor
    events: int = 0
    outcomes: Counter[FiringOutcome] = field(default_factory=Counter)
    # False when the time budget ended the evaluation with events still waiting.
    caught_up: bool = True

    def describe(self) -> str:
        counts = ", ".join(f"{n} {outcome.value}" for outcome, n in sorted(self.outcomes.items())) or "no firing"
        backlog = "" if self.caught_up else "; more events waiting"
        return f"{self.events} events: {counts}{backlog}"


def evaluate_events(
    engine: Engine, cursor: EventCursor | None, *, batch_size: int = 500, time_budget_s: float = 20.0
) -> EvaluationSummary:
    """Fire the event-driven rules for the events after ``cursor``; the summary holds the new cursor.

    Without a cursor, evaluation starts from the present: history does not fire rules."""
    with engine.connect() as conn:
        if cursor is None:
            with conn.begin():
                return EvaluationSummary(cursor=EventCursor.at_end(conn))
        summary = EvaluationSummary(cursor=cursor)
        deadline = monotonic() + time_budget_s
        while True:
            with conn.begin():
                rules = live_rules(conn, EVENT_SOURCE_TYPES)
                batch = collect_events(conn, summary.cursor, rules, batch_size)
                watchers = load_watchers(conn, (event.entity_id for event in batch.events))
                searches = load_saved_searches(conn, rules)
            for event in batch.events:
                for rule in rules:
                    if rule_accepts(rule, event, watchers, searches):
                        summary.outcomes[fire(conn, rule, event)] += 1
            summary.events += len(batch.events)
            summary.cursor = batch.cursor
            summary.caught_up = not batch.more
            if not batch.more or monotonic() >= deadline:
                return summary
