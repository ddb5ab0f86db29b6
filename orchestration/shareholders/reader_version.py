"""The version of the shareholder-list reader. Bump it when read output changes: the shareholders
asset's code_version follows it, shareholder_parsing jobs carry it, and a backfill of the
shareholders asset re-reads the stored lists no job of the new version has read."""

PARSER_VERSION = "2.3.0"
