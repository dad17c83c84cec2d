"""What a paged list says of the page shown: "Showing 51–100 of 283"."""

from __future__ import annotations


class ShownRange:
    """``first_shown`` and ``last_shown`` (1-based; 0 on an empty page) of a page with
    ``rows``, its ``number`` (1-based) and ``per_page``: mixed into the page dataclasses of
    the course gradebook and the people page."""

    rows: list
    number: int
    per_page: int

    @property
    def first_shown(self) -> int:
        return (self.number - 1) * self.per_page + 1 if self.rows else 0

    @property
    def last_shown(self) -> int:
        return self.first_shown + len(self.rows) - 1 if self.rows else 0
