import pytest

from .factories import people_create


@pytest.fixture
def people(db):
    return people_create()
