"""The stages of the job types, built from their specs with what the code location configures."""

from __future__ import annotations

from dagster import ConfigurableResource
from pydantic import Field

from orchestration.jobs.specs import JobTypeSpec, StageTools
from orchestration.runtime.worker import Stage
from resources.discovery import SearchPolicyResource
from resources.documents import DocumentStoreResource
from resources.register import RegisterResource
from resources.shareholders import ShareholderExtractorResource


class StagesResource(ConfigurableResource):
    """Builds a job type's stage (orchestration.jobs.specs) from the documents, register, search
    policy and shareholder reader of the code location."""

    documents: DocumentStoreResource = Field(description="Where the stages store and read documents.")
    register_resource: RegisterResource = Field(description="The register the stages retrieve from.")
    search_policy: SearchPolicyResource = Field(description="How far a search reads and what it opens.")
    shareholder_extractor: ShareholderExtractorResource = Field(description="How shareholder lists are read.")

    def stage(self, spec: JobTypeSpec) -> Stage:
        return spec.stage(
            StageTools(
                documents=self.documents.get_store(),
                register_client=self.register_resource.get_client,
                extract_shareholders=self.shareholder_extractor.parse,
                result_pages=self.search_policy.result_pages,
                search_opens=self.search_policy.search_opens,
                fresh_for=self.search_policy.fresh_for,
            )
        )
