"""A run requested for a batch claims that batch: the claim starts at the batch's head, and takes
from the queue's head only when nothing is left from there."""

import sqlalchemy as sa

from orchestration.runtime import queue
from queue_helpers import insert_entity, insert_search


def queued_searches(engine, count: int) -> None:
    with engine.begin() as conn:
        for i in range(count):
            insert_search(conn, f"Werft {i}")


def claim_ids(engine, worker_id: str, limit: int, start: queue.ClaimStart | None = None) -> set[str]:
    with engine.begin() as conn:
        return {job.id for job in queue.claim(conn, "basic_discovery", limit, worker_id, 60, start=start)}


def heads(engine, batch_size: int, runs: int) -> list[queue.BatchHead]:
    with engine.connect() as conn:
        return queue.batch_heads(conn, "basic_discovery", batch_size, runs)


def queued_ids(engine) -> set[str]:
    with engine.connect() as conn:
        return set(
            conn.execute(sa.text("SELECT id::text FROM processing.processing_jobs WHERE status = 'queued'")).scalars()
        )


def test_each_run_claims_the_batch_whose_head_it_was_given_in_any_order(engine):
    queued_searches(engine, 6)
    first, second, third = heads(engine, batch_size=2, runs=3)
    everything = queued_ids(engine)
    # The runs start in another order than they were requested.
    last_batch = claim_ids(engine, "run-3", 2, third.start)
    middle_batch = claim_ids(engine, "run-2", 2, second.start)
    first_batch = claim_ids(engine, "run-1", 2, first.start)
    assert third.job_id in last_batch and second.job_id in middle_batch and first.job_id in first_batch
    assert len(last_batch) == len(middle_batch) == len(first_batch) == 2
    assert last_batch | middle_batch | first_batch == everything


def test_a_run_whose_batch_was_taken_claims_what_follows_it_and_else_from_the_queue_head(engine):
    queued_searches(engine, 6)
    first, second, third = heads(engine, batch_size=2, runs=3)
    # A claim without a head (a run launched by hand) takes the first two batches.
    taken = claim_ids(engine, "manual-run", 4)
    assert first.job_id in taken and second.job_id in taken
    # The run requested for the second batch finds it gone and takes the jobs after it.
    assert third.job_id in claim_ids(engine, "run-2", 2, second.start)
    assert not queued_ids(engine)

    queued_searches(engine, 4)
    first, second = heads(engine, batch_size=2, runs=2)
    second_batch = claim_ids(engine, "run-2", 2, second.start)
    assert second.job_id in second_batch
    # Nothing is left from the second head on: a run given it again takes the queue's head.
    assert first.job_id in claim_ids(engine, "run-2-again", 2, second.start)
    assert not queued_ids(engine)


def test_a_run_for_a_background_batch_leaves_the_people_before_it_to_their_own_runs(engine):
    queued_searches(engine, 2)
    with engine.begin() as conn:
        for _ in range(2):  # a monitoring rule's re-checks: background
            conn.execute(sa.text("SELECT automation.request_rediscovery(:e)"), {"e": insert_entity(conn)})
    batches = heads(engine, batch_size=2, runs=2)
    assert [head.priority for head in batches] == ["interactive", "background"]
    with engine.begin() as conn:
        background = {job.id for job in queue.claim(conn, "basic_discovery", 2, "run-2", 60, start=batches[1].start)}
        assert {
            job.priority for job in queue.claim(conn, "basic_discovery", 2, "run-1", 60, start=batches[1].start)
        } == {"interactive"}
    assert batches[1].job_id in background and len(background) == 2


def test_a_batch_head_reads_back_from_the_text_a_run_is_tagged_with(engine):
    queued_searches(engine, 1)
    (head,) = heads(engine, batch_size=1, runs=1)
    assert queue.ClaimStart.from_text(head.start.to_text()) == head.start
