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


def test_element_at_finds_the_element_behind_a_value() -> None:
    root = etree.fromstring(DOCUMENT)
    selector = Selector({NS + "ort": ("city", TEXT)})
    assert [value for _, value in selector.select(root)] == ["Hamm", "Essen", None]
    assert selector.element_at(root, 1).getparent().tag == NS + "anschrift"


def test_the_element_itself_is_not_selected() -> None:
    root = etree.fromstring(DOCUMENT)
    assert Selector({NS + "beteiligung": ("participation", MARK)}).select(root) == []
