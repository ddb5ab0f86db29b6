"""The compiled selector the XJustiz readers stand on: what it picks and how it reads values."""

from __future__ import annotations

from lxml import etree
from orchestration.xjustiz._select import CODED, ELEMENT, MARK, TEXT, Selector

NS = "{http://www.xjustiz.de}"
DOCUMENT = b"""<tns:beteiligung xmlns:tns="http://www.xjustiz.de">
  <tns:rolle>
    <tns:rollenbezeichnung><!-- --><!--Prokurist(in)--><code>285</code><code>999</code></tns:rollenbezeichnung>
  </tns:rolle>
  <tns:natuerlichePerson>
    <tns:geburt><tns:geburtsort><tns:ort>Hamm</tns:ort></tns:geburtsort></tns:geburt>
    <tns:anschrift><tns:ort>Essen<!-- note -->-Werden</tns:ort></tns:anschrift>
  </tns:natuerlichePerson>
  <tns:organisation><tns:sitz><tns:ort></tns:ort></tns:sitz></tns:organisation>
</tns:beteiligung>"""


def test_values_are_read_in_document_order_by_rule() -> None:
    root = etree.fromstring(DOCUMENT)
    selector = Selector({
        NS + "rollenbezeichnung": ("role", CODED),
        NS + "natuerlichePerson": ("person", MARK),
        (NS + "anschrift", NS + "ort"): ("address city", TEXT),
        (NS + "sitz", NS + "ort"): ("seat city", TEXT),
        NS + "organisation": ("organisation", ELEMENT),
    })  # fmt: skip
    found = selector.select(root)
    # The first code and the first comment that is not blank; the text up to the first child
    # that is not text, as lxml's ``.text``; an empty element has no text; the place of birth
    # is below neither an address nor a seat.
    assert found[:4] == [
        ("role", ("285", "Prokurist(in)")),
        ("person", None),
        ("address city", "Essen"),
        ("organisation", root[2]),
    ]
    assert found[4] == ("seat city", None)
    assert len(found) == 5


def test_a_rule_for_a_name_alone_matches_it_below_any_parent() -> None:
    root = etree.fromstring(DOCUMENT)
    assert Selector({NS + "ort": ("city", TEXT)}).select(root) == [("city", "Hamm"), ("city", "Essen"), ("city", None)]


def test_records_group_values_by_their_start() -> None:
    root = etree.fromstring(DOCUMENT)
    participation, role, person, city, width = range(5)
    selector = Selector({
        NS + "beteiligung": (participation, MARK),
        NS + "rollenbezeichnung": (role, CODED),
        NS + "natuerlichePerson": (person, MARK),
        NS + "ort": (city, TEXT),
    })  # fmt: skip
    # The start itself is not among the descendants: nothing opens a record.
    assert selector.records(root, participation, width) == []
    wrapper = etree.Element("wrapper")
    wrapper.append(root)
    # The first value of a field that is not None counts; fields in the sequence keep their order.
    [record] = selector.records(wrapper, participation, width, frozenset({role}))
    assert record == [None, None, None, "Hamm", [(role, ("285", "Prokurist(in)"))]]


def test_the_element_itself_is_not_selected() -> None:
    root = etree.fromstring(DOCUMENT)
    assert Selector({NS + "beteiligung": ("participation", MARK)}).select(root) == []


TRICKY_TEXTS = [
    "Essen", " Essen", "Essen ", "Bad  Homburg", "Bad\nHomburg", "Bad\tHomburg", "Bad\r\nHomburg", "Düsseldorf",
    "Straße\u00a0", "\u2003Köln", "a\u00a0 b", "x", " ", "", "Müller &amp; Co.", "<![CDATA[a  b]]>c",
]  # fmt: skip


def test_texts_are_cleaned_exactly_as_clean_cleans_lxml_text() -> None:
    from orchestration.xjustiz._select import child_text, clean, text_of

    body = "".join(f"<tns:ort>{text}</tns:ort>" for text in TRICKY_TEXTS)
    root = etree.fromstring(f'<tns:sitz xmlns:tns="http://www.xjustiz.de">{body}</tns:sitz>'.encode())
    expected = [clean(element.text) for element in root]
    assert Selector({NS + "ort": ("city", TEXT)}).select(root) == [("city", value) for value in expected]
    assert expected[:8] == ["Essen", "Essen", "Essen", "Bad Homburg", "Bad Homburg", "Bad Homburg", "Bad Homburg", "Düsseldorf"]
    assert expected[8:12] == ["Straße", "Köln", "a\u00a0 b", "x"] and expected[12] is expected[13] is None
    assert child_text(root, NS + "ort") == "Essen"
    assert [text_of(element) for element in root] == expected
