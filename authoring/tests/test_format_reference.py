"""The exercise-format reference page: docs/exercise-format.md rendered for a course's staff,
sanitised, rendered once per file version, linked from the editor and the import page."""

import os
import re

import pytest
from django.urls import reverse

from authoring import format_reference as reference_module
from authoring import services

from .factories import PASSWORD, product_yaml

ARTICLE = re.compile(
    r'<article class="prompt" id="format-reference" data-math>(.*?)</article>', re.DOTALL
)
HOSTILE_DOC = """\
# Hostile

## Fields

<script>alert("doc-script")</script>
[click](javascript:alert(1)) <img src="x.png" onerror="alert('doc-img')">

| field | meaning |
| --- | --- |
| `value_feedback` | known wrong values |

```yaml
prompt: <b>shown as code</b>
```
"""


def page_url(people):
    return reverse("authoring:format", args=[people.course.slug])


def signed_in(client, user):
    client.login(username=user.username, password=PASSWORD)
    return client


def article(response) -> str:
    match = ARTICLE.search(response.content.decode())
    assert match, "the page has no reference article"
    return match.group(1)


@pytest.fixture
def doc_dir(settings, tmp_path):
    """BASE_DIR pointed at a directory whose docs/exercise-format.md the test writes."""
    settings.BASE_DIR = tmp_path
    (tmp_path / "docs").mkdir()
    return tmp_path / "docs" / "exercise-format.md"


def test_the_page_renders_the_repository_doc_for_an_instructor(client, people):
    response = signed_in(client, people.instructor).get(page_url(people))
    assert response.status_code == 200
    body = article(response)
    assert '<h1 id="writing-an-exercise">Writing an exercise</h1>' in body
    assert '<h2 id="parts">Parts</h2>' in body
    # Tables are tables, with the option names as code in their cells.
    assert "<th>generator</th>" in body
    assert re.search(r"<td>[^\n]*<code>value_feedback</code>[^\n]*</td>", body)
    # Fenced blocks are code blocks; code spans are escaped once, not twice.
    assert "<pre><code>skills: [scaling]            # default for the parts below\n" in body
    assert "<code>/author/&lt;course&gt;/new/</code>" in body
    assert "&amp;lt;" not in body
    # The doc's own link to a section lands on that section's heading.
    assert '<a href="#skills" rel="noopener noreferrer">Skills</a>' in body
    assert '<h2 id="skills">Skills</h2>' in body


def test_the_contents_list_the_sections_with_their_subsections(client, people):
    page = signed_in(client, people.instructor).get(page_url(people)).content.decode()
    start = page.index('id="format-contents"')
    contents = page[start:page.index("</nav>", start)]
    assert '<li><a href="#parts">Parts</a>' in contents
    assert '<a href="#variant-fairness">Variant fairness</a>' in contents
    fairness = contents[contents.index("#variant-fairness"):]
    assert '<ul><li><a href="#before-anyone-answers-the-pre-flight-spread">' in fairness
    assert "Writing an exercise" not in contents  # the title is not a section


def test_the_rendered_doc_contains_no_script(client, people):
    body = article(signed_in(client, people.instructor).get(page_url(people)))
    assert "<script" not in body.lower()
    assert not re.search(r"(href|src)=\"\s*javascript", body, re.IGNORECASE)
    assert not re.search(r"<[^>]*\son\w+=", body)  # no event attribute in any tag


def test_a_teaching_assistant_may_read_it(client, people):
    # Reading the reference is a VIEW action, like the live source check TAs may run.
    assert signed_in(client, people.ta).get(page_url(people)).status_code == 200


@pytest.mark.parametrize("who,status", [("student", 403), ("outsider", 404)])
def test_refused_to_students_and_other_courses_staff(client, people, who, status):
    response = signed_in(client, getattr(people, who)).get(page_url(people))
    assert response.status_code == status
    assert b"format-reference" not in response.content


def test_anonymous_visitors_are_sent_to_log_in(client, people):
    response = client.get(page_url(people))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


def test_only_get_is_allowed(client, people):
    assert signed_in(client, people.instructor).post(page_url(people)).status_code == 405


def test_a_missing_doc_is_a_clear_404(client, people, doc_dir):
    response = signed_in(client, people.instructor).get(page_url(people))
    assert response.status_code == 404
    page = response.content.decode()
    assert "The format reference is not installed on this server" in page
    assert "docs/exercise-format.md is missing" in page
    assert 'id="format-reference"' not in page


def test_the_doc_goes_through_the_one_sanitiser(client, people, doc_dir):
    doc_dir.write_text(HOSTILE_DOC, encoding="utf-8")
    page = signed_in(client, people.instructor).get(page_url(people)).content.decode()
    body = ARTICLE.search(page).group(1)
    assert "doc-script" not in page and "doc-img" not in page and "javascript" not in page
    assert '<p><a rel="noopener noreferrer">click</a> </p>' in body  # an image without its source is its alt text
    assert "<td><code>value_feedback</code></td>" in body
    assert "<pre><code>prompt: &lt;b&gt;shown as code&lt;/b&gt;\n</code></pre>" in body


def test_the_doc_is_rendered_once_per_version_of_the_file(client, people, doc_dir, monkeypatch):
    renders = []
    real = reference_module._markdown_to_html
    monkeypatch.setattr(
        reference_module, "_markdown_to_html", lambda text: renders.append(text) or real(text)
    )
    doc_dir.write_text("# One\n\n## First\n", encoding="utf-8")
    signed_in(client, people.instructor)
    assert '<h2 id="first">First</h2>' in article(client.get(page_url(people)))
    assert '<h2 id="first">First</h2>' in article(client.get(page_url(people)))
    assert len(renders) == 1
    doc_dir.write_text("# One\n\n## Second\n", encoding="utf-8")
    stat = doc_dir.stat()
    os.utime(doc_dir, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    assert '<h2 id="second">Second</h2>' in article(client.get(page_url(people)))
    assert len(renders) == 2


LINK = re.compile(
    r'<a href="([^"]+)" target="_blank" rel="noopener" id="format-reference-link">'
    r"Format reference</a>"
)


def test_the_new_exercise_editor_links_to_the_reference(client, people):
    url = reverse("authoring:new", args=[people.course.slug])
    page = signed_in(client, people.instructor).get(url)
    assert LINK.findall(page.content.decode()) == [page_url(people)]


def test_the_edit_page_links_to_the_reference(client, people):
    draft = services.exercise_create(
        course=people.course, actor=people.instructor, source=product_yaml()
    )
    url = reverse("authoring:edit", args=[people.course.slug, draft.exercise.slug, draft.number])
    page = signed_in(client, people.instructor).get(url)
    assert page.status_code == 200
    assert LINK.findall(page.content.decode()) == [page_url(people)]


def test_the_import_page_links_to_the_reference(client, people):
    url = reverse("authoring:import", args=[people.course.slug])
    page = signed_in(client, people.instructor).get(url)
    assert LINK.findall(page.content.decode()) == [page_url(people)]
