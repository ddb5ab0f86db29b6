"""Shareholder-list extraction (rules, or an OpenAI-compatible LLM) as a Dagster resource."""

from decimal import Decimal
from typing import TYPE_CHECKING, Literal

from dagster import ConfigurableResource
from pydantic import Field

from orchestration.settings import get_settings

if TYPE_CHECKING:
    from orchestration.shareholders.shareholder_list import ShareholderList


class ShareholderExtractorResource(ConfigurableResource):
    """Reads shareholder lists: the text layer or OCR, then rules; an LLM when configured.

    Empty LLM fields fall back to HREG_LLM_BASE_URL, HREG_LLM_MODEL and HREG_LLM_API_KEY.
    """

    method: Literal["auto", "rules", "llm"] = Field(
        "auto", description="rules, llm, or auto: rules, and the LLM (when configured) where they fail."
    )
    llm_base_url: str = Field("", description="OpenAI-compatible endpoint.")
    llm_model: str = Field("", description="Model name sent to the endpoint.")
    llm_api_key: str = Field("", description="API key of the endpoint.")

    def parse(self, content: bytes, capital: Decimal | None) -> "ShareholderList":
        # Imported here: PDF, OCR and LLM libraries would slow every run process's start.
        from orchestration.shareholders.parse import parse_shareholder_list

        overrides = {"llm_base_url": self.llm_base_url, "llm_model": self.llm_model, "llm_api_key": self.llm_api_key}
        settings = get_settings().model_copy(update={k: v for k, v in overrides.items() if v})
        return parse_shareholder_list(content, capital=capital, method=self.method, settings=settings)
