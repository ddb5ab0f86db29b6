"""The participants (Beteiligte) of an SI document, read in one pass for both generations.

A register extract can list hundreds of participants (one file has 363 Prokuristen). Looking
fields up per participant creates a Python object for every node touched and costs several
times the XML parse; one ``iter()`` over the procedure data, filtered in C to the few element
names needed, visits only those and keeps extraction close to the cost of the parse.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from lxml import etree

from orchestration.xjustiz.values import clean, iso_date, structure_error


@dataclass(frozen=True, slots=True)
class ParticipantNames:
    """The element names (Clark notation) of the participant block in one XJustiz generation."""

    participation: str
    role_number: str
    role_designation: str
    person: str
    organisation: str
    first_name: str
    last_name: str
    birth_date: str
    name: str
    seat: str
    address: str
    city: str


@dataclass(slots=True)
class ParticipantRole:
    number: str
    code: str | None = None  # as the document gives it: a code (3.x) or None (1.x names roles in words)
    label: str | None = None  # the comment next to the code (3.x) or the role's name (1.x)
    designated: bool = False


@dataclass(slots=True)
class Participant:
    participation: etree._Element
    roles: list[ParticipantRole] = field(default_factory=list)
    organisation: etree._Element | None = None  # kept for a Rechtsträger read from its participant
    kind: str | None = None  # "person" | "organisation"
    first_name: str | None = None
    last_name: str | None = None
    birth_date: str | None = None
    name: str | None = None
    seat_city: str | None = None
    address_city: str | None = None
    officer_fields: dict | None = None  # what every officer of this participant shares, once built


def read_participants(
    proceeding: etree._Element,
    names: ParticipantNames,
    designation: Callable[[etree._Element], tuple[str | None, str | None]],
) -> list[Participant]:
    """The participants in document order; ``designation`` reads a role's (code, label).

    Values are taken out as they pass, so no element is held beyond its visit but the
    participation (for error paths) and organisations (which may stand in for the company)."""
    participants: list[Participant] = []
    current: Participant | None = None
    # Local names: the comparisons below run for every element visited.
    participation, role_number, role_designation = names.participation, names.role_number, names.role_designation
    first_name, last_name, birth_date, name, city = (
        names.first_name, names.last_name, names.birth_date, names.name, names.city,
    )  # fmt: skip
    for element in proceeding.iter(
        participation, role_number, role_designation, names.person, names.organisation,
        first_name, last_name, birth_date, name, city,
    ):  # fmt: skip
        tag = element.tag
        if tag == participation:
            current = Participant(participation=element)
            participants.append(current)
        elif current is None:
            continue
        elif tag == city:
            # A city counts below the seat or the address, not e.g. below a place of birth.
            container = element.getparent().tag
            if container == names.address:
                current.address_city = current.address_city or clean(element.text)
            elif container == names.seat:
                current.seat_city = current.seat_city or clean(element.text)
        elif tag == role_number:
            current.roles.append(ParticipantRole(number=clean(element.text) or ""))
        elif tag == role_designation:
            if not current.roles or current.roles[-1].designated:
                current.roles.append(ParticipantRole(number=""))
            role = current.roles[-1]
            role.code, role.label = designation(element)
            role.designated = True
        elif tag == first_name:
            current.first_name = current.first_name or clean(element.text)
        elif tag == last_name:
            current.last_name = current.last_name or clean(element.text)
        elif tag == birth_date:
            current.birth_date = current.birth_date or iso_date(element.text, element)
        elif tag == name:
            current.name = current.name or clean(element.text)
        elif current.kind is None:
            # Person or organisation: only the participant itself, not people named inside it.
            if tag == names.person:
                current.kind = "person"
            else:
                current.kind, current.organisation = "organisation", element
    return participants


@dataclass(slots=True)
class Representation:
    """A power of representation as read: its texts, and whether it exempts from § 181 BGB."""

    texts: list[str] = field(default_factory=list)
    exempt_181: bool = False

    @property
    def text(self) -> str | None:
        return "; ".join(self.texts) or None


@dataclass(slots=True)
class Role:
    """A participant's role as the record uses it: code and label in the canonical code set."""

    number: str
    code: str
    label: str
    participant: Participant


def officers(
    roles: Iterable[Role], representations: dict[str, Representation], liabilities: dict[str, dict]
) -> list[dict]:
    """The officer records of ``roles``, in order."""
    found = []
    for role in roles:
        number, code, label, participant = role.number, role.code, role.label, role.participant
        shared = participant.officer_fields
        if shared is None:
            shared = participant.officer_fields = _officer_fields(participant)
        representation = representations.get(number)
        if representation is None:
            found.append({**shared, "role_code": code, "role": label, "representation": None, "exempt_181": None,
                          "liability_amount": liabilities.get(number)})  # fmt: skip
        else:
            found.append({**shared, "role_code": code, "role": label, "representation": representation.text,
                          "exempt_181": representation.exempt_181, "liability_amount": liabilities.get(number)})  # fmt: skip
    return found


def _officer_fields(participant: Participant) -> dict:
    where = participant.participation
    if participant.kind == "person":
        first_name, last_name = participant.first_name, participant.last_name
        if first_name and last_name:
            name = f"{first_name} {last_name}"
        else:
            name = first_name or last_name
            if not name:
                raise structure_error(where, "person without name")
        return {
            "kind": "person",
            "name": name,
            "first_name": first_name,
            "last_name": last_name,
            "birth_date": participant.birth_date,
            "city": participant.address_city,
        }
    if not participant.name:
        raise structure_error(where, "organisation name is missing")
    return {"kind": "organisation", "name": participant.name, "city": participant.seat_city or participant.address_city}
