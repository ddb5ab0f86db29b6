"""The participants (Beteiligte) of an SI document, read in one pass for both generations.

A register extract can list hundreds of participants (one file has 363 Prokuristen). Looking
fields up per participant costs a Python object for every element touched, several times the
XML parse; one ``iterdescendants()`` over the procedure data, filtered by lxml in C to the few
element names needed, visits only those and keeps extraction close to the cost of the parse.

The loops here run once per participant or per element visited, so they keep to plain slotted
objects, lists and dicts: every object or call saved is paid back hundreds of times per file.
"""

from __future__ import annotations

from dataclasses import dataclass

from lxml import etree

from orchestration.xjustiz.xml_values import clean, code_and_label, iso_date, structure_error


@dataclass(frozen=True, slots=True, kw_only=True)
class ParticipantNames:
    """The element names (Clark notation) of the participant block in one XJustiz generation."""

    participation: str
    role_number: str
    role_designation: str
    # Where a role is named: the text of this child of the designation (1.x), or else the
    # designation is a code with the producer's label in a comment (3.x).
    designation_text: str | None = None
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
        "address_city",
        "birth_date",
        "first_name",
        "kind",
        "last_name",
        "name",
        "officer_fields",
        "organisation",
        "participation",
        "roles",
        "seat_city",
    )
    # Set together in __init__, so declared here for their types.
    first_name: str | None
    last_name: str | None
    birth_date: str | None
    name: str | None
    seat_city: str | None
    address_city: str | None

    def __init__(self, participation: etree._Element) -> None:
        self.participation = participation
        self.roles: list[list] = []
        self.organisation: etree._Element | None = None  # kept for a Rechtsträger read from its participant
        self.kind: str | None = None  # "person" | "organisation"
        self.first_name = self.last_name = self.birth_date = self.name = None
        self.seat_city = self.address_city = None
        self.officer_fields: dict | None = None  # what every officer of this participant shares, once built


def read_participants(proceeding: etree._Element, names: ParticipantNames) -> list[Participant]:
    """The participants in document order.

    One pass over the elements named in ``names``; each value is the first one found in its
    participation that is not blank. Only the participation (for error paths) and organisations
    (which may stand in for the company) are kept as elements."""
    participants: list[Participant] = []
    current: Participant | None = None  # None before the first participation: nothing counts there
    # Local names: the comparisons below run for every element visited.
    participation, role_number, role_designation = names.participation, names.role_number, names.role_designation
    first_name, last_name, birth_date, name, city = (
        names.first_name,
        names.last_name,
        names.birth_date,
        names.name,
        names.city,
    )
    address, seat, person, organisation = names.address, names.seat, names.person, names.organisation
    # 3.x codes a role (code and label in a comment); 1.x names it in a child of the designation.
    coded = names.designation_text is None
    designation = role_designation if names.designation_text is None else names.designation_text
    for element in proceeding.iterdescendants(
        participation, role_number, designation, person, organisation, first_name, last_name, birth_date, name, city
    ):
        tag = element.tag
        if tag == participation:
            current = Participant(element)
            participants.append(current)
        elif current is None:
            continue
        elif tag == role_number:
            current.roles.append([clean(element.text) or "", None, None, False])
        elif tag == designation:
            if coded:
                code, label = code_and_label(element)
            elif (parent := element.getparent()) is not None and parent.tag == role_designation:
                code, label = None, clean(element.text)  # 1.x names a role without a code
            else:
                continue  # a 1.x ``content`` of something else
            roles = current.roles
            if roles and not roles[-1][3]:
                role = roles[-1]  # the designation of the number just read
            else:
                role = ["", None, None, True]
                roles.append(role)
            role[1], role[2], role[3] = code, label, True
        elif tag == first_name:
            if current.first_name is None:
                current.first_name = clean(element.text)
        elif tag == last_name:
            if current.last_name is None:
                current.last_name = clean(element.text)
        elif tag == birth_date:
            if current.birth_date is None:
                current.birth_date = iso_date(element.text, element)
        elif tag == city:
            # A city counts below the address or the seat, not e.g. below a place of birth.
            parent = element.getparent()
            assert parent is not None  # a descendant has one
            container = parent.tag
            if container == address:
                if current.address_city is None:
                    current.address_city = clean(element.text)
            elif container == seat and current.seat_city is None:
                current.seat_city = clean(element.text)
        elif tag == name:
            if current.name is None:
                current.name = clean(element.text)
        elif current.kind is None:
            # Person or organisation: only the participant itself, not people named inside it.
            if tag == person:
                current.kind = "person"
            else:
                current.kind, current.organisation = "organisation", element
    return participants


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
        name: str | None
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
