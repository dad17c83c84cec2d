"""The one HTML sanitiser: every piece of author- or user-written text rendered as HTML
(Markdown prompts, hints, solutions, previews) passes ``sanitise_html`` last.

An allow-list built on nh3 (the Ammonia binding): only the elements Markdown produces,
only the attributes they need, URLs only with http, https or mailto (or relative), and
``rel="noopener noreferrer"`` on every link. No event attribute, no ``style``, no
``class`` or ``id`` survives. Pure Python: no Django import.
"""

from __future__ import annotations

import nh3

ALLOWED_TAGS = frozenset({
    "a", "b", "blockquote", "br", "code", "del", "em", "h1", "h2", "h3", "h4", "h5", "h6",
    "hr", "i", "img", "li", "ol", "p", "pre", "strong", "sub", "sup",
    "table", "tbody", "td", "th", "thead", "tr", "ul",
})
ALLOWED_ATTRIBUTES = {
    "a": {"href", "title"},
    "img": {"src", "alt", "title"},
    "ol": {"start"},
}
# Table cell alignment from Markdown tables, as the align attribute (never style=).
ALLOWED_ATTRIBUTE_VALUES = {
    cell: {"align": {"left", "center", "right"}} for cell in ("th", "td")
}
ALLOWED_URL_SCHEMES = frozenset({"http", "https", "mailto"})
LINK_REL = "noopener noreferrer"

_cleaner = nh3.Cleaner(
    tags=set(ALLOWED_TAGS),
    clean_content_tags={"script", "style"},
    attributes=ALLOWED_ATTRIBUTES,
    tag_attribute_values=ALLOWED_ATTRIBUTE_VALUES,
    url_schemes=set(ALLOWED_URL_SCHEMES),
    link_rel=LINK_REL,
    strip_comments=True,
)


def sanitise_html(html: str) -> str:
    """``html`` with everything outside the allow-list removed (text is kept, escaped)."""
    return _cleaner.clean(html or "")
