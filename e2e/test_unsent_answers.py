"""In the browser: answers typed and not sent.

A typed answer is kept in the tab (sessionStorage, never sent) until it is sent and stored:
a reload puts it back and says it is not sent yet. From a minute before the end (and again
at 10 s) the clock names the parts with unsent answers; once the time has run out the page
lists them, as text, and sends none. An answer sent and stored is not sent again by a second
click. A part shows each feedback message once, and every text tied to the deadline moves
with an extension."""

from __future__ import annotations

import math
import re
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone
from playwright.sync_api import expect

from e2e.conftest import log_in
from exercises.models import Variant
from grading.models import Submission

pytestmark = pytest.mark.browser

CAUSAL = "causal-mask-weights"  # (a) masked_weights: a 1 × 4 grid; (b) visible_keys, (c) unmasked_first: numbers
RESTORED = "Restored what you typed before the reload; it is not sent yet."
SAME = "You already sent this answer; change it to try again."
DRAFT_KEYS = """() => Object.keys(sessionStorage).filter((key) => key.startsWith("attnquiz.draft:")).sort()"""
LEAVING_ASKS = """() => { const e = new Event("beforeunload", {cancelable: true});
  window.dispatchEvent(e); return e.defaultPrevented; }"""


def item_for(demo_site, slug: str = CAUSAL):
    return demo_site.assignment.items.get(exercise_version__exercise__slug=slug)


def fill_cells(page, part: str, values) -> None:
    cells = page.locator(f"#grid-{part} input")
    for index, value in enumerate(values):
        cells.nth(index).fill(value)


def cell_values(page, part: str) -> list[str]:
    cells = page.locator(f"#grid-{part} input")
    return [cells.nth(index).input_value() for index in range(cells.count())]


def send(page, part: str, attempt: int):
    page.locator(f"#form-{part} button[type=submit]").click()
    result = page.locator(f"#result-{part} [data-result=graded]").filter(has_text=f"attempt {attempt}")
    result.wait_for()
    return result


def test_a_typed_answer_comes_back_after_a_reload_until_it_is_sent(student_page, demo_site):
    page = student_page
    page.on("dialog", lambda dialog: dialog.accept())  # "leave the page?": yes
    item = item_for(demo_site)
    page.goto(reverse("exercise", args=[item.pk]))
    variant = Variant.objects.get(assignment_item=item, student__username="student1")
    fill_cells(page, "masked_weights", ["1", "2", "3"])
    page.locator("#answer-visible_keys").fill("7")
    assert page.evaluate(DRAFT_KEYS) == [
        f"attnquiz.draft:{variant.pk}:masked_weights", f"attnquiz.draft:{variant.pk}:visible_keys",
    ]

    page.reload()
    assert cell_values(page, "masked_weights") == ["1", "2", "3", ""]
    expect(page.locator("#answer-visible_keys")).to_have_value("7")
    expect(page.locator("#form-masked_weights [data-draft-note]")).to_have_text(RESTORED)
    expect(page.locator("#form-visible_keys [data-draft-note]")).to_have_text(RESTORED)
    expect(page.locator("#form-unmasked_first [data-draft-note]")).to_be_hidden()
    expect(page.locator("#preview-visible_keys .katex")).to_have_count(1)  # read again, as typed
    assert page.evaluate(LEAVING_ASKS) is True
    assert not Submission.objects.filter(variant=variant).exists()  # a draft is never sent

    send(page, "visible_keys", attempt=1)  # stored: its draft and its note go
    expect(page.locator("#form-visible_keys [data-draft-note]")).to_be_hidden()
    assert page.evaluate(DRAFT_KEYS) == [f"attnquiz.draft:{variant.pk}:masked_weights"]
    page.reload()
    expect(page.locator("#answer-visible_keys")).to_have_value("7")  # the stored answer, no note
    expect(page.locator("#form-visible_keys [data-draft-note]")).to_be_hidden()
    assert cell_values(page, "masked_weights") == ["1", "2", "3", ""]
    expect(page.locator("#form-masked_weights [data-draft-note]")).to_have_text(RESTORED)

    # Typed back to what the page holds from the server: nothing unsent, no draft.
    fill_cells(page, "masked_weights", ["", "", ""])
    assert page.evaluate(DRAFT_KEYS) == []
    assert page.evaluate(LEAVING_ASKS) is False
    page.reload()
    assert cell_values(page, "masked_weights") == ["", "", "", ""]

    # Signing out leaves no draft behind in the tab (a shared computer).
    page.locator("#answer-unmasked_first").fill("0.5")
    assert len(page.evaluate(DRAFT_KEYS)) == 1
    page.get_by_role("button", name="Log out").click()
    page.wait_for_load_state()
    assert page.evaluate(DRAFT_KEYS) == []


DRAFT_OWNERS = """() => Object.keys(sessionStorage).filter((key) => key.startsWith("attnquiz.draft:"))
  .sort().map((key) => [key, JSON.parse(sessionStorage.getItem(key)).owner])"""


def test_a_draft_is_kept_for_its_account_only_after_the_session_ends(student_page, demo_site):
    """The session ends without "Log out" (it expired, another tab signed out): the same
    student signing in again gets the draft back; another account signing in in the tab
    removes it."""
    page = student_page
    page.on("dialog", lambda dialog: dialog.accept())  # "leave the page?": yes
    item = item_for(demo_site)
    exercise = reverse("exercise", args=[item.pk])
    page.goto(exercise)
    variant = Variant.objects.get(assignment_item=item, student__username="student1")
    student1 = variant.student
    assert page.evaluate("() => document.body.dataset.draftOwner") == str(student1.pk)
    page.locator("#answer-visible_keys").fill("7")
    assert page.evaluate(DRAFT_OWNERS) == [[f"attnquiz.draft:{variant.pk}:visible_keys", str(student1.pk)]]
    # The live preview of what was typed has come back before the cookies go: sent without
    # them it would be refused (403), as it should be.
    expect(page.locator("#preview-visible_keys .katex")).to_have_count(1)

    page.context.clear_cookies()  # the session is gone; the tab stays
    page.goto(exercise)
    assert re.search(r"/login/", page.url)
    assert page.evaluate("() => document.body.dataset.draftOwner") is None  # no account: kept
    assert page.evaluate(DRAFT_OWNERS) == [[f"attnquiz.draft:{variant.pk}:visible_keys", str(student1.pk)]]
    log_in(page, "student1")
    page.goto(exercise)
    expect(page.locator("#answer-visible_keys")).to_have_value("7")
    expect(page.locator("#form-visible_keys [data-draft-note]")).to_have_text(RESTORED)
    expect(page.locator("#preview-visible_keys .katex")).to_have_count(1)  # the restored draft's preview

    page.context.clear_cookies()
    page.evaluate("""() => sessionStorage.setItem("attnquiz.draft:0:old", '{"fields": [["answer", "1"]]}')""")
    log_in(page, "student2")  # the same tab, another account
    assert page.evaluate(DRAFT_KEYS) == []
    page.goto(exercise)
    other = Variant.objects.get(assignment_item=item, student__username="student2")
    expect(page.locator("#answer-visible_keys")).to_have_value("")
    expect(page.locator("#form-visible_keys [data-draft-note]")).to_be_hidden()
    page.locator("#answer-visible_keys").fill("5")
    assert page.evaluate(DRAFT_OWNERS) == [[f"attnquiz.draft:{other.pk}:visible_keys", str(other.student.pk)]]


def test_an_answer_already_sent_is_not_sent_again(student_page, demo_site):
    page = student_page
    item = item_for(demo_site)
    page.goto(reverse("exercise", args=[item.pk]))
    variant = Variant.objects.get(assignment_item=item, student__username="student1")
    posts = []
    page.on("request", lambda request: request.method == "POST" and "/submit/" in request.url
            and posts.append(request.url))
    number = page.locator("#answer-visible_keys")
    number.fill("7")
    send(page, "visible_keys", attempt=1)
    note = page.locator("#form-visible_keys [data-same-answer]")
    expect(note).to_be_hidden()
    button = page.locator("#form-visible_keys button[type=submit]")
    button.click()
    expect(note).to_have_text(SAME)
    number.fill("  7 ")  # spaces make no other answer
    expect(note).to_be_hidden()  # an edit takes the note away
    button.click()
    expect(note).to_have_text(SAME)
    page.wait_for_timeout(500)
    assert len(posts) == 1
    assert Submission.objects.filter(variant=variant, part="visible_keys").count() == 1

    number.fill("6")  # another answer: sent
    send(page, "visible_keys", attempt=2)
    expect(note).to_be_hidden()
    page.reload()
    expect(number).to_have_value("6")
    page.locator("#form-visible_keys button[type=submit]").click()  # after a reload too
    expect(page.locator("#form-visible_keys [data-same-answer]")).to_have_text(SAME)

    fill_cells(page, "masked_weights", ["1.5", "1.5", "1.5", "1.5"])  # a grid, cell by cell
    send(page, "masked_weights", attempt=1)
    page.locator("#form-masked_weights button[type=submit]").click()
    expect(page.locator("#form-masked_weights [data-same-answer]")).to_have_text(SAME)
    fill_cells(page, "masked_weights", ["2"])
    send(page, "masked_weights", attempt=2)
    page.wait_for_timeout(300)
    assert list(Submission.objects.filter(variant=variant).order_by("part", "attempt").values_list("part", "attempt")) == [
        ("masked_weights", 1), ("masked_weights", 2), ("visible_keys", 1), ("visible_keys", 2),
    ]


def test_each_feedback_message_is_shown_once_on_a_part(student_page, demo_site):
    page = student_page
    page.goto(reverse("exercise", args=[item_for(demo_site).pk]))
    message = "Not quite: 4 of the 4 entries are outside the accepted tolerance (see the highlighted cells)."
    for attempt, value in enumerate(["1.5", "2", "3"], start=1):
        fill_cells(page, "masked_weights", [value] * 4)
        send(page, "masked_weights", attempt=attempt)
    part = page.locator("#part-masked_weights")
    expect(page.locator("#history-masked_weights > summary")).to_have_text("Earlier attempts at this part (2)")
    assert part.text_content().count(message) == 1  # in the result block, with attempt 3
    assert page.locator("#result-masked_weights .feedback").inner_text() == message
    page.locator("#history-masked_weights > summary").click()
    attempts = page.locator("#history-masked_weights .aq-history__attempt")
    assert [attempts.nth(i).get_attribute("data-attempt") for i in range(attempts.count())] == ["1", "2"]
    expect(page.locator("#history-masked_weights .aq-history__feedback")).to_have_text(
        ["The same feedback as attempt 3.", "The same feedback as attempt 3."]
    )
    page.reload()
    assert page.locator("#part-masked_weights").text_content().count(message) == 1


def test_a_minute_before_the_end_the_clock_names_the_parts_not_sent(student_page, demo_site, artifacts):
    page = student_page
    assignment = demo_site.assignment
    assignment.time_limit_minutes = 2
    assignment.save()
    item = item_for(demo_site)
    page.goto(reverse("exercise", args=[item.pk]))
    Variant.objects.filter(assignment_item__assignment=assignment, student__username="student1").update(
        created_at=timezone.now() - timedelta(seconds=55)
    )
    page.reload()  # 65 s left
    warning = page.locator("#clock [data-unsent-warning]")
    expect(warning).to_have_attribute("role", "alert")
    expect(warning).to_be_empty()
    fill_cells(page, "masked_weights", ["1"])
    page.locator("#answer-visible_keys").fill("7")
    expect(warning).to_have_text(
        "1 minute left. Part (a) and part (b) have answers you have not sent. "
        "Send them now: an answer not sent when the time runs out is not stored.", timeout=10_000,
    )
    expect(warning.get_by_role("link", name="Part (a)")).to_have_attribute("href", "#part-masked_weights")
    expect(warning.get_by_role("link", name="part (b)")).to_have_attribute("href", "#part-visible_keys")
    page.screenshot(path=artifacts / "unsent-answers-warning.png")
    send(page, "visible_keys", attempt=1)  # its Send button still works; the list follows
    expect(warning).to_have_text(re.compile(
        r"^\d\d seconds left\. Part \(a\) has an answer you have not sent\. Send it now: "
    ))
    page.locator("#grid-masked_weights input").first.fill("")  # nothing typed any more
    expect(warning).to_be_empty()


def start_exam(page, demo_site, minutes: int):
    exam = demo_site.assignment
    exam.kind, exam.time_limit_minutes = "exam", minutes
    exam.save()
    log_in(page, "student1")
    page.goto(reverse("assignment", args=[exam.course.slug, exam.slug]))
    page.get_by_role("button", name="Start the exam").click()
    page.wait_for_url(re.compile(re.escape(reverse("assignment", args=[exam.course.slug, exam.slug])) + "$"))
    return exam


def test_when_the_time_runs_out_the_unsent_answers_are_listed_and_not_sent(page, demo_site, artifacts):
    from exams.models import AssignmentAttempt

    exam = start_exam(page, demo_site, minutes=1)
    item = item_for(demo_site)
    page.goto(reverse("exercise", args=[item.pk]))
    AssignmentAttempt.objects.filter(assignment=exam, student__username="student1").update(
        started_at=timezone.now() - timedelta(seconds=45)
    )
    page.reload()  # 15 s left
    fill_cells(page, "masked_weights", ["1", "2", "3"])
    page.locator("#answer-visible_keys").fill("7")
    page.locator("#answer-unmasked_first").fill("<b>9</b>")
    warning = page.locator("#clock [data-unsent-warning]")
    expect(warning).to_have_text(
        "10 seconds left. Part (a), part (b) and part (c) have answers you have not sent. "
        "Send them now: an answer not sent when the time runs out is not stored.", timeout=10_000,
    )
    # At zero the page asks for the deadline, learns the attempt ended and reloads.
    expect(page.locator("#attempt-ended")).to_contain_text("(time ran out)", timeout=20_000)
    assert page.locator("form.answer-form").count() == 0
    drafts = page.locator("#unsent-drafts")
    expect(drafts).to_be_visible()
    expect(drafts.locator("p").first).to_have_text("These answers were typed but not sent before the time ran out:")
    expect(drafts.locator("dt")).to_have_text(["Part (a)", "Part (b)", "Part (c)"])
    expect(drafts.locator("[data-draft-text]")).to_have_text(["1, 2, 3, (empty)", "7", "<b>9</b>"])
    assert drafts.locator("b").count() == 0  # shown as text, never as HTML
    assert drafts.locator("textarea, input").count() == 0  # read-only
    assert not Submission.objects.filter(variant__assignment_item=item).exists()  # nothing sent after the end
    page.screenshot(path=artifacts / "unsent-answers-after-time-up.png", full_page=True)

    page.reload()  # still there: kept in this tab until removed
    expect(drafts.locator("[data-draft-text]")).to_have_count(3)
    drafts.get_by_role("button", name="Remove them from this browser").click()
    expect(drafts).to_be_hidden()
    page.reload()
    expect(drafts).to_be_hidden()
    assert page.evaluate(DRAFT_KEYS) == []


def test_an_extension_moves_every_text_of_the_deadline_together(page, demo_site, settings):
    from exams.services_accommodations import accommodation_extend

    settings.EXAM_DEADLINE_POLL_SECONDS = 3  # the poll is limited to about one ask every 2 s
    exam = start_exam(page, demo_site, minutes=35)
    page.goto(reverse("exercise", args=[item_for(demo_site).pk]))
    clock = page.locator("#clock")
    expect(clock.locator("[data-countdown-limit]")).to_have_text("Time limit: 35 minutes.")
    ends_before = clock.locator("[data-countdown-deadline]").inner_text()
    student = demo_site.course.enrolments.get(user__username="student1").user
    accommodation_extend(assignment=exam, student=student, minutes=5, actor=None)
    expect(clock.locator("[data-countdown-limit]")).to_have_text("Time limit: 40 minutes.", timeout=10_000)
    text = clock.locator("#own-limit").inner_text()
    left = re.search(r"Time left: (\d+):(\d\d)", text)
    seconds = int(left[1]) * 60 + int(left[2])
    assert 38 * 60 < seconds <= 40 * 60
    minutes = re.search(r"about (\d+) minutes?;", text)
    assert abs(int(minutes[1]) - math.ceil(seconds / 60)) <= 1  # a tick may fall between the reads
    assert int(minutes[1]) in (39, 40)
    ends_after = clock.locator("[data-countdown-deadline]").inner_text()
    before, after = (re.search(r"(\d\d):(\d\d)", value) for value in (ends_before, ends_after))
    assert (int(after[1]) * 60 + int(after[2]) - int(before[1]) * 60 - int(before[2])) % (24 * 60) == 5


ANSWER_TABLE = """() => {
  const aq = window.attnquiz;
  return {
    grid: aq.answerFromFields([["cell-0-1", " 2 "], ["cell-0-0", "1"], ["cell-1-1", "4"]]),
    one: aq.answerFromFields([["answer", "d_k"]]),
    multiple: aq.answerFromFields([["answer", "a"], ["multiple", "1"]]),
    several: aq.answerFromFields([["answer", "a"], ["answer", "c"]]),
    none: aq.answerFromFields([["multiple", "1"]]),
    same: [
      aq.answerKey("7") === aq.answerKey("  7 "),
      aq.answerKey("Var(q)\\r\\n\\r\\n  d_k") === aq.answerKey("Var(q)\\nd_k"),
      aq.answerKey([["1", "2"]]) === aq.answerKey([[" 1", "2 "]]),
      aq.answerKey("2 d_k") === aq.answerKey("2  d_k"),
    ],
    different: [
      aq.answerKey("7") === aq.answerKey("7.0"),
      aq.answerKey("2 d_k") === aq.answerKey("2d_k"),
      aq.answerKey([["1", "2"]]) === aq.answerKey([["2", "1"]]),
      aq.answerKey(["a"]) === aq.answerKey("a"),
    ],
    empty: [aq.answerKey(""), aq.answerKey("  \\n "), aq.answerKey([["", " "]]), aq.answerKey([]), aq.answerKey(null)],
    sentences: [aq.unsentSentence(["(a)"]), aq.unsentSentence(["(a)", "(b)"]), aq.unsentSentence(["(a)", "(b)", "(c)"])],
    minutes: [aq.minutesText(3600), aq.minutesText(61), aq.minutesText(60), aq.minutesText(1), aq.minutesText(0)],
  };
}"""


def test_the_pages_answer_helpers(student_page, demo_site):
    page = student_page
    page.goto(reverse("exercise", args=[item_for(demo_site).pk]))
    assert page.evaluate(ANSWER_TABLE) == {
        "grid": [["1", "2"], ["", "4"]],
        "one": "d_k",
        "multiple": ["a"],
        "several": ["a", "c"],
        "none": None,
        "same": [True, True, True, True],
        "different": [False, False, False, False],
        "empty": [None, None, None, None, None],
        "sentences": [
            "Part (a) has an answer you have not sent.",
            "Part (a) and part (b) have answers you have not sent.",
            "Part (a), part (b) and part (c) have answers you have not sent.",
        ],
        "minutes": ["60 minutes", "2 minutes", "1 minute", "1 minute", "0 minutes"],
    }
