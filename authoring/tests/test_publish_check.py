"""Publishing checks the stored source again with today's rules for exercise files, in the
sandbox a save is checked in, never in the web process: reading a file runs each reference
answer through its own checker, and a draft saved before that rule existed was never read
under it. A version that no longer passes stays where it was, and its author is told to fix
it and save it again (a message, not a 500); a normal draft publishes as before."""

from __future__ import annotations

import pytest
from django.contrib.messages import get_messages
from django.urls import reverse

from authoring import selectors, services
from authoring.models import EventKind, ExerciseEvent
from authoring.tests.factories import PASSWORD, product_yaml, user_create
from courses.models import Course, Enrolment, Role
from exercises import engine
from exercises.engine.source import read_yaml
from exercises.models import Exercise, ExerciseVersion, VersionStatus
from grading.core import sandbox

S = VersionStatus
# A symbolic part whose answer names a symbol the part does not declare: its checker cannot
# read it, which a file read today refuses, and which a version stored earlier still holds.
SCALE_PART = """\
  - key: scale
    type: symbolic
    answer: "{answer}"
    symbols: {{d_k: positive}}
    solution: |
      Divide by the square root of d_k.
"""
GOOD_SOURCE = product_yaml() + SCALE_PART.format(answer="1/sqrt(d_k)")
PRE_RULE_SOURCE = product_yaml() + SCALE_PART.format(answer="1/sqrt(d)")
PRE_RULE_ISSUE = (
    "line 25: parts[2].answer: the part cannot be graded as written: expected expression cannot be "
    "read: unknown symbol 'd'; this answer may use d_k"
)
PRE_RULE_MESSAGE = (
    "Version 1 was not published: its source does not pass today's checks for exercise files (they may "
    "have become stricter since it was saved). Edit it, fix what is listed and save it again, then "
    f"publish. {PRE_RULE_ISSUE}"
)
BUSY_MESSAGE = (
    "A check of yours is still running, so this publish was not started: one check, save, import or "
    "preview at a time per person, and each stops after at most 10 s."
)


@pytest.fixture
def runs(monkeypatch):
    """What ran where: each function sent to the sandbox, and each exercise file read in this
    (the web) process."""
    record = {"sandbox": [], "read_here": 0}
    run_limited, load_spec = sandbox.run_limited, engine.load_spec

    def sandboxed(func, *args, **kwargs):
        record["sandbox"].append(func.__name__)
        return run_limited(func, *args, **kwargs)

    def read_here(text):
        record["read_here"] += 1
        return load_spec(text)

    monkeypatch.setattr(sandbox, "run_limited", sandboxed)
    monkeypatch.setattr(engine, "load_spec", read_here)
    return record


@pytest.fixture
def solo(db):
    """A course with one instructor, who publishes their own drafts (no second reviewer)."""
    course = Course.objects.create(slug="solo", title="Solo")
    owner = user_create("olga")
    Enrolment.objects.create(course=course, user=owner, role=Role.INSTRUCTOR)
    return course, owner


def stored_before_the_rule(*, course, author, source: str, status: str = S.DRAFT) -> ExerciseVersion:
    """A version as it was stored before today's rules: its spec built without them."""
    from authoring.models import ExerciseOwner

    data, _ = read_yaml(source)
    spec = engine.spec_from_json(data)
    exercise = Exercise.objects.create(slug=spec.slug, title=spec.title, created_by=author)
    ExerciseOwner.objects.create(exercise=exercise, course=course)
    return ExerciseVersion.objects.create(
        exercise=exercise, number=1, source=source, spec=engine.spec_to_json(spec),
        content_hash=services.source_hash(source), status=status, created_by=author,
    )


def test_the_stored_draft_really_fails_todays_reading_and_still_opens():
    with pytest.raises(engine.SpecError) as error:
        engine.load_spec(PRE_RULE_SOURCE)
    assert [str(issue) for issue in error.value.errors] == [PRE_RULE_ISSUE]
    assert engine.spec_from_json(read_yaml(PRE_RULE_SOURCE)[0]).part("scale").answer_text == "1/sqrt(d)"


def test_a_normal_draft_is_published_after_a_check_in_the_sandbox(solo, runs):
    course, owner = solo
    draft = services.exercise_create(course=course, actor=owner, source=GOOD_SOURCE)
    runs["sandbox"].clear()
    runs["read_here"] = 0
    published = services.version_transition(version=draft, actor=owner, to_status=S.PUBLISHED)
    assert published.status == S.PUBLISHED and published.published_at is not None
    assert ExerciseVersion.objects.get(pk=draft.pk).status == S.PUBLISHED
    assert draft.events.first().kind == EventKind.SELF_PUBLISHED
    assert runs == {"sandbox": ["_source_check"], "read_here": 0}


def test_a_draft_stored_before_the_rule_is_not_published_and_nothing_of_it_runs_here(solo, runs):
    course, owner = solo
    draft = stored_before_the_rule(course=course, author=owner, source=PRE_RULE_SOURCE)
    with pytest.raises(engine.SpecError) as error:
        services.version_transition(version=draft, actor=owner, to_status=S.PUBLISHED)
    assert [str(issue) for issue in error.value.errors] == [PRE_RULE_ISSUE]
    stored = ExerciseVersion.objects.get(pk=draft.pk)
    assert (stored.status, stored.published_at) == (S.DRAFT, None)
    assert not ExerciseEvent.objects.filter(version=draft).exists()
    assert runs == {"sandbox": ["_source_check"], "read_here": 0}


def test_approving_a_version_in_review_stored_before_the_rule_is_refused_too(people, runs):
    version = stored_before_the_rule(
        course=people.course, author=people.instructor, source=PRE_RULE_SOURCE, status=S.IN_REVIEW
    )
    with pytest.raises(engine.SpecError) as error:
        services.version_transition(version=version, actor=people.reviewer, to_status=S.PUBLISHED)
    assert [str(issue) for issue in error.value.errors] == [PRE_RULE_ISSUE]
    assert ExerciseVersion.objects.get(pk=version.pk).status == S.IN_REVIEW
    assert runs == {"sandbox": ["_source_check"], "read_here": 0}


def test_after_fixing_and_saving_again_the_draft_is_published(solo):
    course, owner = solo
    draft = stored_before_the_rule(course=course, author=owner, source=PRE_RULE_SOURCE)
    services.version_save(version=draft, actor=owner, source=GOOD_SOURCE)
    published = services.version_transition(version=draft, actor=owner, to_status=S.PUBLISHED)
    assert (published.status, published.source) == (S.PUBLISHED, GOOD_SOURCE)


def test_the_page_tells_the_author_to_save_again(client, solo):
    course, owner = solo
    draft = stored_before_the_rule(course=course, author=owner, source=PRE_RULE_SOURCE)
    client.login(username="olga", password=PASSWORD)
    url = reverse("authoring:transition", args=[course.slug, draft.exercise.slug, 1])
    response = client.post(url, {"to_status": "published"})
    assert response.status_code == 302
    assert response["Location"] == reverse("authoring:version", args=[course.slug, draft.exercise.slug, 1])
    assert [str(message) for message in get_messages(response.wsgi_request)] == [PRE_RULE_MESSAGE]
    assert ExerciseVersion.objects.get(pk=draft.pk).status == S.DRAFT


def test_the_page_publishes_a_normal_draft(client, solo):
    course, owner = solo
    draft = services.exercise_create(course=course, actor=owner, source=GOOD_SOURCE)
    client.login(username="olga", password=PASSWORD)
    response = client.post(
        reverse("authoring:transition", args=[course.slug, draft.exercise.slug, 1]), {"to_status": "published"}
    )
    assert response.status_code == 302
    assert [str(message) for message in get_messages(response.wsgi_request)] == [
        "Version 1 is now published and shared with the staff of every course."
    ]
    assert ExerciseVersion.objects.get(pk=draft.pk).status == S.PUBLISHED


def test_while_another_run_of_the_publishers_holds_the_place_nothing_runs_or_changes(client, solo, runs):
    course, owner = solo
    draft = services.exercise_create(course=course, actor=owner, source=GOOD_SOURCE)
    runs["sandbox"].clear()
    services.source_check_start(user=owner)
    with pytest.raises(services.AuthoringRefused) as refused:
        services.version_transition(version=draft, actor=owner, to_status=S.PUBLISHED)
    assert (refused.value.code, refused.value.message) == ("busy", BUSY_MESSAGE)
    client.login(username="olga", password=PASSWORD)
    response = client.post(
        reverse("authoring:transition", args=[course.slug, draft.exercise.slug, 1]), {"to_status": "published"}
    )
    assert response.status_code == 302
    assert [str(message) for message in get_messages(response.wsgi_request)] == [BUSY_MESSAGE]
    assert ExerciseVersion.objects.get(pk=draft.pk).status == S.DRAFT
    assert runs["sandbox"] == []


def test_a_draft_saved_again_while_it_was_being_checked_is_not_published(solo, monkeypatch):
    """What was checked is what is published: an edit stored during the check wins, unpublished."""
    course, owner = solo
    draft = services.exercise_create(course=course, actor=owner, source=GOOD_SOURCE)
    check = selectors.source_check
    edited = GOOD_SOURCE.replace("Multiply", "Now multiply")

    def check_while_saved_elsewhere(**kwargs):
        checked = check(**kwargs)
        ExerciseVersion.objects.filter(pk=draft.pk).update(source=edited, content_hash=services.source_hash(edited))
        return checked

    monkeypatch.setattr(selectors, "source_check", check_while_saved_elsewhere)
    with pytest.raises(services.AuthoringRefused) as refused:
        services.version_transition(version=draft, actor=owner, to_status=S.PUBLISHED)
    assert (refused.value.code, refused.value.message) == (
        "changed", "Version 1 changed while it was being checked; publish it again."
    )
    assert ExerciseVersion.objects.get(pk=draft.pk).status == S.DRAFT


@pytest.mark.parametrize("actor_name,steps,to_status,outcome", [
    ("instructor", [], S.IN_REVIEW, S.IN_REVIEW),  # sending to review re-reads nothing
    ("instructor", [S.IN_REVIEW], S.DRAFT, S.DRAFT),  # nor does withdrawing
    ("instructor", [S.IN_REVIEW], S.PUBLISHED, "self_approval"),  # the author cannot approve their own
    ("reviewer", [], S.RETIRED, "refused"),  # a draft cannot be retired
])
def test_moves_that_publish_nothing_run_nothing_in_the_sandbox(people, runs, actor_name, steps, to_status, outcome):
    version = stored_before_the_rule(course=people.course, author=people.instructor, source=PRE_RULE_SOURCE)
    for step in steps:
        version = services.version_transition(version=version, actor=people.instructor, to_status=step)
    actor = getattr(people, actor_name)
    if outcome in S.values:
        moved = services.version_transition(version=version, actor=actor, to_status=to_status)
        assert moved.status == outcome
    else:
        with pytest.raises(services.AuthoringRefused) as refused:
            services.version_transition(version=version, actor=actor, to_status=to_status)
        assert refused.value.code == outcome
    assert runs == {"sandbox": [], "read_here": 0}
