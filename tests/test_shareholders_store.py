"""Shareholder lists stored as revisions in PostgreSQL, linked into an ownership graph."""

from __future__ import annotations

from decimal import Decimal

import pandas as pd
import sqlalchemy as sa

from orchestration.shareholders.shareholder_list import Share, Shareholder, ShareholderList
from orchestration.shareholders.store import load_shareholders, review_summary, store_shareholder_list
from orchestration.shareholders.validation import validate

CAPITAL = Decimal("25000")


def _entity(conn, name: str, register_number: str, *, court_name: str, suffix: str = "") -> str:
    return str(
        conn.execute(
            sa.text("""
            INSERT INTO content.entities (court_code, court_name, register_type, register_number, register_suffix, name)
            VALUES (:code, :court_name, 'HRB', :number, :suffix, :name) RETURNING id
        """),
            {
                "code": f"X{register_number}",
                "court_name": court_name,
                "number": register_number,
                "suffix": suffix,
                "name": name,
            },
        ).scalar_one()
    )


def _list(*holders: Shareholder, capital: Decimal = CAPITAL, ocr_fallback=None) -> ShareholderList:
    result = ShareholderList(
        shareholders=list(holders),
        total_nominal=CAPITAL,
        currency="EUR",
        method="rules",
        source="text_layer",
        ocr_fallback=ocr_fallback,
    )
    return result.model_copy(update={"validation": validate(result, capital)})


def _organisation(name: str, nominal: str, percentage: str, court: str, number: str, first_share: str) -> Shareholder:
    return Shareholder(
        kind="organisation",
        name=name,
        seat=court,
        register_court=court,
        register_type="HRB",
        register_number=number,
        shares=[Share(number=first_share, nominal=Decimal(nominal))],
        nominal_total=Decimal(nominal),
        percentage=Decimal(percentage),
    )


def _person(name: str, nominal: str, percentage: str, first_share: str) -> Shareholder:
    first, last = name.split()
    return Shareholder(
        kind="person",
        name=name,
        first_name=first,
        last_name=last,
        residence="Köln",
        shares=[Share(number=first_share, nominal=Decimal(nominal))],
        nominal_total=Decimal(nominal),
        percentage=Decimal(percentage),
    )


def _store(conn, entity_id: str, result: ShareholderList, capital: Decimal | None = CAPITAL) -> int | None:
    return store_shareholder_list(
        conn, entity_id=entity_id, raw_document_id=None, job_id=None, result=result, capital=capital
    )


def test_a_list_is_stored_once_per_revision(engine):
    first = _list(_person("Anna Berger", "15000", "60.0", "1"), _person("Carl Dorn", "10000", "40.0", "2"))
    changed = _list(_person("Anna Berger", "15000", "60.0", "1"), _person("Eva Fink", "10000", "40.0", "2"))
    with engine.begin() as conn:
        company = _entity(conn, "Muster GmbH", "100", court_name="Köln")

        first_id = _store(conn, company, first)
        unchanged = _store(conn, company, first)
        changed_id = _store(conn, company, changed)

        lists = conn.execute(
            sa.text(
                "SELECT id, method, valid, capital, total_nominal, validation -> 'valid' AS checked "
                "FROM content.shareholder_lists ORDER BY id"
            )
        ).all()
        names = conn.execute(
            sa.text(
                "SELECT list_id, position, name, percentage, shares FROM content.shareholders ORDER BY list_id, position"
            )
        ).all()

    assert first_id is not None and unchanged is None and changed_id > first_id
    assert [(row.id, row.method, row.valid, row.capital, row.checked) for row in lists] == [
        (first_id, "rules", True, CAPITAL, True),
        (changed_id, "rules", True, CAPITAL, True),
    ]
    assert [(row.list_id, row.position, row.name) for row in names] == [
        (first_id, 1, "Anna Berger"),
        (first_id, 2, "Carl Dorn"),
        (changed_id, 1, "Anna Berger"),
        (changed_id, 2, "Eva Fink"),
    ]
    assert names[0].percentage == Decimal("60.0")
    assert names[0].shares == [{"number": "1", "last_number": None, "nominal": "15000", "percentage": None}]


def test_same_list_against_another_capital_is_a_new_revision_with_its_failed_check(engine):
    result = _list(_person("Anna Berger", "25000", "100.0", "1"))
    with engine.begin() as conn:
        company = _entity(conn, "Muster GmbH", "100", court_name="Köln")
        first = _store(conn, company, result)
        again = _store(conn, company, _list(*result.shareholders, capital=Decimal("50000")), capital=Decimal("50000"))
        stored = conn.execute(
            sa.text("SELECT valid, validation FROM content.shareholder_lists WHERE id = :id"), {"id": again}
        ).one()

    assert first and again and again != first
    assert stored.valid is False
    failed = [check["name"] for check in stored.validation["checks"] if check["status"] == "failed"]
    assert "nominal_sum_matches_capital" in failed


def test_corporate_shareholders_link_to_known_entities(engine):
    with engine.begin() as conn:
        company = _entity(conn, "Muster GmbH", "100", court_name="Köln")
        holding = _entity(conn, "Berger Holding GmbH", "4711", court_name="Amtsgericht München")
        berlin = _entity(conn, "Spree Invest GmbH", "999", court_name="Berlin (Charlottenburg)", suffix="B")
        _entity(conn, "Other GmbH", "555", court_name="Frankfurt/Oder")
        result = _list(
            _organisation("Berger Holding GmbH", "12500", "50.0", "München", "4711", "1"),
            _organisation("Spree Invest GmbH", "7500", "30.0", "Charlottenburg", "999 B", "2"),
            _organisation("Main Beteiligungs GmbH", "2500", "10.0", "Frankfurt am Main", "555", "3"),
            _person("Anna Berger", "2500", "10.0", "4"),
        )
        _store(conn, company, result)

        frame = load_shareholders(conn)

    links = dict(zip(frame["name"], frame["linked_entity_id"]))
    assert links["Berger Holding GmbH"] == holding
    assert links["Spree Invest GmbH"] == berlin
    assert links["Main Beteiligungs GmbH"] is None  # same number at another court is another company
    assert links["Anna Berger"] is None
    assert frame.loc[frame["name"] == "Berger Holding GmbH", "linked_company"].item() == "Berger Holding GmbH"
    assert set(frame["company"]) == {"Muster GmbH"}


def test_ownership_frame_holds_the_latest_lists_by_default(engine):
    with engine.begin() as conn:
        parent = _entity(conn, "Top Holding GmbH", "1", court_name="Köln")
        child = _entity(conn, "Mid GmbH", "2", court_name="Köln")
        grandchild = _entity(conn, "Low GmbH", "3", court_name="Köln")
        _store(conn, child, _list(_person("Anna Berger", "25000", "100.0", "1")))
        _store(conn, child, _list(_organisation("Top Holding GmbH", "25000", "100.0", "Köln", "1", "1")))
        _store(
            conn,
            grandchild,
            _list(
                _organisation("Mid GmbH", "20000", "80.0", "Köln", "2", "1"), _person("Carl Dorn", "5000", "20.0", "2")
            ),
        )

        latest = load_shareholders(conn)
        history = load_shareholders(conn, latest_only=False)
        only_child = load_shareholders(conn, entity_ids=[child])

    edges = {
        (row.linked_entity_id, row.entity_id, row.percentage) for row in latest.itertuples() if row.linked_entity_id
    }
    assert edges == {(parent, child, 100.0), (child, grandchild, 80.0)}
    assert len(history) == len(latest) + 1
    assert list(only_child["name"]) == ["Top Holding GmbH"]
    assert latest["nominal_total"].dtype == "float64"


def test_the_newest_lists_by_review_status_with_what_to_look_at(engine):
    checked = _list(_person("Anna Berger", "25000", "100.0", "1"))
    with engine.begin() as conn:
        verified = _entity(conn, "Muster GmbH", "100", court_name="Köln")
        to_review = _entity(conn, "Beispiel GmbH", "200", court_name="Köln")
        _store(conn, verified, checked)
        _store(conn, to_review, checked)
        list_id = _store(
            conn,
            to_review,
            _list(*checked.shareholders, capital=Decimal("50000"), ocr_fallback="not_better"),
            capital=Decimal("50000"),
        )
        stored = conn.execute(
            sa.text("SELECT validation ->> 'status' FROM content.shareholder_lists WHERE id = :id"), {"id": list_id}
        ).scalar_one()

        summary = review_summary(conn, [verified, to_review])

    assert stored == "needs_review"
    assert (summary["verified"], summary["needs_review"]) == (1, 1)
    [entry] = summary["to_review"]
    assert (entry["list_id"], entry["entity_id"]) == (list_id, to_review)
    assert "nominal_sum_matches_capital" in entry["failed_checks"]
    # read from the text layer; OCR of the rendered pages was tried and read no better
    assert (entry["source"], entry["ocr_fallback"]) == ("text_layer", "not_better")


def test_a_foreign_register_the_changes_and_range_percentages_are_stored(engine):
    french = Shareholder(
        kind="organisation",
        name="Lumière Distribution SAS",
        seat="Lyon",
        register_court="Greffe du Tribunal de Commerce de Lyon",
        register_number="812345678",
        register_country="FR",
        shares=[
            Share(number="1", last_number="6250", nominal=Decimal(1), percentage=Decimal(25)),
            Share(number="19814", last_number="21438", nominal=Decimal(1), percentage=Decimal("6.5")),
        ],
        nominal_total=Decimal(7875),
        percentage=Decimal("31.5"),
        changes="Nr. 19.814 – 21.438 erworben von der Beispiel GmbH",
    )
    rest = _organisation("Beispiel GmbH", "17125", "68.5", "Köln", "42", "6251").model_copy(
        update={
            "shares": [
                Share(number="6251", last_number="19813", nominal=Decimal(1)),
                Share(number="21439", last_number="25000", nominal=Decimal(1)),
            ]
        }
    )
    with engine.begin() as conn:
        company = _entity(conn, "Muster GmbH", "100", court_name="Köln")
        _store(conn, company, _list(french, rest))

        frame = load_shareholders(conn)
        shares = conn.execute(
            sa.text("SELECT shares FROM content.shareholders WHERE entity_id = :id AND position = 1"), {"id": company}
        ).scalar_one()

    row = frame.loc[frame["name"] == "Lumière Distribution SAS"].iloc[0]
    assert (row.register_court, row.register_number, row.register_country) == (
        "Greffe du Tribunal de Commerce de Lyon",
        "812345678",
        "FR",
    )
    assert pd.isna(row.register_type)  # no German register type
    assert row.changes == "Nr. 19.814 – 21.438 erworben von der Beispiel GmbH"
    assert row.linked_entity_id is None
    assert [share["percentage"] for share in shares] == ["25", "6.5"]
