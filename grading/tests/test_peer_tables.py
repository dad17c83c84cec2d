"""Peer tables: PrairieLearn's symbolic-input cases and STACK's AlgEquiv fixtures, as data.

Each row records where it came from (repository, commit, path, row id and line). attnquiz
must give the verdict in ``attnquiz``; where that differs from the peer's verdict the row
carries the reason, and the reason is listed in grading/tests/fixtures/peer_tables.md.
"""

import json
from pathlib import Path

import pytest

from grading.core.answers import InvalidRequest, check

FIXTURES = Path(__file__).parent / "fixtures"
TABLES = {name: json.loads((FIXTURES / name).read_text()) for name in ("peer_prairielearn.json", "peer_stack_algequiv.json")}
CASES = [(name, row) for name, table in TABLES.items() for row in table["rows"]]


def _verdict(expected, answer, options) -> str:
    try:
        grade = check("symbolic", expected, answer, options)
    except InvalidRequest:
        return "bad_request"
    if grade.error:
        return "invalid"
    if grade.details.get("could_not_grade"):
        return "could_not_grade"
    return "right" if grade.correct else "wrong"


@pytest.mark.parametrize(("table", "row"), CASES, ids=[f"{name.split('.')[0]}-{row['id']}" for name, row in CASES])
def test_peer_row(table, row):
    assert _verdict(row["expected"], row["answer"], TABLES[table]["options"]) == row["attnquiz"], row


def test_every_row_names_its_source_and_every_difference_its_reason():
    listed = (FIXTURES / "peer_tables.md").read_text()
    for table in TABLES.values():
        assert set(table["source"]) == {"repo", "commit", "path"}
        for row in table["rows"]:
            assert row["id"] and isinstance(row["line"], int)
            differs = row["attnquiz"] != row["peer"]
            assert differs == bool(row.get("reason")), row
            if differs:
                assert f"`{row['id']}`" in listed, f"{row['id']} is not listed in peer_tables.md"


def test_the_peer_tables_are_substantial():
    assert len(TABLES["peer_prairielearn.json"]["rows"]) >= 100
    assert len(TABLES["peer_stack_algequiv.json"]["rows"]) >= 80
