"""Every run of an author's source in the sandbox holds the person's one place for it, as the
editor's Check does: Save (and Create draft), Import, the previews, and the API's push. While
another run of theirs holds it, the request answers 429 with Retry-After, runs nothing,
stores nothing, and gives the author back what they sent (the typed text, the file)."""

from __future__ import annotations

import base64
import html
import re
import threading

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test import Client
from django.urls import reverse

from authoring import selectors, services
from authoring.models import ExerciseEvent, SourceCheckRun
from authoring.tests.factories import PASSWORD, product_yaml
from exercises.models import Exercise, ExerciseVersion, VersionStatus

RUNNING = "A check of yours is still running, so this {action} was not started: one check, save, " \
          "import or preview at a time per person, and each stops after at most 10 s."
WAIT = 20  # seconds any step may take before the test fails instead of hanging


def logged_in(user) -> Client:
    client = Client()
    assert client.login(username=user.username, password=PASSWORD)
    return client


@pytest.fixture
def instructor(people):
    return logged_in(people.instructor)


@pytest.fixture
def sandbox_runs(monkeypatch):
    """Every run of a source in the sandbox (checks and previews), recorded, then run."""
    runs = []
    check, preview = selectors.source_check, selectors.version_preview_limited
    monkeypatch.setattr(selectors, "source_check", lambda **kw: runs.append("check") or check(**kw))
    monkeypatch.setattr(selectors, "version_preview_limited", lambda **kw: runs.append("preview") or preview(**kw))
    return runs


@pytest.fixture
def held(people):
    """The instructor's one place, taken by a run of theirs still under way elsewhere."""
    return services.source_check_start(user=people.instructor)


@pytest.fixture
def draft(people):
    return services.exercise_create(course=people.course, actor=people.instructor, source=product_yaml())


def textarea(page: str, element_id: str) -> str:
    """What a <textarea> shows, unescaped (Django writes a newline after the opening tag)."""
    found = re.search(rf'<textarea[^>]*id="{element_id}"[^>]*>\n(.*?)</textarea>', page, re.S)
    assert found, f"no textarea #{element_id}"
    return html.unescape(found.group(1))


def busy_notice(page: str) -> str:
    found = re.search(r'<p class="bad" role="alert" id="[a-z-]*busy"([^>]*)>(.*?)</p>', page, re.S)
    assert found, "no busy notice"
    return found.group(1).strip() + " | " + " ".join(re.sub(r"<[^>]+>", "", found.group(2)).split())


def assert_refused_busy(response) -> str:
    assert response.status_code == 429
    assert response["Retry-After"] == "2"
    return response.content.decode()


def test_create_draft_while_a_run_is_held_is_429_keeps_the_text_and_stores_nothing(
    instructor, people, held, sandbox_runs
):
    typed = product_yaml(slug="typed-here") + "# an unsaved line — with <b>markup</b>\n"
    page = assert_refused_busy(instructor.post(reverse("authoring:new", args=["attn"]), {"source": typed}))
    assert textarea(page, "id_source") == typed
    assert busy_notice(page) == (
        'data-resend-after="2" data-resend="#editor-form"\n   data-resend-give-up="It is still running: press '
        'Create draft again in a moment." | ' + RUNNING.format(action="save") +
        " Your text below is kept, not saved yet: it is saved again in a moment."
    )
    assert (Exercise.objects.count(), sandbox_runs) == (0, [])
    assert list(SourceCheckRun.objects.values_list("pk", flat=True)) == [held.pk]  # the other run's, kept

    SourceCheckRun.objects.all().delete()  # the other run ends: the page's resend creates it
    again = instructor.post(reverse("authoring:new", args=["attn"]), {"source": typed})
    assert again["Location"] == reverse("authoring:version", args=["attn", "typed-here", 1])
    assert ExerciseVersion.objects.get().source == typed
    assert (sandbox_runs, SourceCheckRun.objects.count()) == (["check"], 0)


def test_save_of_a_draft_while_a_run_is_held_is_429_and_leaves_the_draft(instructor, people, draft, sandbox_runs):
    services.source_check_start(user=people.instructor)
    events = ExerciseEvent.objects.count()
    typed = product_yaml(points=3)
    url = reverse("authoring:edit", args=["attn", "product", 1])
    page = assert_refused_busy(instructor.post(url, {"source": typed}))
    assert textarea(page, "id_source") == typed
    assert 'data-resend="#editor-form"' in page and "press Save again in a moment" in page
    draft.refresh_from_db()
    assert (draft.source, ExerciseEvent.objects.count(), sandbox_runs) == (product_yaml(), events, [])


def test_save_of_a_published_version_while_a_run_is_held_starts_no_new_version(instructor, people, draft, held):
    ExerciseVersion.objects.filter(pk=draft.pk).update(status=VersionStatus.PUBLISHED)
    typed = product_yaml(points=2)
    page = assert_refused_busy(instructor.post(reverse("authoring:edit", args=["attn", "product", 1]), {"source": typed}))
    assert textarea(page, "id_source") == typed
    assert list(ExerciseVersion.objects.values_list("number", "status")) == [(1, VersionStatus.PUBLISHED)]


def test_import_while_a_run_is_held_is_429_and_keeps_the_file_byte_for_byte(instructor, people, held, sandbox_runs):
    data = ("# Zoë's file, CRLF and a tab\t\r\n" + product_yaml(slug="imported").replace("\n", "\r\n")).encode()
    upload = SimpleUploadedFile("mine.yaml", data, content_type="application/yaml")
    url = reverse("authoring:import", args=["attn"])
    page = assert_refused_busy(instructor.post(url, {"file": upload}))
    assert busy_notice(page) == (
        'data-resend-after="2" data-resend="#import-form"\n   data-resend-give-up="It is still running: press '
        'Import again in a moment (the file is kept)." | ' + RUNNING.format(action="import") +
        " Your file mine.yaml is kept, not imported yet: it is imported again in a moment."
    )
    kept = re.search(r'<input type="hidden" name="kept" value="([^"]*)"', page).group(1)
    assert base64.b64decode(kept) == data
    assert '<input type="hidden" name="kept_name" value="mine.yaml"' in page
    assert textarea(page, "kept-source") == data.decode()  # and shown
    assert (Exercise.objects.count(), sandbox_runs) == (0, [])

    # The page sends the kept file again (no file chosen): stored exactly as uploaded.
    held.delete()
    again = instructor.post(url, {"kept": kept, "kept_name": "mine.yaml"})
    assert again.status_code == 302
    assert ExerciseVersion.objects.get().source.encode() == data
    assert sandbox_runs == ["check"]  # tried once, not once more to store it


@pytest.mark.parametrize(("fields", "message"), [
    ({"kept_name": ""}, "Choose an exercise file to import."),
    ({"kept": "not base64!"}, "The file kept from the last try cannot be read; choose it again."),
])
def test_an_import_with_no_file_or_a_broken_kept_one_is_a_clear_422(instructor, people, fields, message):
    response = instructor.post(reverse("authoring:import", args=["attn"]), fields)
    assert response.status_code == 422
    assert message in response.content.decode()
    assert (Exercise.objects.count(), SourceCheckRun.objects.count()) == (0, 0)


@pytest.mark.parametrize("htmx", [True, False], ids=["fragment", "page"])
def test_a_preview_while_a_run_is_held_is_429_and_draws_nothing(instructor, people, draft, held, sandbox_runs, htmx):
    url = reverse("authoring:preview", args=["attn", "product", 1]) + "?seed=7"
    headers = {"HX-Request": "true"} if htmx else {}
    page = assert_refused_busy(instructor.get(url, headers=headers))
    assert busy_notice(page) == (
        'data-resend-after="2" data-resend="reload"\n   data-resend-give-up="It is still running: ask for the '
        'preview again in a moment." | ' + RUNNING.format(action="preview") + " The preview is drawn in a moment."
    )
    assert ("<html" in page) is not htmx
    assert sandbox_runs == []
    held.delete()
    assert instructor.get(url, headers=headers).status_code == 200
    assert (sandbox_runs, SourceCheckRun.objects.count()) == (["preview"], 0)


def test_a_version_page_while_a_run_is_held_comes_without_its_preview_and_asks_for_it(
    instructor, people, draft, held, sandbox_runs
):
    response = instructor.get(reverse("authoring:version", args=["attn", "product", 1]))
    assert response.status_code == 200  # the page itself runs nothing more
    page = response.content.decode()
    assert 'data-resend="#preview-form"' in page and 'id="preview-form" data-busy-retry="submit"' in page
    assert "Seed 0" not in page and sandbox_runs == []
    held.delete()
    assert "<h3>Seed 0</h3>" in instructor.get(reverse("authoring:version", args=["attn", "product", 1])).content.decode()
    assert (sandbox_runs, SourceCheckRun.objects.count()) == (["preview"], 0)


def test_the_services_take_the_place_themselves(people, draft, held, sandbox_runs):
    for store in (
        lambda: services.exercise_create(course=people.course, actor=people.instructor, source=product_yaml(slug="x")),
        lambda: services.version_save(version=draft, actor=people.instructor, source=product_yaml(points=5)),
        lambda: services.exercise_import(course=people.course, actor=people.instructor, data=product_yaml().encode()),
    ):
        with pytest.raises(services.AuthoringRefused) as refused:
            store()
        assert refused.value.code == "busy"
    assert (ExerciseVersion.objects.count(), sandbox_runs) == (1, [])
    # Another person's runs are their own.
    services.exercise_create(course=people.course, actor=people.reviewer, source=product_yaml(slug="rita"))
    assert list(SourceCheckRun.objects.values_list("user_id", flat=True)) == [people.instructor.pk]


def test_the_place_is_given_back_when_the_source_is_invalid(instructor, people):
    response = instructor.post(reverse("authoring:new", args=["attn"]), {"source": "slug: x\n"})
    assert response.status_code == 422
    assert SourceCheckRun.objects.count() == 0


def test_the_editor_and_the_preview_pages_load_the_retry_script(instructor, people, draft):
    script = "/static/attnquiz/authoring_check.js"
    for name, args in (("new", ["attn"]), ("import", ["attn"]), ("edit", ["attn", "product", 1]),
                       ("version", ["attn", "product", 1]), ("preview", ["attn", "product", 1])):
        assert script in instructor.get(reverse(f"authoring:{name}", args=args)).content.decode(), name


class HeldCheck:
    """``selectors.source_check`` that stays running until the test lets it end."""

    def __init__(self):
        self.started = threading.Event()
        self.release = threading.Event()

    def __call__(self, *, source, seed=0):
        self.started.set()
        assert self.release.wait(WAIT)
        return {"errors": [], "failure": None, "problems": [], "preview": None}


@pytest.mark.django_db(transaction=True)
def test_a_check_sent_while_a_save_runs_is_refused_and_the_save_stores(people, monkeypatch):
    """The Save's sandbox run holds the place where the person's other requests see it (not
    inside the transaction that stores the edit)."""
    held = HeldCheck()
    monkeypatch.setattr(selectors, "source_check", held)
    services.source_check_finish(run=services.source_check_start(user=people.instructor))
    replies = {}

    def save():
        try:
            replies["save"] = logged_in(people.instructor).post(
                reverse("authoring:new", args=["attn"]), {"source": product_yaml(slug="saved")}
            )
        finally:
            connection.close()

    saving = threading.Thread(target=save)
    saving.start()
    assert held.started.wait(WAIT)
    check = logged_in(people.instructor).post(reverse("authoring:check", args=["attn"]), {"source": product_yaml()})
    held.release.set()
    saving.join(WAIT)
    assert (check.status_code, check["Retry-After"]) == (429, "2")
    assert replies["save"].status_code == 302
    assert list(Exercise.objects.values_list("slug", flat=True)) == ["saved"]
    assert SourceCheckRun.objects.count() == 0
