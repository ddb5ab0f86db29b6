"""Small value readers shared by the 1.x and 3.x parsers: text, dates, amounts, paths, comments."""

from __future__ import annotations

import re
from datetime import date
from decimal import Decimal, InvalidOperation
from typing import get_args

from lxml import etree

from orchestration.runtime.failures import FailureClass, JobError
from orchestration.xjustiz.company_record import RegisterType

XJUSTIZ_NS = "http://www.xjustiz.de"
# An XJustiz element's name in Clark notation, the form lxml compares tags in, is T + its local name.
T = "{" + XJUSTIZ_NS + "}"
REGISTER_REFERENCE = re.compile(r"^\s*(HRA|HRB|GnR|PR|VR)\s*(\d+)\s*(.*?)\s*$", re.IGNORECASE)
_CANONICAL_REGISTER_TYPE = {t.lower(): t for t in get_args(RegisterType)}
_from_iso = date.fromisoformat
_COMMENT = etree.Comment  # the tag of comment nodes
# Where a value was read, for the path of an error: the element, or for a value read without
# keeping its element, a function that finds it and its arguments (called only on error).
Where = etree._Element | tuple
# Amounts that Decimal prints back unchanged with two decimal places.
_PLAIN_AMOUNT = re.compile(r"-?(?:0|[1-9][0-9]*)\.[0-9][0-9]\Z")


def clean(text: str | None) -> str | None:
    """Whitespace collapsed to single spaces (producers wrap lines at will); None when empty."""
    if text is None:
        return None
    value = text.strip()
    # Most values need only the strip; the scans are cheaper than always splitting.
    if "\n" in value or "  " in value or "\t" in value or "\r" in value:
        value = " ".join(value.split())
    return value or None


def text_of(element: etree._Element | None) -> str | None:
    """The text of ``element`` (lxml's ``.text``, up to its first child), cleaned; None for no element."""
    return clean(element.text) if element is not None else None


def children(element: etree._Element | None) -> dict:
    """The first direct child of each tag (for elements with a few children: each becomes an object)."""
    found: dict = {}
    if element is not None:
        for child in element:
            found.setdefault(child.tag, child)
    return found


def descend(element: etree._Element | None, *tags: str) -> etree._Element | None:
    """The first child of the first child … along ``tags`` (names in Clark notation), or None.

    lxml matches the names in C, so the siblings passed on the way never become objects."""
    for tag in tags:
        if element is None:
            return None
        element = next(element.iterchildren(tag), None)
    return element


def child_text(element: etree._Element | None, tag: str) -> str | None:
    """The cleaned text of the first child named ``tag``; None if there is none."""
    return text_of(next(element.iterchildren(tag), None)) if element is not None else None


def code_and_label(element: etree._Element | None) -> tuple[str | None, str | None]:
    """An XJustiz code: the text of its first ``code`` child and the label of its first comment
    that is not blank, the one producers put next to it; (None, None) for no element."""
    code = label = None
    if element is not None:
        seen_code = False
        for child in element:
            tag = child.tag
            if tag == "code":
                if not seen_code:
                    code, seen_code = clean(child.text), True
            elif tag is _COMMENT and label is None:
                label = clean(child.text)
    return code, label


def first_of(element: etree._Element, tags: tuple[str, ...]) -> dict:
    """The first element of each of ``tags`` in ``element``'s subtree (document order), found in
    one pass that lxml filters in C; ``element`` itself under ``None``, for error paths."""
    found: dict = {None: element}
    for descendant in element.iterdescendants(*tags):
        found.setdefault(descendant.tag, descendant)
    return found


def element_path(element: etree._Element, child: str | None = None) -> str:
    """A readable path such as /nachricht.reg.0400003/grunddaten/…, naming where parsing failed."""
    names = [etree.QName(e).localname for e in element.iterancestors() if isinstance(e.tag, str)]
    names.reverse()
    names.append(etree.QName(element).localname)
    if child:
        names.append(child.replace(T, ""))
    return "/" + "/".join(names)


def structure_error(element: Where, message: str, child: str | None = None) -> JobError:
    if isinstance(element, tuple):
        find, *arguments = element
        return structure_error(find(*arguments), message, child)
    return JobError(FailureClass.PARSER_ERROR, message, source="xjustiz", code=element_path(element, child))


def iso_date(text: str | None, where: Where) -> str | None:
    # Nearly every date is plain YYYY-MM-DD, which fromisoformat accepts only when it is valid
    # and whose ISO form is the text itself: no cleaning, slicing or formatting needed.
    if text is not None and len(text) == 10 and text[4] == "-" and text[7] == "-":
        try:
            _from_iso(text)
            return text
        except ValueError:
            pass  # reported below, with the cleaned value
    value = clean(text)
    if value is None:
        return None
    try:
        return date.fromisoformat(value[:10]).isoformat()
    except ValueError:
        raise structure_error(where, f"not a date: {value!r}") from None


def decimal_amount(text: str | None, where: etree._Element) -> str | None:
    """An amount as a decimal string with at least two decimal places ("25000" -> "25000.00")."""
    value = clean(text)
    if value is None:
        return None
    if _PLAIN_AMOUNT.match(value):
        return value  # already what Decimal would print: no leading zeros, two decimal places
    try:
        amount = Decimal(value)
    except InvalidOperation:
        raise structure_error(where, f"not an amount: {value!r}") from None
    if not amount.is_finite():
        raise structure_error(where, f"not an amount: {value!r}")
    exponent = amount.as_tuple().exponent
    if isinstance(exponent, int) and exponent > -2:
        amount = amount.quantize(Decimal("0.01"))
    return str(amount)


def optional_int(text: str | None, where: Where) -> int | None:
    if text is None:
        return None
    try:
        return int(text)  # int() itself ignores surrounding whitespace
    except ValueError:
        if not text.strip():
            return None
        raise structure_error(where, f"not a number: {text.strip()!r}") from None


def split_register_reference(text: str, where: etree._Element) -> tuple[str, str, str | None]:
    """ "HRB 135559 B" -> ("HRB", "135559", "B")."""
    match = REGISTER_REFERENCE.match(text)
    if not match:
        raise structure_error(where, f"not a register reference: {text!r}")
    kind, number, suffix = match.groups()
    return _CANONICAL_REGISTER_TYPE[kind.lower()], number, suffix or None


def register_type(code: str, where: etree._Element) -> str:
    canonical = _CANONICAL_REGISTER_TYPE.get(code.lower())
    if canonical is None:
        raise structure_error(where, f"register type {code!r} is not one of HRA, HRB, GnR, PR, VR")
    return canonical
