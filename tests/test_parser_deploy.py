"""A parser deploy as production meets it: the code of the next release is a copy of this tree
whose parser version differs (nothing is patched in a running process), installed beside the data
the current release wrote. `hreg db upgrade` of the new code writes its version, `hreg dev` of the
new code starts the stack, its sensors parse what is new with the new version, and every court
shows STALE in the UI until the backfill over the courts re-parses their companies.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import dagster as dg
import pytest
import sqlalchemy as sa

from database_helpers import fresh_database
from orchestration.db.engine import create_app_engine
from orchestration.db.migrate import head_revision
from orchestration.definitions import build_definitions
from orchestration.jobs.specs import JOB_TYPES
from orchestration.records.documents import DocumentStore
from orchestration.runtime.worker import run_batch
from orchestration.settings import Settings
from orchestration.stacks import devstack
from orchestration.stages.parsing import XmlParsingStage
from orchestration.webserver.backfills import backfill_status, launch_backfill, webserver_graphql
from orchestration.xjustiz import PARSER_VERSION
from pipeline_helpers import add_entity_with_si, job_rows, run_court_partitions, sample_si_files
from process_helpers import free_port, wait_until

pytestmark = pytest.mark.slow

REPO_ROOT = Path(__file__).resolve().parents[1]
HREG = Path(sys.executable).parent / "hreg"
NEW_VERSION = f"{PARSER_VERSION}-next-release"
# The companies are filed at Stuttgart, Munich and Berlin (Charlottenburg).
COURTS = ["B8534", "D2601", "F1103"]
STALENESS = """
query Staleness($partitions: [String!]) {
  assetNodes(assetKeys: [{path: ["company_records"]}]) {
    staleStatusByPartition(partitions: $partitions)
    staleCausesByPartition(partitions: $partitions) { category reason }
  }
}
"""


def next_release(destination: Path) -> Path:
    """This tree's files as the next release ships them: the parser version bumped."""
    files = subprocess.run(
        ["git", "ls-files"], cwd=REPO_ROOT, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    for name in files:
        source = REPO_ROOT / name
        if source.is_file():
            target = destination / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(source.read_bytes())
    version_file = destination / "orchestration" / "xjustiz" / "parser_version.py"
    text = version_file.read_text()
    assert f'PARSER_VERSION = "{PARSER_VERSION}"' in text
    version_file.write_text(text.replace(f'"{PARSER_VERSION}"', f'"{NEW_VERSION}"'))
    return destination


def staleness(webserver_url: str) -> dict[str, tuple[str, list[dict]]]:
    (node,) = webserver_graphql(webserver_url, STALENESS, {"partitions": COURTS})["assetNodes"]
    return dict(zip(COURTS, zip(node["staleStatusByPartition"], node["staleCausesByPartition"]), strict=True))


def parser_version_of_job_types(engine: sa.Engine) -> str:
    with engine.connect() as conn:
        return conn.execute(
            sa.text("SELECT current_version FROM processing.job_types WHERE type = 'xml_parsing'")
        ).scalar_one()


@pytest.mark.timeout(900)
def test_a_parser_deploy_leaves_the_courts_stale_until_the_backfill(server_url, template_url, tmp_path, samples_dir):
    data_dir = tmp_path / "data"
    with fresh_database(server_url) as url, pytest.MonkeyPatch.context() as mp:
        env = {
            **{key: value for key, value in os.environ.items() if not key.startswith("HREG_")},
            "HREG_DATABASE_URL": url.render_as_string(hide_password=False),
            "HREG_DATA_DIR": str(data_dir),
            "HREG_WEBSERVER_PORT": str(free_port()),
            "HREG_SAMPLE_REGISTER_PORT": str(free_port()),
        }
        for key in ("HREG_DATABASE_URL", "HREG_DATA_DIR"):
            mp.setenv(key, env[key])
        settings = Settings()
        engine = create_app_engine(url)
        store = DocumentStore(settings.documents_dir)
        samples = sample_si_files(samples_dir)

        # The current release: companies parsed, and their courts materialized, by its version.
        stack = devstack.prepare(settings)
        for i, court in enumerate(COURTS):
            add_entity_with_si(engine, store, samples[i].read_bytes(), number=str(700 + i), court_code=court)
        assert run_batch(engine, XmlParsingStage(JOB_TYPES.xml_parsing, store), "current-release").completed == 3
        with dg.DagsterInstance.from_config(str(stack.dagster_home)) as instance:
            for court in COURTS:
                result = run_court_partitions(build_definitions(), "company_records", instance, partition_key=court)
                assert result.success

        # The next release, installed beside it; its upgrade writes its parser version.
        release = next_release(tmp_path / "release")
        release_env = {**env, "PYTHONPATH": str(release)}
        upgraded = subprocess.run(
            [str(HREG), "db", "upgrade"], cwd=release, env=release_env, capture_output=True, text=True, timeout=300
        )
        assert upgraded.returncode == 0, upgraded.stderr[-3000:]
        assert f"schema at revision {head_revision()} on " in upgraded.stdout
        assert "run storage at revision" in upgraded.stdout
        assert parser_version_of_job_types(engine) == NEW_VERSION

        output = tmp_path / "dev.out"
        with output.open("wb") as out:
            dev = subprocess.Popen(
                [str(HREG), "dev"],
                cwd=release,
                env=release_env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        webserver_url = f"http://127.0.0.1:{env['HREG_WEBSERVER_PORT']}"
        try:
            wait_until(lambda: b"ready:" in output.read_bytes() or dev.poll() is not None, 360, "hreg dev to be ready")
            assert dev.poll() is None, output.read_text()[-3000:]
            code_cause = [{"category": "CODE", "reason": "has a new code version"}]
            wait_until(lambda: staleness(webserver_url), 120, "the code location to load")
            assert staleness(webserver_url) == dict.fromkeys(COURTS, ("STALE", code_cause))

            # The sensors work again: a company stored now is parsed by a run of the new version.
            newcomer = add_entity_with_si(engine, store, samples[3].read_bytes(), number="710", court_code="D2601")
            (job,) = wait_until(
                lambda: [
                    j
                    for j in job_rows(engine, "xml_parsing")
                    if str(j.entity_id) == newcomer and j.status == "completed"
                ],
                300,
                "a sensor's run to parse the new company",
            )
            assert job.parser_version == NEW_VERSION
            # Munich's other company still waits for the new version.
            assert staleness(webserver_url)["D2601"] == ("STALE", code_cause)

            backfill_id = launch_backfill(webserver_url, ["company_records"], COURTS)
            status = wait_until(
                lambda: (found := backfill_status(webserver_url, backfill_id)).finished and found,
                400,
                "the backfill to finish",
            )
            assert status.status == "COMPLETED_SUCCESS"
            assert staleness(webserver_url) == dict.fromkeys(COURTS, ("FRESH", []))
            reparsed = [j for j in job_rows(engine, "xml_parsing") if j.trigger == "parser_change"]
            assert len(reparsed) == 3 and {j.parser_version for j in reparsed} == {NEW_VERSION}
        finally:
            if dev.poll() is None:
                os.killpg(dev.pid, signal.SIGINT)  # Ctrl-C
                try:
                    dev.wait(timeout=120)
                except subprocess.TimeoutExpired:
                    os.killpg(dev.pid, signal.SIGKILL)
                    dev.wait()
            engine.dispose()
            print(f"--- hreg dev (tail)\n{output.read_text(errors='replace')[-4000:]}")
