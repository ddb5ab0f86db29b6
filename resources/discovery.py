"""What a search reads and opens, as a Dagster resource."""

from __future__ import annotations

from datetime import timedelta

from dagster import ConfigurableResource
from pydantic import Field

from orchestration.settings import SearchOpensRule, Settings


class SearchPolicyResource(ConfigurableResource):
    """How far a search reads, which results it opens, and when a document is fresh enough."""

    result_pages: int = Field(
        description="Result pages a search reads unless it asks for more (HREG_DISCOVERY_RESULT_PAGES)."
    )
    opens_rule: SearchOpensRule = Field(description="Which results a search opens (HREG_SEARCH_OPENS).")
    opens_count: int = Field(description="The N of the rule: results opened at most.")
    document_fresh_hours: float = Field(
        description="A document retrieved less than this many hours ago is not retrieved again (HREG_DOCUMENT_FRESH_HOURS)."
    )

    @property
    def search_opens(self) -> tuple[SearchOpensRule, int]:
        return self.opens_rule, self.opens_count

    @property
    def fresh_for(self) -> timedelta:
        return timedelta(hours=self.document_fresh_hours)

    @classmethod
    def from_settings(cls, settings: Settings) -> SearchPolicyResource:
        rule, count = settings.effective_search_opens
        return cls(
            result_pages=settings.discovery_result_pages,
            opens_rule=rule,
            opens_count=count,
            document_fresh_hours=settings.document_fresh_hours,
        )
