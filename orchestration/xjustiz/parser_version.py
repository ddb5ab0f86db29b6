"""The version of the XJustiz parser. Bump it when parsed output changes: the parsed asset's
code_version follows it, and new xml_parsing jobs carry it."""

PARSER_VERSION = "1.1.0"
