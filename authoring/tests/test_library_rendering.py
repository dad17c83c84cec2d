"""A library exercise is seen by the staff of every course: its text must carry no live
script, whoever wrote it (the cross-course stored XSS)."""

from __future__ import annotations

from html.parser import HTMLParser

from django.urls import reverse

from .factories import PASSWORD, published_version

HOSTILE_LIBRARY_YAML = """\
slug: hostile-notes
title: Read the notes
version: 1
parameters:
  a: {generator: int_range, min: 2, max: 9}
prompt: |
  Read [the notes](javascript:void(fetch(document.cookie))) and [more][m] first.
  Or [this](JaVaScRiPt:alert(1)), [that](data:text/html,x), [it]($" onmouseover="alert(1)$).

  [m]: vbscript:msgbox(1)
parts:
  - key: double
    type: numeric
    answer: "2 * a"
    decimals: 0
    prompt: |
      <img src=x onerror=alert(1)> Double ${{a}}$.
    solution: |
      See [the worked answer](javascript:alert(2)) or [the chapter](https://example.org/ch3).
"""


class AttributeCollector(HTMLParser):
    def __init__(self):
        super().__init__()
        self.links: list[str] = []
        self.event_attributes: list[str] = []

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name in ("href", "src", "action", "formaction"):
                self.links.append(value or "")
            if name.startswith("on"):
                self.event_attributes.append(f"{tag} {name}")


def test_library_exercise_shown_to_another_courses_instructor_has_no_live_script(client, people):
    published_version(source=HOSTILE_LIBRARY_YAML)
    client.login(username=people.outsider.username, password=PASSWORD)
    url = reverse("authoring:preview", args=[people.other_course.slug, "hostile-notes", 1])
    response = client.get(url, {"seed": "3"})
    assert response.status_code == 200
    page = response.content.decode()
    collector = AttributeCollector()
    collector.feed(page)
    assert collector.event_attributes == []
    schemes = {link.split(":", 1)[0].strip().lower() for link in collector.links if ":" in link}
    assert schemes <= {"http", "https", "mailto"}, schemes
    # The links are still there, dead, and the good one still works.
    assert '<a rel="noopener noreferrer">the notes</a>' in page
    assert '<a rel="noopener noreferrer">more</a>' in page
    assert '<a href="$" rel="noopener noreferrer">it</a>' in page
    assert '<a href="https://example.org/ch3" rel="noopener noreferrer">the chapter</a>' in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page
