"""The one order of people by name, for every list that sorts them so: the course
gradebook (its page and its exports), the skill grid and the course's people page.

A person is filed under their last name, or, without one, under the name the pages show
for them (the first name alone, else the username): "s018" with no names sorts among the
s's, not ahead of "Al-Farsi" as an empty last name did. Ties go by first name, then
username. The same key exists twice, as SQL (``name_ordering``) for a page cut in the
database and in Python (``name_order_key``) for rows sorted after they are computed; both
compare lower-cased text, so on the project's C.UTF-8 collation they agree.
"""

from __future__ import annotations

from django.db.models import F, Value
from django.db.models.expressions import OrderBy
from django.db.models.functions import Coalesce, Lower, NullIf, Trim


def filed_under(*, first_name: str, last_name: str, username: str) -> str:
    """The text a person is filed under (before lower-casing): see the module docstring."""
    return last_name.strip(" ") or first_name.strip(" ") or username


def name_order_key(user) -> tuple[str, str, str]:
    """The sort key of a user (anything with ``first_name``, ``last_name``, ``username``)."""
    return (
        filed_under(first_name=user.first_name, last_name=user.last_name, username=user.username).lower(),
        user.first_name.lower(),
        user.username.lower(),
    )


def name_ordering(*, prefix: str = "", descending: bool = False) -> list[OrderBy]:
    """``name_order_key`` as ``order_by`` terms, for a queryset of users (``prefix=""``) or of
    rows that lead to one (``prefix="user__"``). Add a unique last term (the id) where a page
    is cut from the result, so that two namesakes never swap places between pages."""
    first, last, username = F(f"{prefix}first_name"), F(f"{prefix}last_name"), F(f"{prefix}username")
    filed = Coalesce(NullIf(Trim(last), Value("")), NullIf(Trim(first), Value("")), username)
    terms = [Lower(filed), Lower(first), Lower(username)]
    return [term.desc() if descending else term.asc() for term in terms]
