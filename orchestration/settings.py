"""All configuration in one place: environment variables with the ``HREG_`` prefix.

Read once where a process starts (the code location's Definitions, the CLI's entry point, a
worker host's Celery app) and handed down; Dagster's resources carry it as their configuration.
A new setting is a field here and, if runs need it, a field of the resource that uses it."""

from __future__ import annotations

from dataclasses import dataclass
from ipaddress import IPv4Network, IPv6Network, ip_network
from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

LIVE_REGISTER_URL = "https://www.handelsregister.de"


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
        description="SQLAlchemy URL of the application database; empty starts the embedded server.",
    )
    data_dir: Path = Field(
        Path(".hreg"),
        description="Embedded PostgreSQL, Dagster's home and stored documents live here.",
    )
    document_store: str = Field(
        "",
        description="Where documents too large for their database row are stored: file://DIRECTORY or "
        "s3://BUCKET/PREFIX (boto3's AWS_* variables configure the client); empty: <HREG_DATA_DIR>/documents.",
    )
    document_inline_limit_bytes: int = Field(
        512 * 1024, ge=0, description="Documents up to this size live in their database row, larger ones in the store."
    )
    cluster: bool = Field(
        False,
        description="This process is part of a multi-host deployment: it refuses to start without "
        "HREG_DATABASE_URL instead of starting an embedded server no other host could reach.",
    )
    celery_broker_url: str = Field(
        "",
        description="Redis URL of the Celery broker (and result backend): set, every run's steps execute "
        "on the Celery workers listening there; empty, in the run's own process.",
    )
    celery_visibility_timeout_s: int = Field(
        3600,
        gt=0,
        description="Seconds after which the broker hands a step that no worker acknowledged (its host died) "
        "to another worker; longer than any step runs, or a running step is started a second time.",
    )
    register_kind: Literal["sample", "live"] = Field(
        "sample", validation_alias="HREG_REGISTER", description="Which register to talk to: sample or live."
    )
    register_url: str = Field("", description="Overrides the register's base URL.")
    sample_register_port: int = Field(8765, description="Port of the sample register started by `hreg dev`.")
    rate_limit_per_hour: int = Field(
        0,
        description="Register retrievals allowed per hour across all processes; 0 means the "
        "default for the register (60 live, 36000 sample).",
    )
    rate_limit_burst: int = Field(
        0,
        ge=0,
        description="Retrievals the bucket allows at once, within the hourly limit; 0 means a twelfth of it "
        "(5 of the live 60). With the refill scaled too, a faster clock for the whole budget (bench/budget.py).",
    )
    rate_limit_reserve: int = Field(
        2,
        description="Tokens of the register's bucket that background work leaves to people (at least 1), "
        "so that a person's retrieval waits at most about one refill interval.",
    )
    rate_limit_background_patience: float = Field(
        10.0,
        description="Refill intervals after which a waiting background retrieval takes a token like a "
        "person's: background work never starves.",
    )
    discovery_result_pages: int = Field(
        1,
        ge=1,
        description="Result pages (up to 100 rows each, one retrieval each) a search reads unless the "
        "search asks for more.",
    )
    search_opens: str = Field(
        "",
        pattern=r"^$|^none$|^(exact|any|first):[0-9]+$",
        description="Which results a search opens itself (fetches their SI): exact:N, an exact-name "
        "search that found at most N; any:N, any search that found at most N; first:N, the first N of "
        "every search; none. Empty: exact:1 for the live portal, first:10 for the sample register.",
    )
    document_fresh_hours: float = Field(
        24.0,
        description="A register document retrieved less than this many hours ago is not retrieved again.",
    )
    batch_sizes: dict[str, int] = Field(
        default_factory=dict,
        description='Per job type batch sizes, JSON such as {"xml_parsing": 500}; written to '
        "processing.job_types by `hreg db upgrade`, which the sensors read.",
    )
    max_batches_per_run: int = Field(
        20, description="Batches one run works at most while due jobs remain, spreading its start-up cost."
    )
    max_runs_in_flight: int = Field(
        4, description="Runs of one job type queued or running at once at most; its sensor requests no more."
    )
    max_concurrent_runs: int = Field(4, description="Runs the Dagster run queue starts at once.")
    people_run_slots: int = Field(
        1,
        ge=0,
        description="Run slots that backfill runs never take, so that a person's run starts while a backfill runs.",
    )
    backfill_give_way_seconds: float = Field(
        1.0,
        ge=0,
        description="How long a backfill run waits at most, before each chunk of its work, while a person's job "
        "is due or running, so that their run gets the machine first; 0: never.",
    )
    webserver_port: int = Field(3000, description="Port of the Dagster webserver started by `hreg dev`.")
    job_archive_after_days: float = Field(
        7.0, gt=0, description="Completed jobs move to processing.job_archive this many days after completion."
    )
    job_archive_batch_size: int = Field(10_000, gt=0, description="Jobs one archive transaction moves at most.")
    dagster_retention_days: float = Field(
        30.0,
        ge=0,
        description="Finished Dagster runs are deleted with their events this many days after they were created, "
        "unless the UI still reads them (docs/deployment.md); sensor and schedule ticks are kept as long.",
    )
    worker_role: str = Field(
        "",
        description="When set, Dagster runs `SET ROLE` to this role so they hold only the worker's privileges.",
    )
    llm_base_url: str = Field(
        "", description="OpenAI-compatible endpoint for shareholder extraction; empty: rules only."
    )
    llm_model: str = Field("gpt-4o-mini", description="Model name sent to the LLM endpoint.")
    llm_api_key: str = Field("", description="API key of the LLM endpoint.")
    webhook_allowed_networks: str = Field(
        "",
        description="Comma-separated networks (CIDR) that webhooks may reach besides public addresses, "
        "such as 10.0.0.0/8 for receivers inside the company network; empty: public addresses only.",
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
    def effective_search_opens(self) -> tuple[str, int]:
        """(rule, N) of ``search_opens``, with the register's default when it is empty."""
        value = self.search_opens or ("exact:1" if self.register_kind == "live" else "first:10")
        if value == "none":
            return "first", 0
        rule, count = value.split(":")
        return rule, int(count)

    @property
    def effective_rate_limit_per_hour(self) -> int:
        if self.rate_limit_per_hour > 0:
            return self.rate_limit_per_hour
        return 60 if self.register_kind == "live" else 36000


def parse_networks(value: str) -> tuple[IPv4Network | IPv6Network, ...]:
    return tuple(ip_network(part.strip()) for part in value.split(",") if part.strip())
