"""Shareholder-list extraction (rules, or an OpenAI-compatible LLM) as a Dagster resource."""

from decimal import Decimal
from typing import TYPE_CHECKING, Literal

from dagster import ConfigurableResource
from pydantic import Field

from orchestration.settings import LlmEndpoint, Settings

if TYPE_CHECKING:
    from orchestration.shareholders.shareholder_list import ShareholderList


class ShareholderExtractorResource(ConfigurableResource):
    """Reads shareholder lists: the text layer or OCR, then rules; an LLM when configured."""

    method: Literal["auto", "rules", "llm"] = Field(
        "auto", description="rules, llm, or auto: rules, and the LLM (when configured) where they fail."
    )
    llm_base_url: str = Field(description="OpenAI-compatible endpoint (HREG_LLM_BASE_URL); empty: rules only.")
    llm_model: str = Field(description="Model name sent to the endpoint (HREG_LLM_MODEL).")
    llm_api_key: str = Field(description="API key of the endpoint (HREG_LLM_API_KEY).")

    def parse(self, content: bytes, capital: Decimal | None) -> "ShareholderList":
        # Imported here: PDF, OCR and LLM libraries would slow every run process's start.
        from orchestration.shareholders.parse import parse_shareholder_list

        llm = LlmEndpoint(self.llm_base_url, self.llm_model, self.llm_api_key) if self.llm_base_url else None
        return parse_shareholder_list(content, capital=capital, method=self.method, llm=llm)

    @classmethod
    def from_settings(cls, settings: Settings) -> "ShareholderExtractorResource":
        return cls(llm_base_url=settings.llm_base_url, llm_model=settings.llm_model, llm_api_key=settings.llm_api_key)
