"""The value readers the XJustiz parsers stand on: which element they pick and how they read text."""

from __future__ import annotations

from lxml import etree

from orchestration.xjustiz.xml_values import child_text, children, clean, code_and_label, descend, first_of, text_of

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


def test_a_code_is_its_first_code_child_and_its_first_comment_that_is_not_blank() -> None:
    root = etree.fromstring(DOCUMENT)
    designation = descend(root, NS + "rolle", NS + "rollenbezeichnung")
    assert code_and_label(designation) == ("285", "Prokurist(in)")
    assert code_and_label(None) == (None, None)
    # A code in the XJustiz namespace is not the unqualified ``code`` producers write.
    qualified = etree.fromstring(b'<r xmlns="http://www.xjustiz.de"><code>1</code></r>')
    assert code_and_label(qualified) == (None, None)


def test_a_text_runs_up_to_the_first_child_that_is_not_text_and_empty_is_none() -> None:
    root = etree.fromstring(DOCUMENT)
    address = descend(root, NS + "natuerlichePerson", NS + "anschrift")
    assert child_text(address, NS + "ort") == "Essen"
    assert text_of(descend(root, NS + "organisation", NS + "sitz", NS + "ort")) is None
    assert text_of(None) is None and child_text(None, NS + "ort") is None
    assert descend(root, NS + "rolle", NS + "nichts") is None


def test_first_of_finds_the_first_descendant_of_each_name_but_not_the_element_itself() -> None:
    root = etree.fromstring(DOCUMENT)
    found = first_of(root, (NS + "ort", NS + "beteiligung", NS + "sitz"))
    assert found[None] is root
    assert text_of(found[NS + "ort"]) == "Hamm"  # document order: the place of birth comes first
    assert NS + "beteiligung" not in found
    assert found[NS + "sitz"].getparent().tag == NS + "organisation"


def test_children_are_the_first_child_of_each_name() -> None:
    root = etree.fromstring(b"<r><a>1</a><b>2</b><a>3</a></r>")
    assert {tag: text_of(child) for tag, child in children(root).items()} == {"a": "1", "b": "2"}
    assert children(None) == {}


TRICKY_TEXTS = [
    "Essen",
    " Essen",
    "Essen ",
    "Bad  Homburg",
    "Bad\nHomburg",
    "Bad\tHomburg",
    "Bad\r\nHomburg",
    "Düsseldorf",
    "Straße\u00a0",
    "\u2003Köln",
    "a\u00a0 b",
    "x",
    " ",
    "",
    "Müller &amp; Co.",
    "<![CDATA[a  b]]>c",
]


def test_texts_are_stripped_and_their_whitespace_collapsed() -> None:
    body = "".join(f"<tns:ort>{text}</tns:ort>" for text in TRICKY_TEXTS)
    root = etree.fromstring(f'<tns:sitz xmlns:tns="http://www.xjustiz.de">{body}</tns:sitz>'.encode())
    texts = [text_of(element) for element in root]
    assert texts[:8] == [
        "Essen",
        "Essen",
        "Essen",
        "Bad Homburg",
        "Bad Homburg",
        "Bad Homburg",
        "Bad Homburg",
        "Düsseldorf",
    ]
    # Unicode spaces are stripped at the edges; inside, only tabs, line breaks and runs of spaces
    # are collapsed (a no-break space before a space stays as the producer wrote it).
    assert texts[8:12] == ["Straße", "Köln", "a\u00a0 b", "x"] and texts[12] is texts[13] is None
    assert texts[14:] == ["Müller & Co.", "a bc"]
    assert clean(None) is None
