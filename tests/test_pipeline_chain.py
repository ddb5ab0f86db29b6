"""The whole chain, run by run in process, against the real database and the sample register:
search -> discovery -> parsing -> shareholder request -> download -> shareholders."""

import dagster as dg
import sqlalchemy as sa

from orchestration.definitions import build_definitions
from pipeline_helpers import history_rows, job_rows


def run(defs: dg.Definitions, job_name: str, instance: dg.DagsterInstance) -> dg.ExecuteInProcessResult:
    result = defs.resolve_job_def(job_name).execute_in_process(instance=instance, raise_on_error=False)
    assert result.success, f"{job_name} failed"
    return result


def test_search_to_shareholders_run_by_run(engine, configured_sample_register, sample_register_settings):
    companies = configured_sample_register.corpus.companies
    names = [c.name for c in companies]
    corpus_company = next(
        c
        for c in companies
        if c.legal_form == "GmbH" and c.files_shareholder_lists and c.capital and names.count(c.name) == 1
    )
    with engine.begin() as conn:
        conn.execute(
            sa.text("INSERT INTO public.searches (user_id, query, mode) VALUES (gen_random_uuid(), :q, 'exact')"),
            {"q": corpus_company.name},
        )
    defs = build_definitions(sample_register_settings)
    with dg.instance_for_test() as instance:
        discovery = run(defs, "basic_discovery_job", instance)
        parsing = run(defs, "xml_parsing_job", instance)
        with engine.begin() as conn:
            entity_id = conn.execute(sa.text("SELECT id FROM content.entities")).scalar_one()
            assert conn.execute(sa.text("SELECT processing_status FROM content.entities")).scalar_one() == "parsed"
            conn.execute(sa.text("SELECT processing.request_shareholder_research(:e)"), {"e": entity_id})
        download = run(defs, "shareholder_download_job", instance)
        shareholders = run(defs, "shareholder_parsing_job", instance)

        checks = {c.check_name: c.passed for c in shareholders.get_asset_check_evaluations()}
        ownership = dg.materialize(
            [defs.get_assets_def("ownership_graph")],
            instance=instance,
            resources={name: defs.resources[name] for name in ("database", "ownership_graph_io_manager")},
        )
        frame = ownership.output_for_node("ownership_graph")

    with engine.connect() as conn:
        entity = conn.execute(
            sa.text("SELECT name, legal_form, shareholder_research_status FROM content.entities")
        ).one()
        shareholder_list = conn.execute(
            sa.text("SELECT total_nominal, valid, method FROM content.shareholder_lists")
        ).one()
        rows = conn.execute(sa.text("SELECT count(*) FROM content.shareholders")).scalar_one()
    assert (entity.name, entity.legal_form, entity.shareholder_research_status) == (
        corpus_company.name,
        "GmbH",
        "completed",
    )
    assert rows > 0 and shareholder_list.method == "rules"
    assert shareholder_list.total_nominal == corpus_company.capital
    # The stored validation and the asset checks tell the same story.
    assert set(checks) == {
        "lists_verified",
        "read_confidently",
        "percentages_sum_to_100",
        "nominal_sum_matches_capital",
        "shares_numbered",
    }
    assert all(checks.values()) == shareholder_list.valid
    assert len(frame) == rows and set(frame["entity_id"]) == {str(entity_id)}

    # Every stage ran in its own run, and each job's history names that run.
    # The discovery run worked the search and then the job that fetched its one result's SI (the
    # sample register's rule: a search opens its first results).
    run_ids = {r.run_id for r in (discovery, parsing, download, shareholders)}
    search_job, open_job = job_rows(engine, "basic_discovery")
    assert (search_job.search_id is not None, str(open_job.entity_id)) == (True, str(entity_id))
    jobs = [search_job, open_job] + [
        job for t in ("xml_parsing", "shareholder_download", "shareholder_parsing") for job in job_rows(engine, t)
    ]
    assert len(jobs) == 5
    for job in jobs:
        assert job.status == "completed"
        assert {h.dagster_run_id for h in history_rows(engine, job.id) if h.status == "completed"} <= run_ids
