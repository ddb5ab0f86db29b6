"""Extraction by an LLM behind an OpenAI-compatible endpoint, against a local stand-in that speaks
the chat-completions protocol with structured output (``llm_helpers.FakeChatCompletions``)."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

from llm_helpers import SERVER_ERROR, FakeChatCompletions, answer_reading, user_text
from orchestration.runtime.failures import FailureClass, JobError
from orchestration.settings import LlmEndpoint
from orchestration.shareholders.parse import extract_shareholders, parse_shareholder_list
from orchestration.shareholders.shareholder_list import Shareholder
from sample_register.shareholder_lists import generate_list
from shareholder_tables import table

CAPITAL = Decimal("25000")


@pytest.fixture
def endpoint():
    with FakeChatCompletions(lambda body: "{}") as fake:
        yield fake


def _endpoint(url: str) -> LlmEndpoint:
    return LlmEndpoint(url, "extraction-model", "secret")


def _properties(node) -> set[str]:
    """Every property name anywhere in a JSON schema."""
    if isinstance(node, dict):
        names = set(node.get("properties", {})) if isinstance(node.get("properties"), dict) else set()
        return names.union(*(_properties(value) for value in node.values()))
    if isinstance(node, list):
        return set().union(*(_properties(value) for value in node))
    return set()


# What a model answers for READ_LIST by the instructions (written from the list as printed):
# amounts and percentages as decimal text, "< 1 %" as no number, a German register without a
# country, and the kind left open (null) for two of the three holders. The reading turns it into
# the checked list: numbers, the derived percentage, the register's country, each holder's kind
# (a person by a birth date, an organisation by its legal form, seat and register), the total stated.
READ_LIST = {"seed": 8, "company_name": "Muster GmbH", "capital": CAPITAL, "layout": "per_share", "form": "text_pdf"}
MODEL_ANSWER = Path(__file__).parent / "data" / "llm_answers" / "muster_gmbh_per_share_8.json"


HEADINGS = ["Lfd. Nr.", "Gesellschafter", "Nennbetrag in EUR", "Beteiligung in %"]


def test_llm_extraction_is_validated_by_the_same_model(endpoint):
    generated = generate_list(**READ_LIST)
    endpoint.answer = answer_reading(json.loads(MODEL_ANSWER.read_text()))

    result = parse_shareholder_list(generated.content, capital=CAPITAL, method="llm", llm=_endpoint(endpoint.url))

    assert result.method == "llm"
    # The list as the generator drew it, in the checked list's form.
    assert result.model_dump(exclude={"method", "validation"}) == generated.expected.model_dump(
        exclude={"method", "validation"}
    )
    felix, fred, segebahn = result.shareholders
    assert [share.nominal for share in felix.shares] == [Decimal("6300.00"), Decimal("9920.00"), Decimal("2343.00")]
    assert (felix.nominal_total, felix.percentage) == (Decimal("18563.00"), Decimal("74.25"))
    assert (fred.percentage_below_one, fred.percentage) == (True, Decimal("0.40"))  # 100,00 of 25.000,00
    assert (segebahn.kind, segebahn.register_type, segebahn.register_country) == ("organisation", "HRB", "DE")
    assert (result.total_nominal, result.total_stated, result.currency) == (Decimal("25000.00"), True, "EUR")
    assert result.validation.status == "verified"
    [request] = endpoint.requests
    assert request["model"] == "extraction-model"
    assert request["response_format"]["json_schema"]["strict"] is True
    # Only what the model reads: derived percentages, the total's origin and OCR's doubts the code adds.
    sent_schema = request["response_format"]["json_schema"]["schema"]
    assert not {"percentage_derived", "total_stated", "low_confidence_cells"} & _properties(sent_schema)
    assert set(sent_schema["properties"]) == {"shareholders", "total_nominal", "currency"}
    sent = json.loads(user_text(request))
    assert sent["headings"] and len(sent["lines"]) == 6  # five shares and the sum: the cells, not the pages:
    assert "Kemnath" not in user_text(request) and "Geschäftsführer" not in user_text(request)  # place, signature


def test_auto_asks_the_llm_only_when_the_rules_fail_a_check(endpoint):
    misprinted = table(
        HEADINGS, [["1", "Berger Holding GmbH, Sitz Köln, Amtsgericht Köln HRB 1234", "25.000,00", "60 %"]]
    )
    endpoint.answer = lambda body: (
        json.dumps(
            {
                "shareholders": [
                    {
                        "kind": "organisation",
                        "name": "Berger Holding GmbH",
                        "first_name": None,
                        "last_name": None,
                        "birth_date": None,
                        "residence": None,
                        "seat": "Köln",
                        "register_court": "Köln",
                        "register_type": "HRB",
                        "register_number": "1234",
                        "shares": [{"number": "1", "last_number": None, "nominal": "25000.00"}],
                        "nominal_total": "25000.00",
                        "percentage": "100",
                        "percentage_below_one": False,
                    }
                ],
                "total_nominal": "25000.00",
                "currency": "EUR",
            }
        )
        if "Berger Holding" in user_text(body)
        else "{}"
    )
    llm = _endpoint(endpoint.url)
    generated = generate_list(2, company_name="Muster GmbH", capital=CAPITAL, layout="per_share", form="text_pdf")

    by_rules = parse_shareholder_list(generated.content, capital=CAPITAL, llm=llm)
    assert by_rules.method == "rules" and not endpoint.requests
    by_llm = extract_shareholders(misprinted, capital=CAPITAL, llm=llm)

    assert len(endpoint.requests) == 1
    assert by_llm.method == "llm"
    holder = by_llm.shareholders[0]
    # The answer's text read as numbers, and the German register placed in Germany.
    assert (holder.register_number, holder.register_country) == ("1234", "DE")
    assert (holder.nominal_total, by_llm.total_nominal, by_llm.total_stated) == (Decimal(25000), Decimal(25000), True)
    assert by_llm.validation.status == "verified"


SOME_TABLE = table(HEADINGS, [["1", "Berger Holding GmbH", "25.000,00", "100 %"]])


def test_an_answer_outside_the_model_is_a_parser_error(endpoint):
    endpoint.answer = lambda body: json.dumps(
        {"shareholders": [{"kind": "robot", "name": "X"}], "total_nominal": None, "currency": None}
    )

    with pytest.raises(JobError) as raised:
        extract_shareholders(SOME_TABLE, method="llm", llm=_endpoint(endpoint.url))

    assert raised.value.failure_class == FailureClass.PARSER_ERROR
    assert raised.value.code == "llm"


def test_a_holder_whose_kind_neither_the_model_nor_its_cell_tells_sends_the_list_to_review(endpoint):
    # "Berger" alone: no birth date, residence, legal form, seat or register, and no kind.
    holder = {"kind": None, "name": "Berger", "first_name": None, "last_name": None, "birth_date": None}
    holder |= {"residence": None, "seat": None, "register_court": None, "register_type": None}
    holder |= {"register_number": None, "register_country": None, "percentage": "100"}
    holder |= {"shares": [{"number": "1", "last_number": None, "nominal": "25000.00", "percentage": None}]}
    holder |= {"nominal_total": "25000.00", "percentage_below_one": False, "changes": None}
    answer = {"shareholders": [holder], "total_nominal": "25000.00", "currency": "EUR"}
    endpoint.answer = lambda body: json.dumps(answer)

    result = extract_shareholders(SOME_TABLE, capital=CAPITAL, method="llm", llm=_endpoint(endpoint.url))

    assert result.validation.status == "needs_review"
    (kinds,) = [check for check in result.validation.checks if check.name == "kinds_match"]
    assert kinds.status == "failed" and "neither person nor organisation" in kinds.message


def test_server_errors_are_transient(endpoint):
    endpoint.answer = lambda body: SERVER_ERROR

    with pytest.raises(JobError) as raised:
        extract_shareholders(SOME_TABLE, method="llm", llm=_endpoint(endpoint.url))

    assert raised.value.failure_class == FailureClass.DEPENDENCY_UNAVAILABLE


def test_llm_without_an_endpoint_is_unavailable():
    with pytest.raises(JobError) as raised:
        extract_shareholders(SOME_TABLE, method="llm", llm=None)

    assert raised.value.failure_class == FailureClass.DEPENDENCY_UNAVAILABLE


def test_a_german_register_the_model_names_without_a_country_is_in_germany():
    # The model is asked for a country only for a foreign register, as the rules read it.
    stated = {"kind": "organisation", "name": "Beispiel Holding GmbH", "shares": [], "nominal_total": "100.00"}
    german = Shareholder.model_validate({**stated, "register_court": "München", "register_type": "HRB"})
    foreign = Shareholder.model_validate({**stated, "register_court": "Companies House", "register_country": "GB"})
    assert (german.register_country, foreign.register_country) == ("DE", "GB")
