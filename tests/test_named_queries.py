"""The files of named queries: each query named once, described, and its shared parts written once."""

import re

import pytest

from orchestration.db import queries


def test_every_query_file_loads_with_a_description_for_each_query():
    files = sorted(queries.QUERIES_DIR.glob("*.sql"))
    assert files
    for path in files:
        loaded = queries.load(path.stem)
        assert len(loaded) > 0
        for query in loaded.named.values():
            assert query.description and query.sql
            assert "{" + query.name + "}" not in query.sql


def test_a_shared_part_is_written_into_the_queries_that_name_it():
    text = """
-- name: tail
-- Returns the picked ids.
SELECT id FROM picked

-- name: pick
-- Picks one job.
-- Why it is written so: a comment kept with the SQL.
WITH picked AS (SELECT 1 AS id)
{tail}
"""
    tail, pick = queries.parse("example", text)
    assert tail.sql == "SELECT id FROM picked"
    assert (pick.name, pick.description) == ("pick", "Picks one job.")
    assert pick.sql.endswith("WITH picked AS (SELECT 1 AS id)\nSELECT id FROM picked")
    assert pick.sql.startswith("-- Why it is written so")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("SELECT 1\n-- name: a\n-- One.\nSELECT 1", "before the first"),
        ("-- name: a\nSELECT 1", "lacks its one-line description"),
        ("-- name: a\n-- One.\nSELECT 1\n-- name: a\n-- Again.\nSELECT 2", "defined twice"),
        ("-- name: a\n-- One.\n", "has no SQL"),
        ("-- name: a\n-- One.\nSELECT 1 {b}", re.escape("names {b}, which is not a query here")),
        ("-- name: a\n-- One.\nSELECT {a}", "includes itself"),
    ],
)
def test_a_file_that_breaks_the_layout_is_refused_with_the_reason(text, message):
    with pytest.raises(queries.QueryFileError, match=message):
        queries.parse("example", text)


def test_an_unknown_name_says_which_file_it_was_looked_up_in():
    with pytest.raises(KeyError, match=re.escape("no query 'no_such_query' in queue.sql")):
        queries.load("queue")["no_such_query"]
