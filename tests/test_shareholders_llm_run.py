"""A shareholder list the rules cannot read, read by the LLM inside a real run: the download stage
stores the list, the shareholder_parsing sensor requests the run, and the code location is built
from settings whose HREG_LLM_BASE_URL names a stand-in for the OpenAI-compatible endpoint
(``llm_helpers.FakeChatCompletions``)."""

from __future__ import annotations

import io
import json
from decimal import Decimal
from pathlib import Path

import dagster as dg
import pytest
import sqlalchemy as sa
from reportlab.lib.pagesizes import A4
from reportlab.pdfgen.canvas import Canvas

from llm_helpers import SERVER_ERROR, FakeChatCompletions, answer_reading, user_text
from orchestration.definitions import build_definitions
from orchestration.jobs.specs import JOB_TYPES
from orchestration.register.results import DocumentNode, Download
from orchestration.runtime import queue
from orchestration.settings import Settings
from orchestration.stages.entities import load_entity_key
from pipeline_helpers import history_rows, job_rows, run_what_the_sensor_requests
from queue_helpers import claim_one, insert_entity, make_due, request_research

# The list's table as printed: the nominal amounts written out in words, which the rules read as
# no amount at all ("the shareholder table has no rows"), in the text layer and by OCR alike.
HEADINGS = [(60, "Lfd. Nr."), (120, "Gesellschafter"), (400, "Nennbetrag in EUR"), (500, "Beteiligung in %")]
LINES = [
    ("1", "Berger Holding GmbH, Sitz Köln, Amtsgericht Köln HRB 1234", "fünfzehntausend", "60 %"),
    ("2", "Lindner Verwaltungs GmbH, Sitz Bremen, Amtsgericht Bremen HRB 5678", "zehntausend", "40 %"),
]
SUM_LINE = ("Summe", "", "fünfundzwanzigtausend", "100 %")
# What a model answers for that table by the instructions: amounts as decimal text, a German
# register without a country.
MODEL_ANSWER = Path(__file__).parent / "data" / "llm_answers" / "muster_gmbh_amounts_in_words.json"

LIST_LABEL = "Liste der Gesellschafter - Aufnahme in den Registerordner am 02.05.2025"

# The shareholders as the list prints them (written from LINES, not from a reading): position, name,
# seat, register court, type, number and country, nominal total, percentage, share numbers.
AS_PRINTED = [
    (1, "Berger Holding GmbH", "Köln", "Köln", "HRB", "1234", "DE", Decimal("15000.00"), Decimal("60"), ["1"]),
    (2, "Lindner Verwaltungs GmbH", "Bremen", "Bremen", "HRB", "5678", "DE", Decimal("10000.00"), Decimal("40"), ["2"]),
]


def amounts_in_words_list() -> bytes:
    """A one-page list of Muster GmbH with a text layer, typeset as LINES."""
    buffer = io.BytesIO()
    canvas = Canvas(buffer, pagesize=A4, invariant=True)
    canvas.setFont("Helvetica-Bold", 14)
    canvas.drawString(60, 780, "Liste der Gesellschafter")
    canvas.setFont("Helvetica", 10)
    canvas.drawString(60, 762, "der Muster GmbH")
    y = 720.0
    canvas.setFont("Helvetica-Bold", 8)
    for x, heading in HEADINGS:
        canvas.drawString(x, y, heading)
    canvas.line(60, y - 5, 560, y - 5)
    canvas.setFont("Helvetica", 8)
    for line in [*LINES, SUM_LINE]:
        y -= 18
        for (x, _), text in zip(HEADINGS, line, strict=True):
            canvas.drawString(x, y, text)
        canvas.line(60, y - 5, 560, y - 5)
    canvas.showPage()
    canvas.save()
    return buffer.getvalue()


@pytest.fixture
def endpoint():
    with FakeChatCompletions(answer_reading(json.loads(MODEL_ANSWER.read_text()))) as fake:
        yield fake


@pytest.fixture
def llm_defs(settings: Settings, endpoint: FakeChatCompletions) -> dg.Definitions:
    """The code location as production builds it, its LLM at the endpoint."""
    return build_definitions(
        settings.model_copy(
            update={"llm_base_url": endpoint.url, "llm_model": "extraction-model", "llm_api_key": "list-reader-key"}
        )
    )


def downloaded_list(engine: sa.Engine, defs: dg.Definitions, content: bytes) -> str:
    """A company whose shareholder research was requested and whose list the download stage stored
    (its register retrieval aside); returns the company's id."""
    stage = defs.resources["stages"].stage(JOB_TYPES.shareholder_download)
    with engine.begin() as conn:
        entity_id = insert_entity(conn, "parsed")
        request_research(conn, entity_id)
        download = claim_one(conn, "shareholder_download")
        fetched = (
            load_entity_key(conn, entity_id),
            DocumentNode(row_key="0_1", label=LIST_LABEL, kind="document"),
            Download(content=content, media_type="application/pdf", filename="Liste_der_Gesellschafter.pdf"),
        )
        queue.complete(conn, "worker-1", [(download.id, stage.record(conn, download, fetched))])
    return entity_id


def stored_lists(engine: sa.Engine, entity_id: str) -> list[sa.Row]:
    with engine.connect() as conn:
        return conn.execute(
            sa.text(
                "SELECT id, method, source, valid, total_nominal FROM content.shareholder_lists WHERE entity_id = :e"
            ),
            {"e": entity_id},
        ).all()


def stored_shareholders(engine: sa.Engine, list_id: int) -> list[tuple]:
    with engine.connect() as conn:
        rows = conn.execute(
            sa.text("SELECT * FROM content.shareholders WHERE list_id = :l ORDER BY position"), {"l": list_id}
        ).all()
    return [
        (
            row.position,
            row.name,
            row.seat,
            row.register_court,
            row.register_type,
            row.register_number,
            row.register_country,
            row.nominal_total,
            row.percentage,
            [share["number"] for share in row.shares],
        )
        for row in rows
    ]


def research_status(engine: sa.Engine, entity_id: str) -> str:
    with engine.connect() as conn:
        return conn.execute(
            sa.text("SELECT shareholder_research_status FROM content.entities WHERE id = :e"), {"e": entity_id}
        ).scalar_one()


def test_a_list_the_rules_cannot_read_is_read_by_the_llm_in_a_run(engine, llm_defs, endpoint):
    entity_id = downloaded_list(engine, llm_defs, amounts_in_words_list())

    with dg.instance_for_test() as instance:
        (run,) = run_what_the_sensor_requests(llm_defs, "shareholder_parsing", instance)

    (parse,) = job_rows(engine, "shareholder_parsing")
    assert parse.status == "completed"
    assert research_status(engine, entity_id) == "completed"
    ((list_id, method, source, valid, total),) = stored_lists(engine, entity_id)
    assert (method, source, valid, total) == ("llm", "text_layer", True, Decimal("25000.00"))
    assert stored_shareholders(engine, list_id) == AS_PRINTED
    # One question to the endpoint the settings name, with their model and key, carrying the cells.
    [request] = endpoint.requests
    assert (request["model"], endpoint.api_keys) == ("extraction-model", ["list-reader-key"])
    sent = json.loads(user_text(request))
    assert sent["headings"] == [heading for _, heading in HEADINGS]
    assert [line["Nennbetrag in EUR"] for line in sent["lines"][:2]] == ["fünfzehntausend", "zehntausend"]
    assert "Amtsgericht Bremen HRB 5678" in sent["lines"][1]["Gesellschafter"]
    completed = [h.dagster_run_id for h in history_rows(engine, parse.id) if h.status == "completed"]
    assert completed == [run.run_id]


def test_an_endpoint_that_answers_503_fails_the_run_and_the_job_is_retried(engine, llm_defs, endpoint):
    reading = endpoint.answer
    endpoint.answer = lambda body: SERVER_ERROR
    entity_id = downloaded_list(engine, llm_defs, amounts_in_words_list())

    with dg.instance_for_test() as instance:
        (failed_run,) = run_what_the_sensor_requests(llm_defs, "shareholder_parsing", instance, succeed=False)
        assert not failed_run.success
        (parse,) = job_rows(engine, "shareholder_parsing")
        # Transient: the database re-queued the job with a backoff, and nothing was stored.
        assert (parse.status, parse.retry_count) == ("queued", 1)
        with engine.connect() as conn:
            assert conn.execute(
                sa.text("SELECT next_attempt_at > now() FROM processing.processing_jobs WHERE id = :j"), {"j": parse.id}
            ).scalar_one()
        assert endpoint.requests and not stored_lists(engine, entity_id)
        assert research_status(engine, entity_id) == "parsing"

        # The endpoint is back: the retry, once due, reads the list.
        endpoint.answer = reading
        with engine.begin() as conn:
            make_due(conn, parse.id)
        (good_run,) = run_what_the_sensor_requests(llm_defs, "shareholder_parsing", instance)

    (parse,) = job_rows(engine, "shareholder_parsing")
    assert (parse.status, parse.retry_count) == ("completed", 1)
    assert research_status(engine, entity_id) == "completed"
    ((list_id, method, *_),) = stored_lists(engine, entity_id)
    assert method == "llm"
    assert stored_shareholders(engine, list_id) == AS_PRINTED
    steps = [
        (h.status, h.attempt_number, h.error_type, h.error_code, h.dagster_run_id)
        for h in history_rows(engine, parse.id)
    ]
    # Each attempt with the run that worked it; the failed one logged before its re-queue (creation
    # is logged for discoveries only).
    assert steps == [
        ("running", 1, None, None, failed_run.run_id),
        ("failed", 1, "dependency_unavailable", "llm", failed_run.run_id),
        ("queued", 2, None, None, None),
        ("running", 2, None, None, good_run.run_id),
        ("completed", 2, None, None, good_run.run_id),
    ]
