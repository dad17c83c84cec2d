"""Browser test: while another run of the author's source holds their one place in the
sandbox, the editor's Check, Save, Import and the version page's preview are refused (429)
and the pages try again by themselves after Retry-After, without losing what was typed or
chosen; once the other run ends, the next try goes through."""

from __future__ import annotations

import re
import time

import pytest
from django.urls import reverse

from e2e.conftest import log_in

pytestmark = pytest.mark.browser


@pytest.fixture
def author(page, watch, transactional_db):
    from authoring.tests.factories import PASSWORD, people_create

    people = people_create()
    watch.expect_console_error(r"status of 429")  # Chromium logs every 4xx reply
    log_in(page, "ines", PASSWORD)
    return people


class Refusals:
    """The replies to one path, to wait for the page's tries."""

    def __init__(self, page, path: str):
        self.page = page
        self.statuses = []
        page.on("response", lambda response: response.url.split("?")[0].endswith(path)
                and self.statuses.append(response.status))

    def wait_for(self, count: int, status: int = 429, timeout: float = 15) -> None:
        deadline = time.monotonic() + timeout
        while self.statuses.count(status) < count:
            assert time.monotonic() < deadline, self.statuses
            self.page.wait_for_timeout(100)  # Playwright delivers the page's events meanwhile


def hold(user):
    from authoring import services

    return services.source_check_start(user=user)


def release():
    from authoring.models import SourceCheckRun

    SourceCheckRun.objects.all().delete()


def test_save_is_sent_again_until_the_other_run_has_ended(page, author):
    from authoring import services
    from authoring.tests.factories import product_yaml
    from exercises.models import ExerciseVersion

    services.exercise_create(course=author.course, actor=author.instructor, source=product_yaml())
    edit = reverse("authoring:edit", args=["attn", "product", 1])
    replies = Refusals(page, edit)
    page.goto(edit)
    typed = product_yaml(points=3) + "# typed, not saved yet\n"
    hold(author.instructor)
    page.locator("#id_source").fill(typed)
    page.locator("#save-button").click()
    page.locator("#busy").wait_for()
    assert page.locator("#id_source").input_value() == typed  # shown back as typed
    replies.wait_for(2)  # the first click, and the page's first try again
    release()
    page.wait_for_url(re.compile(r"/e/product/v1/$"), timeout=15_000)
    assert replies.statuses == [200, 429, 429, 302]  # the page, Save, its first try again, the second
    assert ExerciseVersion.objects.get().source == typed


def test_import_sends_the_kept_file_again(page, author, tmp_path):
    from authoring.tests.factories import product_yaml
    from exercises.models import ExerciseVersion

    data = product_yaml(slug="from-file").replace("\n", "\r\n").encode()
    (tmp_path / "from-file.yaml").write_bytes(data)
    url = reverse("authoring:import", args=["attn"])
    replies = Refusals(page, url)
    page.goto(url)
    hold(author.instructor)
    page.locator("#id_file").set_input_files(str(tmp_path / "from-file.yaml"))
    page.get_by_role("button", name="Import").click()
    page.locator("#busy").wait_for()
    assert "Your file from-file.yaml is kept" in page.locator("#busy").inner_text()
    replies.wait_for(1)
    release()
    page.wait_for_url(re.compile(r"/e/from-file/v1/$"), timeout=15_000)
    assert ExerciseVersion.objects.get().source.encode() == data  # byte for byte, CRLF kept


def test_the_check_and_the_version_pages_preview_try_again(page, author):
    from authoring import services
    from authoring.tests.factories import product_yaml

    services.exercise_create(course=author.course, actor=author.instructor, source=product_yaml())
    preview = reverse("authoring:preview", args=["attn", "product", 1])
    previews = Refusals(page, preview)
    hold(author.instructor)
    page.goto(reverse("authoring:version", args=["attn", "product", 1]))
    page.locator("#preview-busy").wait_for()  # the page came without it ...
    previews.wait_for(1)  # ... and asked for it, refused while the other run holds the place
    release()
    page.locator("#preview h3", has_text="Seed 0").wait_for(timeout=15_000)

    check = reverse("authoring:check", args=["attn"])
    checks = Refusals(page, check)
    page.goto(reverse("authoring:edit", args=["attn", "product", 1]))
    hold(author.instructor)
    page.locator("#check-button").click()
    page.locator("#check-busy").wait_for()
    checks.wait_for(2)
    release()
    page.locator("#check-ok").wait_for(timeout=15_000)
