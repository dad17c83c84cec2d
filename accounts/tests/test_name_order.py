"""The one order of people by name (accounts.name_order): filed under the last name, or
the shown name without one; the same in SQL and in Python; and the lists that use it (the
course gradebook's page and exports, the skill grid, the people page) all follow it."""

from __future__ import annotations

from types import SimpleNamespace as NS

import pytest
from django.contrib.auth import get_user_model

from accounts.name_order import filed_under, name_order_key, name_ordering
from courses.models import Course, Enrolment, Role

# (username, first name, last name), in the order by name
PEOPLE = [
    ("zadams", "Zoe", "Adams"),
    ("afarsi", "Amal", "Al-Farsi"),
    ("balfarsi", "Bilal", "al-farsi"),  # the same name in other case: first name decides
    ("grace", "Grace", "Hopper"),
    ("plato", "Plato", ""),             # no last name: filed under the first name, shown alone
    ("s018", "", ""),                   # no names: filed under the username, shown alone
    ("s019", "", ""),
    ("  ", "", "  Stone"),              # spaces around a name do not count
    ("sue", "Sue", "   "),              # a last name of spaces is no last name
    ("ullman", "", "Ullman"),
]


@pytest.mark.parametrize(
    "first, last, username, filed",
    [
        ("Amal", "Al-Farsi", "afarsi", "Al-Farsi"),
        ("Plato", "", "plato", "Plato"),
        ("", "", "s018", "s018"),
        ("", "Ullman", "ullman", "Ullman"),
        ("Sue", "   ", "sue", "Sue"),
        ("   ", "  ", "x", "x"),
    ],
)
def test_filed_under(first, last, username, filed):
    assert filed_under(first_name=first, last_name=last, username=username) == filed


def test_the_python_key_puts_people_without_a_last_name_among_the_others():
    shuffled = [NS(username=u, first_name=f, last_name=l) for u, f, l in reversed(PEOPLE)]
    assert [p.username for p in sorted(shuffled, key=name_order_key)] == [u for u, _, _ in PEOPLE]


def test_sql_and_python_agree(db):
    User = get_user_model()
    users = User.objects.bulk_create(
        [User(username=u or "blank", first_name=f, last_name=l, password="!") for u, f, l in reversed(PEOPLE)]
    )
    in_sql = list(User.objects.filter(pk__in=[u.pk for u in users]).order_by(*name_ordering(), "pk"))
    assert in_sql == sorted(users, key=lambda user: (name_order_key(user), user.pk))
    backwards = list(User.objects.filter(pk__in=[u.pk for u in users]).order_by(*name_ordering(descending=True)))
    assert backwards == list(reversed(in_sql))


@pytest.fixture
def course_of_names(db):
    """A course whose students are PEOPLE (the blank username as "st")."""
    User = get_user_model()
    course = Course.objects.create(slug="names", title="Names")
    users = User.objects.bulk_create(
        [User(username=u.strip() or "st", first_name=f, last_name=l, password="!") for u, f, l in reversed(PEOPLE)]
    )
    Enrolment.objects.bulk_create([Enrolment(course=course, user=user, role=Role.STUDENT) for user in users])
    return course


BY_NAME = [u.strip() or "st" for u, _, _ in PEOPLE]


def test_the_course_gradebook_page_and_its_exports_sort_by_it(course_of_names):
    from instructor import selectors_gradebook

    page = selectors_gradebook.course_gradebook_page(course=course_of_names, sort="name")
    assert [row.student.username for row in page.rows] == BY_NAME
    table = selectors_gradebook.course_gradebook_table(book=page.book)
    assert [line[0] for line in table[1:]] == BY_NAME


def test_the_skill_grid_sorts_by_it(course_of_names):
    from mastery import selectors as mastery_selectors

    columns = mastery_selectors.grid_columns(course=course_of_names)
    _, rows = mastery_selectors.grid_page(course=course_of_names, columns=columns, page_number=1)
    assert [row.username for row in rows] == BY_NAME
    query = mastery_selectors.GridQuery(sort="name", descending=True)
    _, rows = mastery_selectors.grid_page(course=course_of_names, columns=columns, page_number=1, query=query)
    assert [row.username for row in rows] == list(reversed(BY_NAME))


def test_the_people_page_sorts_by_it(course_of_names):
    from courses.selectors_people import PeopleQuery, people_page

    page = people_page(course=course_of_names, query=PeopleQuery(sort="name"))
    assert [row.user.username for row in page.rows] == BY_NAME
