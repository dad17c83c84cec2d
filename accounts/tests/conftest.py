import pytest

from authoring.tests.factories import people_create


@pytest.fixture
def people(db):
    return people_create()
