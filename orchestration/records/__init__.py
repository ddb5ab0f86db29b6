"""Company data: searches and companies as a person reads them, stored documents and where their
bytes live, parsed records and their revisions, register courts and their state, re-parses."""
