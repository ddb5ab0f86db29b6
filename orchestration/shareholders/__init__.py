"""Shareholder lists (Gesellschafterliste, GmbHG §40 and GesLV): text, extraction, validation, storage."""
