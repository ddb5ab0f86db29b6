"""The asset keys the assets and sensors name one another by."""

import dagster as dg

DISCOVERED_ENTITIES = dg.AssetKey("discovered_entities")
RAW_SI_DOCUMENTS = dg.AssetKey("raw_si_documents")
COMPANY_RECORDS = dg.AssetKey("company_records")
