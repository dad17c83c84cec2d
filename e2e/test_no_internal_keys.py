"""No student page shows a part key or a misconception code, also once there are answers.

student1 answers every part of every exercise of the demo assignment (a diagnosed wrong
answer where the part diagnoses one, a wrong answer, the right one, through the real
graders), then every misconception code not diagnosed that way is stored once through
the grading pipeline with a grade that carries it. An exam is started and half answered,
a second exam is answered, finished and its grades released, a few exercises are
practised, and the review cards fall due. Then every student page is
opened in the browser and what a person reads (the visible text with every <details>
opened, plus title, aria-label, alt and placeholder) is searched for:

- every misconception code (all of them contain "_": never an English word);
- every part key of the bank (exercises/bank/*.yaml) that is not an ordinary word. Keys
  without "_" are words or symbols that exercises legitimately print ("weights",
  "output", "query", "K", "Q", "V", …: "the attention weights", "the matrix K"); for
  those the page is searched for the way a leak reads instead: "part weights",
  "Part weights".
"""

from __future__ import annotations

import itertools
import re
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest
from django.urls import reverse
from django.utils import timezone

from e2e.conftest import log_in

pytestmark = pytest.mark.browser

BANK = Path(__file__).resolve().parent.parent / "exercises" / "bank"
STUDENT = "student1"
EXAM_SLUGS = ("qkv-misconception", "attention-weights-one-query", "score-variance")

READ_TEXT = """() => {
  document.querySelectorAll('details').forEach(d => { d.open = true; });
  const texts = [document.body.innerText];
  for (const el of document.querySelectorAll('[title], [aria-label], [alt], [placeholder]')) {
    for (const name of ['title', 'aria-label', 'alt', 'placeholder']) {
      const value = el.getAttribute(name);
      if (value) texts.push(value);
    }
  }
  return texts.join('\\n');
}"""


def bank_part_keys() -> tuple[set[str], set[str]]:
    """(keys searched as they are, keys that are words: searched as "part <key>")."""
    from exercises.engine import load_spec

    keys = {part.key for path in BANK.glob("*.yaml") for part in load_spec(path.read_text()).parts}
    return {key for key in keys if "_" in key}, {key for key in keys if "_" not in key}


def leaks(text: str, codes: set[str], keys: set[str], word_keys: set[str]) -> list[str]:
    found = [word for word in codes | keys if re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", text)]
    found += [f"part {key}" for key in word_keys if re.search(rf"\bpart {re.escape(key)}\b", text, re.I)]
    return sorted(found)


# ---------------------------------------------------------------------------
# Answers
# ---------------------------------------------------------------------------


def diagnosed_answers(part, options: dict) -> list:
    """Answers that make the real diagnosis name a misconception (attention mistakes)."""
    from grading.core.misconceptions import _CANDIDATES, attention_quantity

    diagnose = options.get("diagnose")
    if not diagnose or diagnose.get("quantity") not in _CANDIDATES:
        return []
    found = []
    for mistake in _CANDIDATES[diagnose["quantity"]]:
        value = attention_quantity(diagnose["Q"], diagnose["K"], diagnose["V"], diagnose["quantity"], mistake,
                                   diagnose.get("d_model"))
        if value is None:
            continue
        found.append(np.round(np.asarray(value, dtype=float), part.decimals).tolist())
    return found


def answers_for(spec, part, params) -> list:
    from exercises.engine.grading import part_options
    from exercises.engine.reference import part_reference
    from grading.core import answers

    expected = part_reference(part, params)
    options = part_options(spec, params, part.key)
    if part.type == "free_text":
        return ["The softmax saturates."]
    samples = answers.self_test_answers(part.type, expected, options)
    chosen = []
    diagnose = options.get("diagnose")
    if diagnose and diagnose.get("quantity") in ("weights", "output", "scores", "scaled_scores"):
        row_only = np.ndim(expected) == 1
        for full in diagnosed_answers(part, options):
            chosen.append(full[diagnose["query_index"]] if row_only and np.ndim(full) == 2 else full)
    chosen += samples.get("wrong", [])[:2] + samples.get("right", [])[:1]
    return chosen


def submit(variant, student, part: str, raw) -> None:
    from grading.services import SubmissionRefused, submission_create

    try:
        submission_create(variant=variant, student=student, part=part, raw_answer=raw)
    except SubmissionRefused:
        pass  # e.g. a malformed sample, or the part already solved: not stored, nothing to show


def answer_everything(variant, student) -> None:
    from exercises.specs import version_spec

    spec = version_spec(variant.exercise_version)
    for part in spec.parts:
        for raw in answers_for(spec, part, variant.params):
            submit(variant, student, part.key, raw)


def store_every_other_misconception(items, student, monkeypatch) -> list:
    """Each code no grader produced above, stored once by the pipeline from a grade that
    carries it (the graders are replaced for these few answers only), each on a practice
    variant of its own. Returns those variants."""
    from exercises.services import variant_create_practice
    from exercises.specs import version_spec
    from grading import services
    from grading.core.grades import wrong
    from grading.core.misconceptions import MISCONCEPTION_LABELS, MISCONCEPTIONS
    from grading.models import Submission

    seen = set(Submission.objects.exclude(misconception="").values_list("misconception", flat=True))
    missing = sorted(set(MISCONCEPTION_LABELS) - seen)
    numeric = [item for item in items if version_spec(item.exercise_version).parts[0].type == "numeric"]
    real_grade = services.grade_answer
    variants = []
    for code, item in zip(missing, itertools.cycle(numeric)):  # more codes than items: some twice
        variant = variant_create_practice(item=item, student=student)
        spec = version_spec(variant.exercise_version)
        monkeypatch.setattr(services, "grade_answer", lambda code=code, **_: wrong(MISCONCEPTIONS[code], misconception=code))
        submit(variant, student, spec.parts[0].key, answers_for(spec, spec.parts[0], variant.params)[0])
        variants.append(variant)
    monkeypatch.setattr(services, "grade_answer", real_grade)
    stored = set(Submission.objects.exclude(misconception="").values_list("misconception", flat=True))
    assert stored == set(MISCONCEPTION_LABELS), sorted(set(MISCONCEPTION_LABELS) - stored)
    return variants


def exam_started(demo, items, student, *, slug: str):
    """An exam of the EXAM_SLUGS exercises, its attempt started by the student."""
    from courses.models import Assignment, AssignmentItem
    from exams.services import attempt_start

    exam = Assignment.objects.create(course=demo.course, slug=slug, title=slug.replace("-", " ").title(),
                                     kind="exam", time_limit_minutes=60, attempts_per_part=3)
    for position, item in enumerate(i for i in items if i.exercise_version.exercise.slug in EXAM_SLUGS):
        AssignmentItem.objects.create(assignment=exam, exercise_version=item.exercise_version, position=position)
    attempt_start(assignment=exam, student=student)
    return exam, list(exam.items.select_related("exercise_version").order_by("position"))


def released_exam(demo, items, student):
    """A second exam, answered in full, finished, and its grades released."""
    from django.contrib.auth import get_user_model

    from exams.services import attempt_finish, grades_release
    from exercises.services import variant_get_or_create_for_item

    exam, exam_items = exam_started(demo, items, student, slug="quiz-2")
    for item in exam_items:
        answer_everything(variant_get_or_create_for_item(item=item, student=student), student)
    attempt_finish(assignment=exam, student=student)
    grades_release(assignment=exam, by=get_user_model().objects.get(username="instructor"))
    return {"exam": exam, "items": exam_items}


def grade_free_text_by_hand(student) -> None:
    """The instructor grades the free-text answers (0.8 of the points), so "Answers graded
    by your instructors" lists them."""
    from django.contrib.auth import get_user_model

    from grading.models import Submission, SubmissionStatus
    from instructor.services import submission_grade_manually

    instructor = get_user_model().objects.get(username="instructor")
    manual = Submission.objects.filter(student=student, status=SubmissionStatus.MANUAL)
    assert manual.exists()
    for submission in manual:
        submission_grade_manually(submission=submission, grader=instructor, score=0.8, comment="Say why it saturates.")


# ---------------------------------------------------------------------------


@pytest.fixture
def answered_site(transactional_db, settings, monkeypatch):
    """The demo course (as `make run` sets it up) with everything student1 can have done."""
    from django.contrib.auth import get_user_model

    from courses.services import demo_course_ensure
    from exercises.services import variant_create_practice, variant_get_or_create_for_item
    from exercises.services_bank import bank_load
    from exercises.specs import version_spec
    from review.models import ReviewCard

    settings.GRADING_MODE = "inline"
    settings.SUBMIT_RATE_BURST = 100_000
    bank_load()
    demo = demo_course_ensure()
    student = get_user_model().objects.get(username=STUDENT)
    items = list(demo.assignment.items.select_related("exercise_version").order_by("position"))
    variants = [variant_get_or_create_for_item(item=item, student=student) for item in items]
    for variant in variants:
        answer_everything(variant, student)
    forced = store_every_other_misconception(items, student, monkeypatch)

    exam, exam_items = exam_started(demo, items, student, slug="quiz-1")
    for item in exam_items[:2]:  # the first part of two exercises; the third stays unanswered
        variant = variant_get_or_create_for_item(item=item, student=student)
        spec = version_spec(variant.exercise_version)
        submit(variant, student, spec.parts[0].key, answers_for(spec, spec.parts[0], variant.params)[0])
    released = released_exam(demo, items, student)

    practised = []
    for item in items[:4]:
        variant = variant_create_practice(item=item, student=student)
        answer_everything(variant, student)
        practised.append(variant)

    grade_free_text_by_hand(student)
    ReviewCard.objects.filter(student=student).update(due_at=timezone.now() - timedelta(hours=1))
    assert ReviewCard.objects.filter(student=student).exists()
    return {"demo": demo, "items": items, "exam": exam, "exam_items": exam_items, "practised": practised + forced,
            "released": released}


def result_fragments() -> list[str]:
    """The result shown after an answer: one per misconception code, per answer type."""
    from grading.models import Submission

    chosen = {}
    for submission in Submission.objects.filter(student__username=STUDENT).order_by("pk"):
        key = submission.misconception or submission.variant.exercise_version.spec["parts"][0]["type"]
        chosen.setdefault(key, submission.pk)
    return [reverse("submission", args=[pk]) for pk in chosen.values()]


def student_pages(site) -> list[str]:
    demo, exam = site["demo"], site["exam"]
    return result_fragments() + (
        ["/", reverse("assignment", args=[demo.course.slug, demo.assignment.slug]),
         reverse("assignment", args=[demo.course.slug, exam.slug]),
         reverse("exams:finish", args=[demo.course.slug, exam.slug]),
         reverse("grades:mine")]
        + [reverse("exercise", args=[item.pk]) for item in site["items"] + site["exam_items"]]
        + [reverse("practice", args=[variant.pk]) for variant in site["practised"]]
        + [reverse("assignment", args=[demo.course.slug, site["released"]["exam"].slug])]
        + [reverse("exercise", args=[item.pk]) for item in site["released"]["items"]]
    )


def test_no_student_page_shows_a_part_key_or_a_misconception_code(page, answered_site):
    from grading.core.misconceptions import MISCONCEPTION_LABELS, MISCONCEPTIONS
    from grading.models import Submission

    assert Submission.objects.filter(status="graded", correct=False).exclude(misconception="").count() >= len(MISCONCEPTION_LABELS)
    keys, word_keys = bank_part_keys()
    codes = set(MISCONCEPTION_LABELS)
    log_in(page, STUDENT)
    found, read = {}, {}
    for url in student_pages(answered_site):
        response = page.goto(url)
        assert response.status == 200, url
        text = read[url] = page.evaluate(READ_TEXT)
        seen = leaks(text, codes, keys, word_keys)
        if seen:
            found[url] = seen
    assert len(read) >= 5 + len(answered_site["items"]) + 3 + len(answered_site["practised"]) + len(codes) + 4
    assert len(answered_site["items"]) == len(list(BANK.glob("*.yaml")))
    # The pages hold what they were to be searched with: answers, reviews, skills, grades.
    demo, exam = answered_site["demo"], answered_site["exam"]
    assert "Due for review" in read["/"] and "My skills in" in read["/"]
    assert "Say why it saturates." in read[reverse("grades:mine")]
    assert "9 of 11 parts not answered yet" in read[reverse("exams:finish", args=[demo.course.slug, exam.slug])]
    assert sum(text.count("I entered: ") for text in read.values()) > 300
    assert all("I entered: " in read[reverse("exercise", args=[item.pk])] for item in answered_site["released"]["items"])
    # Each misconception was shown, in words, somewhere.
    everything = re.sub(r"\s+", " ", "\n".join(read.values()))
    assert [code for code in sorted(codes) if re.sub(r"\s+", " ", MISCONCEPTIONS[code])[:40] not in everything] == []
    assert found == {}


LEAK_SEARCH = [
    ("Due for review: Per-head width, part general_variance", ["general_variance"]),
    ("misconception no_scaling on attempt 2", ["no_scaling"]),
    ("Part weights: 3 wrong answers", ["part weights"]),
    ("the attention weights of the output row; the matrix K", []),
    ("d_model and d_k", []),
    ("shape_W_K-like or xraw_scores", []),  # only whole words count
]


@pytest.mark.parametrize(("text", "expected"), LEAK_SEARCH)
def test_the_search_finds_keys_and_codes_as_a_person_would_read_them(text, expected):
    keys, word_keys = bank_part_keys()
    from grading.core.misconceptions import MISCONCEPTION_LABELS

    assert leaks(text, set(MISCONCEPTION_LABELS), keys, word_keys) == expected
