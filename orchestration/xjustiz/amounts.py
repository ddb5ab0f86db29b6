"""Capital and limited partners' liability amounts, read the same way in every generation.

Only the element names and the reading of one amount (``money``: its currency is coded
differently per generation) differ between XJustiz 1.x and 3.x.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from lxml import etree

from orchestration.xjustiz.xml_values import child_text, children, descend

MoneyReader = Callable[[etree._Element], dict | None]


@dataclass(frozen=True, slots=True)
class AmountNames:
    """The element names (Clark notation) of the amounts in one XJustiz generation."""

    # Below the additional data: the capital company block, and the paths from it to a capital.
    capital_company: str
    capital_paths: tuple[tuple[str, ...], ...]
    # The path from the additional data to the limited partners, one of them, and their amount.
    limited_partners: tuple[str, ...]
    limited_partner: str
    liability: str
    role_reference: str


def read_capital(additional: etree._Element | None, names: AmountNames, money: MoneyReader) -> dict | None:
    """The first capital the document states, in the order of ``capital_paths``."""
    companies = children(descend(additional, names.capital_company))
    for path in names.capital_paths:
        element = descend(companies.get(path[0]), *path[1:])
        amount = money(element) if element is not None else None
        if amount is not None:
            return amount
    return None


def read_liabilities(additional: etree._Element | None, names: AmountNames, money: MoneyReader) -> dict[str, dict]:
    """Each limited partner's Hafteinlage, by the partner's role number."""
    partnership = descend(additional, *names.limited_partners)
    liabilities = {}
    if partnership is not None:
        for partner in partnership.iterchildren(names.limited_partner):
            element = descend(partner, names.liability)
            amount = money(element) if element is not None else None
            if amount is not None:
                liabilities[child_text(partner, names.role_reference) or ""] = amount
    return liabilities
