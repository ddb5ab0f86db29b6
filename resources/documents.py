"""The raw document store as a Dagster resource."""

from __future__ import annotations

from dagster import ConfigurableIOManager, ConfigurableResource, FilesystemIOManager
from dagster_aws.s3 import S3PickleIOManager, S3Resource
from pydantic import Field

from orchestration.documents import DocumentStore
from orchestration.object_store import S3ObjectStore, open_object_store
from orchestration.settings import Settings, get_settings


class DocumentStoreResource(ConfigurableResource):
    """Where raw documents too large for their database row are kept (default: HREG_DOCUMENT_STORE)."""

    location: str = Field(
        "", description="file://DIRECTORY or s3://BUCKET/PREFIX of the store; empty: taken from the settings."
    )

    def get_store(self) -> DocumentStore:
        settings = get_settings()
        return DocumentStore(
            self.location or settings.document_store_location, inline_limit_bytes=settings.document_inline_limit_bytes
        )


def ownership_graph_io_manager(settings: Settings) -> ConfigurableIOManager:
    """Where ownership_graph's DataFrame goes: beside the documents when they are on S3, so that any
    host reads it; otherwise Dagster's filesystem I/O manager under its home, as by default."""
    objects = open_object_store(settings.document_store_location)
    if isinstance(objects, S3ObjectStore):
        # S3Resource leaves the endpoint and credentials to boto3's AWS_* configuration, as the store does.
        return S3PickleIOManager(
            s3_resource=S3Resource(), s3_bucket=objects.bucket, s3_prefix=f"{objects.prefix}dagster"
        )
    return FilesystemIOManager()
