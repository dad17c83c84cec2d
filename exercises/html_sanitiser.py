"""The one HTML sanitiser: every piece of author- or user-written text rendered as HTML
(Markdown prompts, hints, solutions, previews) passes ``sanitise_html`` last.

An allow-list built on nh3 (the Ammonia binding): only the elements Markdown produces,
only the attributes they need, link URLs only with http, https or mailto (or relative),
and ``rel="noopener noreferrer"`` on every link. No event attribute, no ``style``, no
``class`` or ``id`` survives. Pure Python: no Django import.

One ``data-`` attribute survives, ``data-tex`` on ``<code>`` and nowhere else: a derivation
step's LaTeX beside the step as typed (``grading.derivation_feedback``), which the page script
gives KaTeX (strict, trust off, sizes capped) and never writes as HTML. Markdown writes raw
HTML as text, so an author cannot write one.

An image is fetched by the reader's browser the moment the page opens, signed in, with no
click: an author's ``![x](/courses/…/join?…)`` would make every student who opens the
exercise request that page of ours. So an image may only come from the site's static
files (``IMAGE_SOURCE_PREFIX``, the settings' STATIC_URL); any other source is removed and
the image becomes its alt text, as text (nothing, without one): an ``<img>`` left without a
source would show the browser's broken-image icon. (A ``data:`` image is removed too: the
pages' CSP allows images from the site only.) The editor's check warns the author of every
such image (``dropped_images`` names them). A link keeps its address: following it is the
reader's choice.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from html.parser import HTMLParser

import nh3

__all__ = ["IMAGE_SOURCE_PREFIX", "DroppedImage", "dropped_images", "image_source_allowed", "sanitise_html"]

# attnquiz.settings.STATIC_URL ("static/", served from the site's root); a test checks they agree.
IMAGE_SOURCE_PREFIX = "/static/"
# A static file's path: plain path characters only, so no query, no "%"-escape, no "\\"
# (a browser reads it as "/"), no "//"; the dot-segments "." and ".." are refused below.
_STATIC_PATH = re.compile(r"[A-Za-z0-9_.~-]+(?:/[A-Za-z0-9_.~-]+)*")

ALLOWED_TAGS = frozenset({
    "a", "b", "blockquote", "br", "code", "del", "em", "h1", "h2", "h3", "h4", "h5", "h6",
    "hr", "i", "img", "li", "ol", "p", "pre", "strong", "sub", "sup",
    "table", "tbody", "td", "th", "thead", "tr", "ul",
})
ALLOWED_ATTRIBUTES = {
    "a": {"href", "title"},
    "code": {"data-tex"},
    "img": {"src", "alt", "title"},
    "ol": {"start"},
}
# Table cell alignment from Markdown tables, as the align attribute (never style=).
ALLOWED_ATTRIBUTE_VALUES = {
    cell: {"align": {"left", "center", "right"}} for cell in ("th", "td")
}
ALLOWED_URL_SCHEMES = frozenset({"http", "https", "mailto"})
LINK_REL = "noopener noreferrer"


def image_source_allowed(source: str) -> bool:
    """Whether an ``<img>`` may load ``source``: a path under the static files that stays
    there (``/static/../courses/`` would leave it once the browser resolves the dots)."""
    if not source.startswith(IMAGE_SOURCE_PREFIX):
        return False
    path = source[len(IMAGE_SOURCE_PREFIX):]
    return bool(_STATIC_PATH.fullmatch(path)) and not {".", ".."} & set(path.split("/"))


def _only_static_images(element: str, attribute: str, value: str) -> str | None:
    if element == "img" and attribute == "src" and not image_source_allowed(value):
        return None
    return value


_cleaner = nh3.Cleaner(
    tags=set(ALLOWED_TAGS),
    clean_content_tags={"script", "style"},
    attributes=ALLOWED_ATTRIBUTES,
    attribute_filter=_only_static_images,
    tag_attribute_values=ALLOWED_ATTRIBUTE_VALUES,
    url_schemes=set(ALLOWED_URL_SCHEMES),
    link_rel=LINK_REL,
    strip_comments=True,
)


# An <img> as nh3 writes it: lower-case attribute names, every value in double quotes with
# '"', "<" and ">" escaped, so no ">" ends a tag early.
_IMAGE_TAG = re.compile(r'<img((?:\s+[a-z-]+(?:="[^"]*")?)*)\s*/?>')
_ATTRIBUTE = re.compile(r'([a-z-]+)(?:="([^"]*)")?')


def sanitise_html(text: str) -> str:
    """``text`` (HTML) with everything outside the allow-list removed (text is kept,
    escaped), and each image whose source was removed replaced by its alt text."""
    cleaned = _cleaner.clean(text or "")
    return _IMAGE_TAG.sub(_alt_text_of_sourceless, cleaned) if "<img" in cleaned else cleaned


def _alt_text_of_sourceless(match: re.Match) -> str:
    """An image left without a source as its alt text, escaped ("" without one): the browser
    would draw a broken-image icon beside it. An image with its source is kept as it is."""
    attributes = {name: value or "" for name, value in _ATTRIBUTE.findall(match.group(1))}
    if "src" in attributes:
        return match.group(0)
    return html.escape(html.unescape(attributes.get("alt", "")), quote=False)


@dataclass(frozen=True)
class DroppedImage:
    alt: str  # as the reader would see it in the image's place ("" for none)
    source: str  # as the browser would have fetched it (character references decoded)
    text_before: str = ""  # the text just before the image, since the element before it


def dropped_images(text: str) -> list[DroppedImage]:
    """The images of ``text`` (HTML, before ``sanitise_html``) whose source the sanitiser
    removes, in order: each is shown as its alt text instead. The editor's check names them."""
    reader = _ImageReader()
    reader.feed(text or "")
    reader.close()
    return [DroppedImage(attributes.get("alt") or "", attributes.get("src") or "", before)
            for attributes, before in reader.images
            if not image_source_allowed(attributes.get("src") or "")]


class _ImageReader(HTMLParser):
    """Collects the attributes of every ``<img>`` (names lower-cased, values decoded) and the
    text just before it."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.images: list[tuple[dict[str, str | None], str]] = []
        self._text = ""

    def handle_starttag(self, tag, attrs):
        if tag == "img":
            self.images.append((dict(attrs), self._text))
        self._text = ""

    handle_startendtag = handle_starttag

    def handle_endtag(self, tag):
        self._text = ""

    def handle_data(self, data):
        self._text += data
