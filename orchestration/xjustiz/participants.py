"""The participants (Beteiligte) of an SI document, read in one pass for both generations.

A register extract can list hundreds of participants (one file has 363 Prokuristen). Looking
fields up per participant creates a Python object for every node touched and costs several
times the XML parse; one ``iter()`` over the procedure data, filtered in C to the few element
names needed, visits only those and keeps extraction within the cost of the parse.
"""

from __future__ import annotations

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
    designation: etree._Element | None = None


@dataclass(slots=True)
class Participant:
    participation: etree._Element
    roles: list[ParticipantRole] = field(default_factory=list)
    element: etree._Element | None = None  # the person or organisation
    kind: str | None = None  # "person" | "organisation"
    first_name: str | None = None
    last_name: str | None = None
    birth_date: etree._Element | None = None
    name: str | None = None
    seat_city: str | None = None
    address_city: str | None = None


def read_participants(proceeding: etree._Element, names: ParticipantNames) -> list[Participant]:
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
            if not current.roles or current.roles[-1].designation is not None:
                current.roles.append(ParticipantRole(number=""))
            current.roles[-1].designation = element
        elif tag == first_name:
            current.first_name = current.first_name or clean(element.text)
        elif tag == last_name:
            current.last_name = current.last_name or clean(element.text)
        elif tag == birth_date:
            current.birth_date = current.birth_date if current.birth_date is not None else element
        elif tag == name:
            current.name = current.name or clean(element.text)
        elif current.kind is None:
            # Person or organisation: only the participant itself, not people named inside it.
            current.kind = "person" if tag == names.person else "organisation"
            current.element = element
    return participants


@dataclass(slots=True)
class Representation:
    """A power of representation as read: its texts, and whether it exempts from § 181 BGB."""

    texts: list[str] = field(default_factory=list)
    exempt_181: bool = False

    @property
    def text(self) -> str | None:
        return "; ".join(self.texts) or None


def officer(
    role_code: str,
    role_label: str,
    participant: Participant,
    representation: Representation | None,
    liability: dict | None,
) -> dict:
    common = dict(
        role_code=role_code,
        role=role_label,
        representation=representation.text if representation else None,
        exempt_181=representation.exempt_181 if representation else None,
        liability_amount=liability,
    )
    where = participant.element if participant.element is not None else participant.participation
    if participant.kind == "person":
        name = " ".join(n for n in (participant.first_name, participant.last_name) if n)
        if not name:
            raise structure_error(where, "person without name")
        birth = participant.birth_date
        return dict(
            kind="person",
            name=name,
            first_name=participant.first_name,
            last_name=participant.last_name,
            birth_date=iso_date(birth.text, birth) if birth is not None else None,
            city=participant.address_city,
            **common,
        )
    if not participant.name:
        raise structure_error(where, "organisation name is missing")
    return dict(
        kind="organisation",
        name=participant.name,
        city=participant.seat_city or participant.address_city,
        **common,
    )
