"""Companies of the sample register as entities the application already knows."""

from __future__ import annotations

from collections.abc import Iterable

import sqlalchemy as sa

from sample_register.company import Company

INSERT_ENTITY = sa.text("""
    INSERT INTO content.entities (court_code, court_name, register_type, register_number, register_suffix, name)
    VALUES (:court_code, :court_name, :register_type, :register_number, :register_suffix, :name)
    RETURNING id
""")


def insert_known_entities(conn: sa.Connection, companies: Iterable[Company]) -> list[str]:
    """The companies as entities an earlier search discovered (no documents yet); their ids, in order."""
    return [
        str(
            conn.execute(
                INSERT_ENTITY,
                {
                    "court_code": company.court.code,
                    "court_name": company.court.name,
                    "register_type": company.register_type,
                    "register_number": company.register_number,
                    "register_suffix": company.register_suffix or "",
                    "name": company.name,
                },
            ).scalar_one()
        )
        for company in companies
    ]
