"""All configuration in one place: environment variables with the ``HREG_`` prefix.

Read once where a process starts (the code location's Definitions, the CLI's entry point, a
worker host's Celery app) and handed down; Dagster's resources carry it as their configuration.
A new setting is a field here, described for the person who sets it, and, if runs need it, a field
of the resource that uses it, filled by its ``from_settings`` without a default of its own. The
README's configuration table is these descriptions: ``python -m orchestration.settings --markdown``
prints it (tests/test_settings.py fails while the README's differs)."""

from __future__ import annotations

from dataclasses import dataclass
from ipaddress import IPv4Network, IPv6Network, ip_network
from pathlib import Path
from typing import Literal, cast

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

LIVE_REGISTER_URL = "https://www.handelsregister.de"
# Which results of a search it opens itself (HREG_SEARCH_OPENS).
SearchOpensRule = Literal["exact", "any", "first"]


@dataclass(frozen=True)
class LlmEndpoint:
    """An OpenAI-compatible endpoint that reads shareholder lists."""

    base_url: str
    model: str
    api_key: str = ""


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="HREG_", extra="ignore")

    database_url: str = Field(
        "",
        description="SQLAlchemy URL of an external PostgreSQL ≥ 14 holding the application database. Empty: the "
        "embedded server under `HREG_DATA_DIR`.",
    )
    data_dir: Path = Field(
        Path(".hreg"),
        description="Embedded PostgreSQL (`postgres/`), Dagster's home (`dagster_home/`), large raw documents "
        "(`documents/`), saved unexpected pages (`diagnostics/`) and `hreg dev`'s logs (`logs/`).",
    )
    document_store: str = Field(
        "",
        description="Where documents too large for their database row are stored, by a relative key: "
        "`file:///DIRECTORY` or `s3://BUCKET/PREFIX` (boto3's `AWS_ENDPOINT_URL`, `AWS_ACCESS_KEY_ID`, … configure "
        "the client; `ownership_graph` goes there too). Empty: `HREG_DATA_DIR/documents`. `hreg db upgrade` moves "
        "documents stored under an absolute local path into the configured store.",
    )
    document_inline_limit_bytes: int = Field(
        512 * 1024,
        ge=0,
        description="Documents up to this many bytes live in their database row, larger ones in the store.",
    )
    cluster: bool = Field(
        False,
        description="`1`: this process belongs to a multi-host deployment (`docs/deployment.md`) and refuses to "
        "start without `HREG_DATABASE_URL`, where it would otherwise start an embedded server no other host sees.",
    )
    celery_broker_url: str = Field(
        "",
        description="Redis URL of the Celery broker (and result backend): set, every run's steps execute "
        "on the Celery workers listening there (`docs/deployment.md`); empty, in the run's own process.",
    )
    celery_visibility_timeout_s: int = Field(
        3600,
        gt=0,
        description="Seconds after which the broker (Redis) hands a step that no worker acknowledged (its host "
        "died) to another worker; longer than any step runs, or a running step is started a second time.",
    )
    register_kind: Literal["sample", "live"] = Field(
        "sample",
        validation_alias="HREG_REGISTER",
        description="`sample`: the local sample register; `live`: handelsregister.de.",
    )
    register_url: str = Field("", description="Overrides the register's base URL.")
    sample_register_port: int = Field(8765, description="Port of the sample register that `hreg dev` starts.")
    rate_limit_per_hour: int = Field(
        0,
        description="Register retrievals allowed per hour across all processes; 0: the register's default, 60 "
        "for the live portal (its terms of use), 36000 for the sample register.",
    )
    rate_limit_burst: int = Field(
        0,
        ge=0,
        description="Retrievals the bucket allows at once, within the hourly limit; 0: a twelfth of it "
        "(5 of the live 60). With the refill scaled too, the live budget at a faster clock (`bench/budget.py`, "
        "`tests/test_cluster_pgbouncer.py`).",
    )
    rate_limit_reserve: int = Field(
        2,
        description="Tokens of the register's bucket that background work leaves to people (at least 1), "
        "so that a person's retrieval waits at most about one refill interval.",
    )
    rate_limit_background_patience: float = Field(
        10.0,
        description="Refill intervals after which a waiting background retrieval is owed the next token, like a "
        "person's: background work never starves.",
    )
    discovery_result_pages: int = Field(
        1,
        ge=1,
        description="Result pages (up to 100 rows each, one retrieval each) a search reads; a search's own "
        "`result_pages` (`hreg search --pages N`) wins.",
    )
    search_opens: str = Field(
        "",
        pattern=r"^$|^none$|^(exact|any|first):[0-9]+$",
        description="Which results a search opens itself (fetches their SI): `exact:N`, an exact-name "
        "search that found at most N; `any:N`, any search that found at most N; `first:N`, the first N of "
        "every search; `none`. Empty: `exact:1` for the live portal, `first:10` for the sample register.",
    )
    document_fresh_hours: float = Field(
        24.0,
        description="A register document retrieved less than this many hours ago is not retrieved again.",
    )
    batch_sizes: dict[str, int] = Field(
        default_factory=dict,
        description='Per job type batch sizes, JSON such as `{"xml_parsing": 2000}`; written to '
        "`processing.job_types.batch_size` by `hreg db upgrade` / `hreg dev`, which the sensors read.",
    )
    max_batches_per_run: int = Field(
        20, description="Batches one run works at most while due jobs remain, spreading its start-up cost over them."
    )
    max_runs_in_flight: int = Field(
        4, description="Runs of one job type queued or running at once at most; its sensor requests no more."
    )
    max_concurrent_runs: int = Field(4, description="Runs the Dagster run queue starts at once.")
    people_run_slots: int = Field(
        1,
        ge=0,
        description="Run slots that backfill runs never take (a tag concurrency limit on `dagster/backfill`), so "
        "that a person's run starts while a backfill runs.",
    )
    backfill_give_way_seconds: float = Field(
        1.0,
        ge=0,
        description="Seconds a backfill run waits at most, before each chunk of its work (250 SI documents), while "
        "a person's job is due or running, so that their run gets the machine first; 0: never.",
    )
    webserver_port: int = Field(3000, description="Port of the Dagster webserver that `hreg dev` starts.")
    job_archive_after_days: float = Field(
        7.0,
        gt=0,
        description="Completed jobs move to `processing.job_archive` this many days after completion "
        "(`job_archive_sensor`, every five minutes).",
    )
    job_archive_batch_size: int = Field(10_000, gt=0, description="Jobs one archive transaction moves at most.")
    dagster_retention_days: float = Field(
        30.0,
        ge=0,
        description="Finished Dagster runs are deleted with their events this many days after they were created, "
        "unless the UI still reads them (docs/deployment.md); sensor and schedule ticks are kept as long.",
    )
    dagster_rewrite_max_mb: float = Field(
        256.0,
        ge=0,
        description="The nightly packing of Dagster's tables (`dagster_storage_maintenance_job`) rewrites a table up "
        "to this size, which holds its lock for a few seconds; a larger one has only its indexes rebuilt, "
        "concurrently, on Sunday night.",
    )
    worker_role: str = Field(
        "",
        description="When set (e.g. `hreg_worker`), every connection of the workers does `SET ROLE` to it, so "
        "runs hold only the worker's privileges.",
    )
    llm_base_url: str = Field(
        "",
        description="An OpenAI-compatible endpoint for shareholder lists the rules cannot read; empty: rules only.",
    )
    llm_model: str = Field("gpt-4o-mini", description="Model name sent to that endpoint.")
    llm_api_key: str = Field("", description="API key of that endpoint.")
    metrics_port: int = Field(
        9464,
        ge=0,
        description="Port of the Prometheus endpoint (/metrics: queue, dead letter, rate limit, failed runs) "
        "that `hreg dev` and the cluster layout serve (`hreg metrics`); 0: none.",
    )
    alert_webhook_url: str = Field(
        "",
        description="Where failed runs and a growing dead letter are posted (JSON, signed as the monitoring "
        "rules' webhooks are, reaching the networks HREG_WEBHOOK_ALLOWED_NETWORKS allows); empty: no alerts.",
    )
    alert_webhook_secret: str = Field(
        "", description="Secret of the alert webhook's signature header (X-Hreg-Signature-256)."
    )
    run_max_runtime_seconds: int = Field(
        4 * 3600,
        ge=0,
        description="Dagster's run monitoring fails a run that has run longer (dagster/max_runtime), and its "
        "jobs are given back for a retry; 0: no limit.",
    )
    webhook_allowed_networks: str = Field(
        "",
        description="Networks (CIDR, comma-separated) that monitoring webhooks may reach besides public "
        "addresses, such as `10.0.0.0/8` for receivers inside the company network. Empty: public addresses only, "
        "so a rule cannot make the worker post to the database, the Dagster webserver or a metadata service.",
    )
    user_id: str = Field(
        "",
        description="The person the CLI acts for by default (a UUID): `--user` of `hreg entity open`, `hreg entity printout`, "
        "`hreg jobs retry`, `hreg reparse` and `hreg shareholders request`.",
    )
    xjustiz_xsd_dir: str = Field(
        "",
        description="Folder with one XSD folder per XJustiz version for `hreg xjustiz validate`; empty: the "
        "schemas shipped with the parser.",
    )

    @field_validator("webhook_allowed_networks")
    @classmethod
    def _networks_parse(cls, value: str) -> str:
        parse_networks(value)  # a typo fails at start, not at the first delivery
        return value

    @property
    def webhook_networks(self) -> tuple[IPv4Network | IPv6Network, ...]:
        return parse_networks(self.webhook_allowed_networks)

    @property
    def llm_endpoint(self) -> LlmEndpoint | None:
        """The LLM endpoint, or None when HREG_LLM_BASE_URL is empty (rules only)."""
        if not self.llm_base_url:
            return None
        return LlmEndpoint(self.llm_base_url, self.llm_model, self.llm_api_key)

    @property
    def resolved_data_dir(self) -> Path:
        return self.data_dir.expanduser().resolve()

    @property
    def pgdata_dir(self) -> Path:
        return self.resolved_data_dir / "postgres"

    @property
    def dagster_home(self) -> Path:
        return self.resolved_data_dir / "dagster_home"

    @property
    def documents_dir(self) -> Path:
        return self.resolved_data_dir / "documents"

    @property
    def document_store_location(self) -> str:
        return self.document_store or self.documents_dir.as_uri()

    @property
    def register_base_url(self) -> str:
        if self.register_url:
            return self.register_url.rstrip("/")
        if self.register_kind == "live":
            return LIVE_REGISTER_URL
        return f"http://127.0.0.1:{self.sample_register_port}"

    @property
    def effective_search_opens(self) -> tuple[SearchOpensRule, int]:
        """(rule, N) of ``search_opens``, with the register's default when it is empty."""
        value = self.search_opens or ("exact:1" if self.register_kind == "live" else "first:10")
        if value == "none":
            return "first", 0
        rule, count = value.split(":")
        return cast(SearchOpensRule, rule), int(count)  # one of them: the field's pattern says so

    @property
    def effective_rate_limit_per_hour(self) -> int:
        if self.rate_limit_per_hour > 0:
            return self.rate_limit_per_hour
        return 60 if self.register_kind == "live" else 36000


def parse_networks(value: str) -> tuple[IPv4Network | IPv6Network, ...]:
    return tuple(ip_network(part.strip()) for part in value.split(",") if part.strip())


def environment_variable(name: str) -> str:
    """The environment variable of the ``Settings`` field ``name``."""
    alias = Settings.model_fields[name].validation_alias
    return alias if isinstance(alias, str) else f"HREG_{name.upper()}"


def _shown_default(value: object) -> str:
    if value == "":
        return "empty"
    if isinstance(value, bool):
        return f"`{int(value)}`"
    if isinstance(value, float):
        return f"`{value:g}`"
    return f"`{value}`"


def markdown_table() -> str:
    """The README's configuration table: every setting, its default and its description."""
    rows = ["| variable | default | meaning |", "|---|---|---|"]
    for name, field in Settings.model_fields.items():
        default = field.get_default(call_default_factory=True)
        meaning = (field.description or "").replace("|", "\\|")
        rows.append(f"| `{environment_variable(name)}` | {_shown_default(default)} | {meaning} |")
    return "\n".join(rows) + "\n"


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description="Print the settings.")
    parser.add_argument("--markdown", action="store_true", required=True, help="as the README's table")
    parser.parse_args()
    print(markdown_table(), end="")
