"""basic_discovery spends the portal's budget where a person waits: a search lists every result
row for one retrieval a page; an opened entity gets its SI document as its own job; a fresh
document is not fetched again; people's jobs are claimed first. Real PostgreSQL, the sample
register over real HTTP, which logs every retrieval it serves."""

from __future__ import annotations

import threading
import time
import uuid
from datetime import timedelta

import httpx
import pytest
import sqlalchemy as sa

from orchestration.jobs.specs import JOB_TYPES
from orchestration.records.documents import DocumentStore
from orchestration.register import portal_pages, register_client_for
from orchestration.register.results import SearchMode
from orchestration.runtime import queue
from orchestration.runtime.worker import run_batch, run_batches
from orchestration.settings import Settings
from orchestration.stages.discovery import DiscoveryStage
from orchestration.stages.parsing import XmlParsingStage
from queue_helpers import as_role, insert_entity, insert_search
from sample_register import start_sample_register_in_thread


@pytest.fixture(scope="module")
def sample_register(samples_dir):
    with start_sample_register_in_thread(samples_dir=samples_dir) as server:
        yield server


@pytest.fixture(autouse=True)
def no_faults(sample_register):
    yield
    httpx.delete(sample_register.url + "/_sample/faults").raise_for_status()


@pytest.fixture
def store(tmp_path):
    return DocumentStore(tmp_path / "documents")


@pytest.fixture
def discover(engine, sample_register, store):
    """Work the queued basic_discovery jobs as a run does, with the given rule for opening results;
    returns the retrievals the register served meanwhile, by kind."""
    settings = Settings(register_url=sample_register.url)

    def work(search_opens=("first", 0), result_pages=1, fresh_for=timedelta(hours=24)) -> dict[str, int]:
        stage = DiscoveryStage(
            JOB_TYPES.basic_discovery,
            lambda priority: register_client_for(settings, engine, priority=priority),
            store,
            result_pages=result_pages,
            search_opens=search_opens,
            fresh_for=fresh_for,
        )
        before = len(sample_register.retrieval_log.retrievals)
        run_batches(engine, stage, "test-discovery", max_batches=50)
        return sample_register.retrieval_log.kinds(since=before)

    return work


def parse(engine, store) -> None:
    run_batches(engine, XmlParsingStage(JOB_TYPES.xml_parsing, store), "test-parsing", max_batches=5)


def search_row(engine, search_id):
    with engine.connect() as conn:
        return conn.execute(sa.text("SELECT * FROM public.searches WHERE id = :s"), {"s": search_id}).one()


def results_of(engine, search_id) -> list[sa.Row]:
    with engine.connect() as conn:
        return conn.execute(
            sa.text("""SELECT r.position, e.* FROM public.search_results r JOIN content.entities e ON e.id = r.entity_id
                        WHERE r.search_id = :s ORDER BY r.position"""),
            {"s": search_id},
        ).all()


def discovery_jobs(engine) -> list[sa.Row]:
    with engine.connect() as conn:
        return conn.execute(
            sa.text("SELECT * FROM processing.processing_jobs WHERE type = 'basic_discovery' ORDER BY created_at")
        ).all()


def new_search(engine, query: str, mode: str = "all", **options) -> str:
    with engine.begin() as conn:
        return insert_search(conn, query, mode=mode, **options)


def test_a_search_records_every_row_of_its_page_for_one_retrieval(engine, sample_register, discover):
    expected = sample_register.corpus.search("GmbH", SearchMode.ALL)
    assert len(expected) > 100  # more than one page of the portal's largest size
    search_id = new_search(engine, "GmbH")

    retrievals = discover()

    assert retrievals == {"result_page": 1}
    found = search_row(engine, search_id)
    assert (found.status, found.result_count) == ("completed", 100)
    rows = results_of(engine, search_id)
    assert [r.position for r in rows] == list(range(1, 101))
    # Every row as the register lists it, with what the row carries, in the register's order.
    for row, company in zip(rows, expected[:100], strict=True):
        assert (row.court_code, row.register_type, row.register_number, row.name, row.seat) == (
            company.court.code,
            company.register_type,
            company.register_number,
            company.name,
            company.seat,
        )
        assert row.processing_status == "discovered"
        assert row.register_status == ("deleted" if company.deleted else "currently registered")
        assert "SI" in row.documents_offered and "DK" in row.documents_offered
        assert [(n["name"], n["seat"]) for n in row.earlier_names] == list(company.earlier_names)
    assert any(r.earlier_names for r in rows), "the corpus has companies with earlier names on this page"
    with engine.connect() as conn:
        assert conn.execute(sa.text("SELECT count(*) FROM content.raw_documents")).scalar_one() == 0
        assert (
            conn.execute(sa.text("SELECT count(*) FROM processing.processing_jobs WHERE type = 'xml_parsing'")).scalar()
            == 0
        )
    (job,) = discovery_jobs(engine)
    assert (job.result["result_count"], job.result["total_results"]) == (100, len(expected))


def test_further_result_pages_are_read_when_the_search_asks(engine, sample_register, discover):
    expected = sample_register.corpus.search("GmbH", SearchMode.ALL)
    search_id = new_search(engine, "GmbH", result_pages=2)
    retrievals = discover()

    assert retrievals == {"result_page": 2}
    rows = results_of(engine, search_id)
    assert len(rows) == min(200, len(expected)) == search_row(engine, search_id).result_count
    assert [(r.register_type, r.register_number, r.name) for r in rows] == [
        (c.register_type, c.register_number, c.name) for c in expected[:200]
    ]


def test_the_setting_reads_further_pages_for_every_search(engine, sample_register, discover):
    expected = sample_register.corpus.search("GmbH", SearchMode.ALL)
    search_id = new_search(engine, "GmbH")
    assert discover(result_pages=3) == {"result_page": 3}
    assert search_row(engine, search_id).result_count == min(300, len(expected))


def unique_company(corpus):
    names = [c.name for c in corpus.companies]
    return next(c for c in corpus.companies if c.seed is not None and not c.deleted and names.count(c.name) == 1)


def test_an_exact_name_search_with_one_result_opens_it_as_an_interactive_job(engine, sample_register, discover, store):
    company = unique_company(sample_register.corpus)
    search_id = new_search(engine, company.name, mode="exact")

    retrievals = discover(search_opens=("exact", 1))

    # The search: one result page. Its one result opened: found again by number, its SI downloaded.
    assert retrievals == {"result_page": 1, "entity_lookup": 1, "document": 1}
    assert search_row(engine, search_id).status == "completed"
    search_job, entity_job = discovery_jobs(engine)
    assert search_job.result["opened"] == 1
    assert (entity_job.entity_id, entity_job.priority, entity_job.status) == (
        results_of(engine, search_id)[0].id,
        "interactive",
        "completed",
    )
    with engine.connect() as conn:
        parse_job = conn.execute(sa.text("SELECT * FROM processing.processing_jobs WHERE type = 'xml_parsing'")).one()
    assert parse_job.priority == "interactive"
    parse(engine, store)
    assert results_of(engine, search_id)[0].processing_status == "parsed"


def test_a_keyword_search_opens_nothing_under_the_exact_rule(engine, sample_register, discover):
    company = unique_company(sample_register.corpus)
    new_search(engine, company.name, mode="all")
    assert discover(search_opens=("exact", 1))["result_page"] == 1
    assert len(discovery_jobs(engine)) == 1


def test_the_sample_registers_rule_opens_the_first_results(engine, discover):
    search_id = new_search(engine, "GmbH")
    retrievals = discover(search_opens=("first", 3))
    assert retrievals == {"result_page": 1, "entity_lookup": 3, "document": 3}
    statuses = [r.processing_status for r in results_of(engine, search_id)]
    assert statuses[:3] == ["xml_ready"] * 3 and set(statuses[3:]) == {"discovered"}


def test_opening_a_discovered_entity_fetches_its_si_once_within_the_freshness_window(engine, discover, store):
    search_id = new_search(engine, "GmbH")
    discover()
    entity_id = results_of(engine, search_id)[5].id
    # Seed 000: the application moves the entity from discovered to basic_discovery_running.
    with engine.begin() as conn:
        conn.execute(
            sa.text("UPDATE content.entities SET processing_status = 'basic_discovery_running' WHERE id = :e"),
            {"e": entity_id},
        )
    (job,) = [j for j in discovery_jobs(engine) if j.entity_id == entity_id]
    assert (job.status, job.priority) == ("queued", "interactive")

    assert discover() == {"entity_lookup": 1, "document": 1}
    parse(engine, store)
    with engine.connect() as conn:
        entity = conn.execute(sa.text("SELECT * FROM content.entities WHERE id = :e"), {"e": entity_id}).one()
        revisions = conn.execute(
            sa.text("SELECT count(*) FROM content.entity_revisions WHERE entity_id = :e"), {"e": entity_id}
        ).scalar_one()
    assert (entity.processing_status, revisions) == ("parsed", 1)

    # Opened again within the window: no retrieval, the stored document is parsed again.
    with engine.begin() as conn:
        conn.execute(sa.text("SELECT processing.open_entity(:e, 'interactive', NULL, 'again')"), {"e": entity_id})
    assert discover() == {}
    last = discovery_jobs(engine)[-1]
    assert (last.status, last.result["si_downloaded"], last.result["si_fresh"]) == ("completed", 0, True)

    # Past the window it is fetched again.
    with engine.begin() as conn:
        conn.execute(sa.text("SELECT processing.open_entity(:e, 'interactive', NULL, 'later')"), {"e": entity_id})
    assert discover(fresh_for=timedelta(seconds=0)) == {"entity_lookup": 1, "document": 1}


def test_people_are_claimed_before_background_work(engine):
    with engine.begin() as conn:
        watched = [
            str(
                conn.execute(
                    sa.text(f"""
                INSERT INTO content.entities (court_code, register_type, register_number, name)
                VALUES ('D2601', 'HRB', '{9000 + i}', 'Watched {i} GmbH') RETURNING id""")
                ).scalar_one()
            )
            for i in range(3)
        ]
        for entity_id in watched:  # a monitoring rule's re-checks: background
            conn.execute(sa.text("SELECT automation.request_rediscovery(:e)"), {"e": entity_id})
    time.sleep(0.01)
    search_id = new_search(engine, "Muster GmbH")
    with engine.begin() as conn:
        priorities = dict(
            conn.execute(
                sa.text("SELECT coalesce(search_id, entity_id)::text, priority::text FROM processing.processing_jobs")
            ).all()
        )
        assert priorities == {search_id: "interactive", **{e: "background" for e in watched}}
        (first,) = queue.claim(conn, "basic_discovery", 1, "test", 60)
        assert first.search_id == search_id and first.priority == "interactive"
        # A person opening a watched company lifts its queued re-check to interactive.
        conn.execute(sa.text("SELECT processing.open_entity(:e, 'interactive', NULL, NULL)"), {"e": watched[2]})
        (second,) = queue.claim(conn, "basic_discovery", 1, "test", 60)
        assert (second.entity_id, second.priority) == (watched[2], "interactive")
        rest = queue.claim(conn, "basic_discovery", 5, "test", 60)
    assert sorted(j.entity_id for j in rest) == sorted(watched[:2])


def test_no_transaction_is_open_while_a_retrieval_is_under_way(engine, sample_register, discover, monkeypatch):
    """A slow register must not keep a database transaction open: at the moment the register
    serves each request, the worker waiting for it holds no transaction."""
    open_at_each_request = []
    serve = sample_register.retrieval_log.app

    async def serve_once_no_transaction_is_open(scope, receive, send):
        with engine.connect() as conn:
            open_at_each_request.append(
                conn.execute(
                    sa.text("""
                SELECT count(*) FROM pg_stat_activity
                 WHERE datname = current_database() AND pid <> pg_backend_pid()
                   AND backend_type = 'client backend' AND xact_start IS NOT NULL
            """)
                ).scalar_one()
            )
        await serve(scope, receive, send)

    monkeypatch.setattr(sample_register.retrieval_log, "app", serve_once_no_transaction_is_open)
    search_id = new_search(engine, "GmbH")

    served = discover(result_pages=3)

    assert search_row(engine, search_id).status == "completed"
    assert served["result_page"] == 3
    assert len(open_at_each_request) >= 3 and set(open_at_each_request) == {0}


def test_the_recorded_result_page_tells_its_page_size_and_row_count(samples_dir):
    """The portal's DataTable widget, as recorded: 10 rows a page, 2 records ("1-2 of 2 records")."""
    doc = portal_pages.parse_page((samples_dir / "portal" / "search_results.html").read_bytes())
    table = portal_pages.parse_result_table(doc)
    assert (table.table_id, table.rows_per_page, table.row_count) == (
        "ergebnissForm:selectedSuchErgebnisFormTable",
        10,
        2,
    )


def test_each_path_that_creates_work_gives_it_the_priority_of_who_waits(engine):
    with engine.begin() as conn:
        person, watched, reparsed = (
            str(
                conn.execute(
                    sa.text(f"""
                INSERT INTO content.entities (court_code, register_type, register_number, name)
                VALUES ('D2601', 'HRB', '{n}', 'Prio {n} GmbH') RETURNING id""")
                ).scalar_one()
            )
            for n in (7001, 7002, 7003)
        )
        conn.execute(sa.text("SELECT processing.request_shareholder_research(:e, gen_random_uuid())"), {"e": person})
        conn.execute(sa.text("SELECT processing.request_shareholder_research(:e, NULL, 'background')"), {"e": watched})
        document = conn.execute(
            sa.text("""INSERT INTO content.raw_documents (sha256, entity_id, kind, media_type, size_bytes, content)
                       VALUES (repeat('a', 64), :e, 'si', 'application/xml', 1, 'x') RETURNING id"""),
            {"e": reparsed},
        ).scalar_one()
        queue.enqueue(conn, "xml_parsing", entity_id=reparsed, raw_document_id=str(document), trigger="parser_change")
        jobs = dict(
            conn.execute(
                sa.text("SELECT entity_id::text || ':' || type, priority::text FROM processing.processing_jobs")
            ).all()
        )
    assert jobs == {
        f"{person}:shareholder_download": "interactive",  # a person asked
        f"{watched}:shareholder_download": "background",  # a monitoring rule asked
        f"{reparsed}:xml_parsing": "background",  # a re-parse after a parser change
    }


def test_background_jobs_hold_at_most_their_slots_so_a_person_always_finds_a_worker(engine):
    with engine.begin() as conn:
        watched = [
            str(
                conn.execute(
                    sa.text(f"""
                INSERT INTO content.entities (court_code, register_type, register_number, name)
                VALUES ('D2601', 'HRB', '{8000 + i}', 'Slot {i} GmbH') RETURNING id""")
                ).scalar_one()
            )
            for i in range(2)
        ]
        for entity_id in watched:
            conn.execute(sa.text("SELECT automation.request_rediscovery(:e)"), {"e": entity_id})
        slots = queue.job_types(conn)["basic_discovery"].background_slots
    assert slots == 1
    with engine.begin() as conn:
        (first,) = queue.claim(conn, "basic_discovery", 1, "worker-a", 60, background_slots=slots)
    assert first.priority == "background"
    with engine.begin() as conn:
        # The one slot is taken: another worker claims no background job, and a sensor asks for no run.
        assert queue.claim(conn, "basic_discovery", 1, "worker-b", 60, background_slots=slots) == []
        assert queue.batch_heads(conn, "basic_discovery", 1, 4, background_slots=slots) == []
    search_id = new_search(engine, "Muster GmbH")
    with engine.begin() as conn:
        assert [h.job_id for h in queue.batch_heads(conn, "basic_discovery", 1, 4, background_slots=slots)] == [
            str(
                conn.execute(
                    sa.text("SELECT id FROM processing.processing_jobs WHERE search_id = :s"), {"s": search_id}
                ).scalar()
            )
        ]
        (person,) = queue.claim(conn, "basic_discovery", 1, "worker-b", 60, background_slots=slots)
    assert person.search_id == search_id
    with engine.begin() as conn:
        queue.complete(conn, "worker-a", [(first.id, {"result_count": 1})])
    with engine.begin() as conn:
        (second,) = queue.claim(conn, "basic_discovery", 1, "worker-c", 60, background_slots=slots)
    assert {first.entity_id, second.entity_id} == set(watched)


def test_the_application_opens_entities_and_sees_the_results_of_its_own_searches_only(engine):
    alice, bob = str(uuid.uuid4()), str(uuid.uuid4())
    with engine.begin() as owner:
        entity_id = insert_entity(owner, "parsed")
        searches = {user: insert_search(owner, "Muster GmbH", user_id=user) for user in (alice, bob)}
        for search_id in searches.values():
            owner.execute(
                sa.text("INSERT INTO public.search_results (search_id, position, entity_id) VALUES (:s, 1, :e)"),
                {"s": search_id, "e": entity_id},
            )
    with as_role(engine, "hreg_app", alice) as app:
        job_id = app.execute(
            sa.text("SELECT processing.open_entity(:e, 'interactive', :u, 'looked at it')"),
            {"e": entity_id, "u": alice},
        ).scalar_one()
        visible = app.execute(sa.text("SELECT search_id::text FROM public.search_results")).scalars().all()
    assert visible == [searches[alice]]
    with engine.begin() as owner:
        job = owner.execute(sa.text("SELECT * FROM processing.processing_jobs WHERE id = :j"), {"j": job_id}).one()
    assert (job.priority, job.trigger, str(job.requested_by), job.reason) == (
        "interactive",
        "manual",
        alice,
        "looked at it",
    )


def test_a_run_holds_one_retrieval_job_at_a_time_while_it_waits(engine, sample_register, store):
    """While a retrieval waits (here a slow register), the run's claim is that one job: the others
    stay queued for any run to take, interactive first, and keep no lease running out."""
    for query in ("Alpha GmbH", "Beta GmbH", "Gamma GmbH"):
        new_search(engine, query)
    httpx.post(
        sample_register.url + "/_sample/faults", json={"kind": "slow", "delay_s": 1.5, "on": "page", "times": 3}
    ).raise_for_status()
    settings = Settings(register_url=sample_register.url)
    stage = DiscoveryStage(
        JOB_TYPES.basic_discovery, lambda priority: register_client_for(settings, engine, priority=priority), store
    )
    worker = threading.Thread(target=run_batch, args=(engine, stage, "slow-run"))
    worker.start()
    held = []
    with engine.connect() as conn:
        while worker.is_alive():
            held.append(
                conn.execute(
                    sa.text("SELECT count(*) FROM processing.processing_jobs WHERE status = 'running'")
                ).scalar_one()
            )
            conn.rollback()
            time.sleep(0.1)
    worker.join()
    assert max(held) == 1
    with engine.connect() as conn:
        statuses = sorted(conn.execute(sa.text("SELECT status FROM processing.processing_jobs")).scalars())
    assert statuses == ["completed", "queued", "queued"]
