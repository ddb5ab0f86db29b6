"""The participants (Beteiligte) of an SI document, read in one pass for both generations.

A register extract can list hundreds of participants (one file has 363 Prokuristen). Looking
fields up per participant through lxml's Python API costs several times the XML parse; one
``Selector`` pass over the procedure data reads the few values needed in C and hands them over
as (field, value) pairs, which keeps extraction close to the cost of the parse.

The loops here run once per participant or per value read, so they keep to plain slotted
objects, lists and dicts: every object or call saved is paid back hundreds of times per file.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from lxml import etree

from orchestration.xjustiz._select import CODED, ELEMENT, MARK, TEXT, Selector
from orchestration.xjustiz.values import clean, iso_date, structure_error


@dataclass(frozen=True, slots=True)
class ParticipantNames:
    """The element names (Clark notation) of the participant block in one XJustiz generation."""

    participation: str
    role_number: str
    role_designation: str
    # Where a role is named: the text of this child of the designation (1.x), or else the
    # designation is a code with the producer's label in a comment (3.x).
    designation_text: str | None
    person: str
    organisation: str
    first_name: str
    last_name: str
    birth_date: str
    name: str
    seat: str
    address: str
    city: str


class Participant:
    """One participation as read: its roles and the values an officer record takes from it.

    ``roles`` holds ``[number, code, label, designated]`` per role: the code as the document
    gives it (3.x; None in 1.x, which names roles in words) and the label (the comment next to
    the code in 3.x, the role's name in 1.x)."""

    __slots__ = (
        "address_city", "birth_date", "first_name", "kind", "last_name", "name", "officer_fields",
        "organisation", "participation", "roles", "seat_city",
    )  # fmt: skip

    def __init__(self, participation: etree._Element | None) -> None:
        self.participation = participation
        self.roles: list[list] = []
        self.organisation: etree._Element | None = None  # kept for a Rechtsträger read from its participant
        self.kind: str | None = None  # "person" | "organisation"
        self.first_name = self.last_name = self.birth_date = self.name = None
        self.seat_city = self.address_city = None
        self.officer_fields: dict | None = None  # what every officer of this participant shares, once built


# The fields read_participants selects: slots of one record per participation.
(PARTICIPATION, ROLE_NUMBER, DESIGNATION, PERSON, ORGANISATION, FIRST_NAME, LAST_NAME, BIRTH_DATE, NAME,
 ADDRESS_CITY, SEAT_CITY, WIDTH) = range(12)  # fmt: skip
# Read in order: roles (a number, then its designation) and whether a person or an organisation
# comes first.
IN_ORDER = frozenset((ROLE_NUMBER, DESIGNATION, PERSON, ORGANISATION))


@cache
def _selector(names: ParticipantNames) -> Selector:
    if names.designation_text is None:
        designation = {names.role_designation: (DESIGNATION, CODED)}
    else:
        designation = {(names.role_designation, names.designation_text): (DESIGNATION, TEXT)}
    return Selector({
        names.participation: (PARTICIPATION, ELEMENT),
        names.role_number: (ROLE_NUMBER, TEXT),
        **designation,
        names.person: (PERSON, MARK),
        names.organisation: (ORGANISATION, ELEMENT),
        names.first_name: (FIRST_NAME, TEXT),
        names.last_name: (LAST_NAME, TEXT),
        names.birth_date: (BIRTH_DATE, TEXT),
        names.name: (NAME, TEXT),
        # A city counts below the address or the seat, not e.g. below a place of birth.
        (names.address, names.city): (ADDRESS_CITY, TEXT),
        (names.seat, names.city): (SEAT_CITY, TEXT),
    })  # fmt: skip


def read_participants(proceeding: etree._Element, names: ParticipantNames) -> list[Participant]:
    """The participants in document order.

    One record per participation, read in C: each value is the first one found in it. Only the
    participation (for error paths) and organisations (which may stand in for the company) are
    kept as elements."""
    participants = []
    coded = names.designation_text is None
    for record in _selector(names).records(proceeding, PARTICIPATION, WIDTH, IN_ORDER):
        participant = Participant(record[PARTICIPATION])
        participant.first_name, participant.last_name, participant.name = record[FIRST_NAME], record[LAST_NAME], record[NAME]
        participant.seat_city, participant.address_city = record[SEAT_CITY], record[ADDRESS_CITY]
        birth_date = record[BIRTH_DATE]
        if birth_date is not None:
            participant.birth_date = iso_date(birth_date, (_birth_date_element, participant.participation, names))
        roles = participant.roles
        for field, value in record[WIDTH]:
            if field == ROLE_NUMBER:
                roles.append([value or "", None, None, False])
            elif field == DESIGNATION:
                if roles and not roles[-1][3]:
                    role = roles[-1]
                else:
                    role = ["", None, None, True]
                    roles.append(role)
                if coded:
                    role[1], role[2] = value
                else:
                    role[2] = value
                role[3] = True
            elif participant.kind is None:
                # Person or organisation: only the participant itself, not people named inside it.
                if field == PERSON:
                    participant.kind = "person"
                else:
                    participant.kind, participant.organisation = "organisation", value
        participants.append(participant)
    return participants


def _birth_date_element(participation: etree._Element, names: ParticipantNames) -> etree._Element:
    """The birth date a participant's record holds: the first one in it that is not blank."""
    return next(e for e in participation.iter(names.birth_date) if clean(e.text) is not None)


class Representation:
    """A power of representation as read: its texts, and whether it exempts from § 181 BGB."""

    __slots__ = ("exempt_181", "texts")

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.exempt_181 = False

    @property
    def text(self) -> str | None:
        return "; ".join(self.texts) or None


# A role as the record uses it: (number, code, label, participant), code and label in the
# canonical code set. Plain tuples: one is made per role, and they are only ever unpacked.
Role = tuple[str, str, str, Participant]


def officers(
    roles: list[Role], skip: frozenset[str], representations: dict[str, Representation], liabilities: dict[str, dict]
) -> list[dict]:
    """The officer records of ``roles`` but those with a code in ``skip``, in order."""
    found = []
    for number, code, label, participant in roles:
        if code in skip:
            continue
        shared = participant.officer_fields
        if shared is None:
            shared = participant.officer_fields = _officer_fields(participant)
        officer = {**shared, "role_code": code, "role": label}
        # Fields left out take the model's default (None): fewer keys to build and validate.
        representation = representations.get(number)
        if representation is not None:
            officer["representation"] = representation.text
            officer["exempt_181"] = representation.exempt_181
        liability = liabilities.get(number)
        if liability is not None:
            officer["liability_amount"] = liability
        found.append(officer)
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
