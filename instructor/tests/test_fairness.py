"""Variant fairness on the analytics page and in `manage.py variant_fairness`, on
synthetic first tries: a harder d_k family is flagged, a fair exercise is not, a harder
pool item is flagged, and too few answers are said to be too few."""

from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.urls import reverse

from authoring.tests.factories import PASSWORD, assignment_create, published_version
from courses.models import PoolDraw
from exercises.models import Variant
from grading.models import Submission, SubmissionStatus
from instructor.selectors_fairness import assignment_fairness

DIVISOR_YAML = """\
slug: {slug}
title: {title}
version: 1
parameters:
  d_k: {{generator: choice, from: [4, 9, 16]}}
prompt: "A head of width {{{{d_k}}}}."
parts:
  - key: divisor
    type: numeric
    answer: "sqrt(d_k)"
    decimals: 0
    skills: [scaling]
    solution: "sqrt(d_k)"
  - key: why
    type: free_text
    answer: "rubric"
    skills: [scaling]
    solution: "because"
"""


def students(count: int, prefix: str = "learner"):
    User = get_user_model()
    User.objects.bulk_create([User(username=f"{prefix}{i:03d}") for i in range(count)])
    return list(User.objects.filter(username__startswith=prefix).order_by("username"))


def first_tries(item, learners, *, right_by_group: dict, groups: list, attempts: int = 1):
    """One variant per student, d_k cycling through ``groups``; the first ``right_by_group[g]``
    students of group g answer right at the first try (the others wrong, then right)."""
    variants = Variant.objects.bulk_create([
        Variant(exercise_version=item.exercise_version, student=student, assignment_item=item,
                context=f"assignment:{item.pk}", seed=n, params={"d_k": groups[n % len(groups)]})
        for n, student in enumerate(learners)
    ])
    seen: dict = {}
    rows = []
    for variant in variants:
        group = variant.params["d_k"]
        seen[group] = seen.get(group, 0) + 1
        right = seen[group] <= right_by_group[group]
        rows.append(Submission(variant=variant, student=variant.student, part="divisor", raw_answer="1",
                               attempt=1, status=SubmissionStatus.GRADED, awarded=float(right), correct=right))
        rows.append(Submission(variant=variant, student=variant.student, part="why", raw_answer="x",
                               attempt=1, status=SubmissionStatus.GRADED, awarded=0.0, correct=False))
        if not right:
            rows.append(Submission(variant=variant, student=variant.student, part="divisor", raw_answer="2",
                                   attempt=2, status=SubmissionStatus.GRADED, awarded=1.0, correct=True))
    Submission.objects.bulk_create(rows)


@pytest.fixture
def unfair(people):
    """150 students: d_k = 16 right 12 of 50 at the first try, d_k = 4 and 9 right 36 and 35;
    a second exercise equally hard in every family (34, 35, 33 of 50)."""
    harder = published_version(source=DIVISOR_YAML.format(slug="harder", title="Harder family"))
    fair = published_version(source=DIVISOR_YAML.format(slug="fair", title="Fair family"))
    assignment = assignment_create(people.course, [harder, fair])
    harder_item, fair_item = assignment.items.order_by("position")
    learners = students(150)
    first_tries(harder_item, learners, right_by_group={4: 36, 9: 35, 16: 12}, groups=[4, 9, 16])
    first_tries(fair_item, learners, right_by_group={4: 34, 9: 35, 16: 33}, groups=[4, 9, 16])
    return assignment


def factor_tests_of(report, slug):
    (exercise,) = [e for e in report.exercises if e.info.slug == slug]
    return {test.factor: test for test in exercise.tests}, exercise


def test_the_harder_family_is_flagged_and_the_fair_exercise_is_not(unfair):
    report = assignment_fairness(assignment=unfair)
    harder, exercise = factor_tests_of(report, "harder")
    assert exercise.observations == 150 and exercise.flagged
    # the free-text part (graded by hand) and the second attempts do not count
    assert [(b.label, b.right, b.total) for b in harder["d_k"].bins] == [("4", 36, 50), ("9", 35, 50), ("16", 12, 50)]
    assert harder["d_k"].hardest.label == "16"
    assert round(harder["d_k"].result.statistic, 3) == 29.833
    # d_k is also the largest entry (the same grouping, so not a second test); digits never vary
    assert sorted(harder) == ["d_k"]
    fair, exercise = factor_tests_of(report, "fair")
    assert not exercise.flagged and round(fair["d_k"].adjusted_p, 4) == 0.9122
    assert report.tests_run == 2 and report.flagged_count == 1


def test_too_few_answers_are_reported_not_judged(people):
    version = published_version(source=DIVISOR_YAML.format(slug="small", title="Small"))
    assignment = assignment_create(people.course, [version])
    first_tries(assignment.items.get(), students(45), right_by_group={4: 15, 9: 2, 16: 15}, groups=[4, 9, 16])
    report = assignment_fairness(assignment=assignment)
    tests, exercise = factor_tests_of(report, "small")
    assert not exercise.flagged and report.tests_run == 0
    assert tests["d_k"].reason == "too few answers: needs 2 groups of at least 20"
    assert [(b.label, b.total) for b in tests["d_k"].left_out] == [("4", 15), ("9", 15), ("16", 15)]


def test_a_harder_pool_item_is_flagged(people):
    easy = published_version(source=DIVISOR_YAML.format(slug="easy-item", title="Easy item"))
    hard = published_version(source=DIVISOR_YAML.format(slug="hard-item", title="Hard item"))
    assignment = assignment_create(people.course, [easy, hard], slug="exam")
    easy_item, hard_item = assignment.items.order_by("position")
    for item in (easy_item, hard_item):
        item.pool = "scaling"
        item.save()
    learners = students(120)
    PoolDraw.objects.bulk_create([
        PoolDraw(assignment=assignment, student=s, pool="scaling", item=easy_item if n % 2 == 0 else hard_item)
        for n, s in enumerate(learners)
    ])
    first_tries(easy_item, learners[0::2], right_by_group={4: 48}, groups=[4])
    first_tries(hard_item, learners[1::2], right_by_group={4: 21}, groups=[4])
    report = assignment_fairness(assignment=assignment)
    (pool,) = report.pools
    assert pool.flagged and pool.observations == 120
    assert [(b.label, b.right, b.total) for b in pool.test.bins] == [("easy-item", 48, 60), ("hard-item", 21, 60)]
    assert pool.test.hardest.label == "hard-item"


def test_the_analytics_page_shows_the_flag(client, people, unfair):
    client.login(username="ines", password=PASSWORD)
    page = client.get(reverse("instructor:analytics", args=["attn", "week1"])).content.decode()
    assert 'data-fairness-flags="1"' in page
    assert page.count('class="is-flagged" data-exercise="harder"') == 1
    assert 'class="" data-exercise="fair" data-factor="d_k"' in page
    assert "Holm over all 2 tests on this page" in page
    assert ("students with <strong>d_k 16</strong> were right at the first try 12 of 50 times (24 %), "
            "the others 71 %") in page


def test_the_command_prints_the_same_tests(people, unfair):
    out = StringIO()
    call_command("variant_fairness", "attn", stdout=out)
    lines = out.getvalue().splitlines()
    assert lines[2] == "week1: 2 test(s) run, 1 flagged"
    assert lines[3] == "  harder (150 students)"
    assert lines[4].startswith("    d_k          [4: 36/50, 9: 35/50, 16: 12/50]  chi2=29.83 df=2 p=< 0.0001")
    assert lines[4].endswith("FLAG hardest 16")
    assert lines[5] == "  fair (150 students)"
    assert lines[6].endswith("p=0.9122 holm=0.9122  ok")


def test_the_command_refuses_an_unknown_course_or_assignment(people):
    with pytest.raises(CommandError, match="No course 'nope'"):
        call_command("variant_fairness", "nope", stdout=StringIO())
    with pytest.raises(CommandError, match="No assignment 'x' in course 'attn'"):
        call_command("variant_fairness", "attn", "--assignment", "x", stdout=StringIO())


def test_features_are_read_from_the_cache_the_second_time(people, monkeypatch):
    from exercises.engine import fairness
    from instructor import selectors_fairness

    version = published_version(source=DIVISOR_YAML.format(slug="cached", title="Cached"))
    assignment = assignment_create(people.course, [version])
    first_tries(assignment.items.get(), students(60), right_by_group={4: 10, 9: 10, 16: 10}, groups=[4, 9, 16])
    before = factor_tests_of(assignment_fairness(assignment=assignment), "cached")[0]
    monkeypatch.setattr(fairness, "variant_features", lambda *args, **kwargs: 1 / 0)
    after = factor_tests_of(assignment_fairness(assignment=assignment), "cached")[0]
    assert sorted(after) == sorted(before) == ["d_k"]
    # past the cap, later students are binned by their drawn parameters only
    monkeypatch.setattr(selectors_fairness, "MAX_FEATURE_OBSERVATIONS", 0)
    monkeypatch.setattr(fairness, "variant_features", lambda *args, **kwargs: {"digits": 3.0})
    tests = factor_tests_of(assignment_fairness(assignment=assignment), "cached")[0]
    assert [(b.label, b.total) for b in tests["d_k"].bins] == [("4", 20), ("9", 20), ("16", 20)]
