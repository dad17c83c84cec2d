"""Rubric grading and regrade requests through the API: per endpoint a table of good
requests, bad bodies (400 naming the problem), refusals by state (409) and callers who may
not (403 for students, 404 for another course)."""

from __future__ import annotations

import json

import pytest

from api.models import TokenScope
from api.services import api_token_create
from api.tests.conftest import api_client, world_create
from authoring.tests.factories import FREE_TEXT_YAML, assignment_create, published_version, submission_add, variant_for
from grading.models import SubmissionStatus
from instructor import services_rubrics
from instructor.models import ManualGrade, RegradeRequest, RegradeRequestStatus, Rubric, RubricItem

C = "/api/v1/courses/attn/"


@pytest.fixture
def essay(db):
    """The world's course with an essay assignment: sam and sue answered its free-text part
    'why' (waiting for a grade); sam's product answer in week1 is graded."""
    world = world_create()
    version = published_version(source=FREE_TEXT_YAML)
    assignment = assignment_create(world.people.course, [version], slug="essay")
    item = assignment.items.get()
    answers = {}
    for seed, student in enumerate((world.people.student, world.people.student2), start=1):
        variant = variant_for(item, student, params={"d": 64}, seed=seed)
        answers[student.username] = submission_add(variant, "why", f"answer of {student.username}",
                                                   awarded=None, status=SubmissionStatus.MANUAL)
    product = submission_add(variant_for(world.item, world.people.student, params={"a": 3, "b": 4}), "product", "12",
                             awarded=1.0)
    return {"world": world, "item": item, "answers": answers, "product": product,
            "question": f"{C}questions/{item.pk}/why/"}


def call(essay, role: str, method: str, url: str, body=None):
    client = api_client(essay["world"].tokens[role])
    if method == "get":
        return client.get(url, body or {})
    data = body if isinstance(body, (bytes, str)) else json.dumps(body if body is not None else {})
    return client.generic(method.upper(), url, data, content_type="application/json")


def rubric_of(essay, criteria=(("variance grows with d_k", 2), ("softmax saturates", 1))) -> Rubric:
    rubric = services_rubrics.rubric_create(
        course=essay["world"].people.course, item=essay["item"], part="why", criteria=list(criteria)
    )
    return rubric


def assert_problem(response, status: int, detail_part: str = ""):
    assert response.status_code == status, response.content
    assert response["Content-Type"] == "application/problem+json"
    if detail_part:
        body = response.json()
        assert detail_part in body["detail"] + json.dumps(body.get("errors", {}))


# --- the rubric of a part ------------------------------------------------------------


@pytest.mark.parametrize(
    "role, path, status, detail",
    [
        ("ta", "why/", 404, "no rubric yet"),
        ("student", "why/", 403, ""),
        ("outsider", "why/", 404, ""),
        ("ta", "total/", 404, "No such hand-graded part"),  # not a part of this exercise
    ],
)
def test_rubric_read_before_one_exists(essay, role, path, status, detail):
    response = call(essay, role, "get", essay["question"].replace("why/", path) + "rubric/")
    assert_problem(response, status, detail)


def test_rubric_of_a_numeric_part_is_not_found(essay):
    world = essay["world"]
    response = call(essay, "ta", "get", f"{C}questions/{world.item.pk}/product/rubric/")
    assert_problem(response, 404, "No such hand-graded part")


@pytest.mark.parametrize(
    "body, status, criteria",
    [
        ({"criteria": [{"text": "Names the variance", "points": 2}, {"text": "Off topic", "points": -1}]}, 201,
         [("Names the variance", 2.0), ("Off topic", -1.0)]),
        ({}, 201, [("mentions that the dot product's variance grows with d_k", 2.0),
                   ("mentions that large scores saturate the softmax", 1.0)]),  # the author's
        ({"criteria": []}, 201, []),
        ({"criteria": "two items"}, 400, None),
        ({"criteria": [{"text": "", "points": 1}]}, 400, None),
        ({"criteria": [{"text": "x", "points": 101}]}, 400, None),
        ({"criteria": [{"text": "x", "points": "many"}]}, 400, None),
        ({"criteria": [{"text": "x"}]}, 400, None),
        ({"criteria": [{"text": "x" * 301, "points": 1}]}, 400, None),
        ({"criteria": [{"text": f"c{n}", "points": 1} for n in range(41)]}, 400, None),
    ],
)
def test_rubric_create_table(essay, body, status, criteria):
    response = call(essay, "ta", "post", essay["question"] + "rubric/", body)
    assert response.status_code == status, response.content
    if status == 201:
        data = response.json()
        assert [(c["text"], c["points"]) for c in data["criteria"]] == criteria
        assert data["part"] == "why" and data["exercise"] == "explain-scaling"
        assert data["max_points"] == sum(p for _t, p in criteria if p > 0)
        assert call(essay, "ta", "get", essay["question"] + "rubric/").json() == data
        assert_problem(call(essay, "ta", "post", essay["question"] + "rubric/", body), 409, "already has a rubric")
    else:
        assert response["Content-Type"] == "application/problem+json"
        assert all(field.startswith("criteria") for field in response.json()["errors"])
        assert not Rubric.objects.exists()


@pytest.mark.parametrize("role, status", [("student", 403), ("outsider", 404), ("instructor_read", 403), ("instructor", 201)])
def test_rubric_create_callers(essay, role, status):
    response = call(essay, role, "post", essay["question"] + "rubric/", {"criteria": [{"text": "x", "points": 1}]})
    assert response.status_code == status
    assert Rubric.objects.exists() == (status == 201)


@pytest.mark.parametrize(
    "role, body, status",
    [
        ("ta", {"text": "Cites the variance", "points": 2.5}, 201),
        ("ta", {"text": "Deduction", "points": -3}, 201),
        ("ta", {"text": "   ", "points": 1}, 400),
        ("ta", {"points": 1}, 400),
        ("ta", {"text": "x", "points": -100.5}, 400),
        ("ta", {"text": "x", "points": None}, 400),
        ("ta", [1, 2], 400),
        ("student", {"text": "x", "points": 1}, 403),
        ("outsider", {"text": "x", "points": 1}, 404),
    ],
)
def test_criterion_add_table(essay, role, body, status):
    rubric_of(essay)
    response = call(essay, role, "post", essay["question"] + "rubric/criteria/", body)
    assert response.status_code == status, response.content
    texts = list(RubricItem.objects.values_list("text", flat=True))
    if status == 201:
        assert response.json()["text"] == body["text"] and response.json()["points"] == body["points"]
        assert texts[-1] == body["text"] and len(texts) == 3
    else:
        assert len(texts) == 2


def test_criterion_add_makes_the_rubric_from_the_authors_criteria_first(essay):
    response = call(essay, "ta", "post", essay["question"] + "rubric/criteria/", {"text": "Clear", "points": 1})
    assert response.status_code == 201
    assert list(Rubric.objects.get().items.values_list("text", "points")) == [
        ("mentions that the dot product's variance grows with d_k", 2.0),
        ("mentions that large scores saturate the softmax", 1.0),
        ("Clear", 1.0),
    ]


@pytest.mark.parametrize(
    "body, graded_with_it, status, after",
    [
        ({"text": "Says the variance is d_k"}, False, 200, ("Says the variance is d_k", 2.0)),
        ({"points": 3}, False, 200, ("variance grows with d_k", 3.0)),
        ({"text": "Reworded", "points": 2}, True, 200, ("Reworded", 2.0)),  # same points: allowed
        ({"points": 3}, True, 409, ("variance grows with d_k", 2.0)),
        ({}, False, 400, ("variance grows with d_k", 2.0)),
        ({"points": 1000}, False, 400, ("variance grows with d_k", 2.0)),
        ({"text": ""}, False, 400, ("variance grows with d_k", 2.0)),
        ({"text": "ab\u0000"}, False, 400, ("variance grows with d_k", 2.0)),
    ],
)
def test_criterion_update_table(essay, body, graded_with_it, status, after):
    rubric = rubric_of(essay)
    criterion = rubric.items.first()
    if graded_with_it:
        services_rubrics.submission_grade_with_rubric(
            submission=essay["answers"]["sam"], rubric=rubric, grader=essay["world"].people.ta, item_ids=[criterion.pk]
        )
    response = call(essay, "ta", "patch", f"{C}rubric-criteria/{criterion.pk}/", body)
    assert response.status_code == status, response.content
    criterion.refresh_from_db()
    assert (criterion.text, criterion.points) == after


@pytest.mark.parametrize("graded_with_it, status", [(False, 204), (True, 409)])
def test_criterion_delete_table(essay, graded_with_it, status):
    rubric = rubric_of(essay)
    criterion = rubric.items.first()
    if graded_with_it:
        services_rubrics.submission_grade_with_rubric(
            submission=essay["answers"]["sam"], rubric=rubric, grader=essay["world"].people.ta, item_ids=[criterion.pk]
        )
    response = call(essay, "ta", "delete", f"{C}rubric-criteria/{criterion.pk}/")
    assert response.status_code == status
    assert RubricItem.objects.filter(pk=criterion.pk).exists() == graded_with_it


@pytest.mark.parametrize("role, method, status", [
    ("student", "patch", 403), ("student", "delete", 403), ("outsider", "patch", 404), ("outsider", "delete", 404),
])
def test_criterion_callers(essay, role, method, status):
    criterion = rubric_of(essay).items.first()
    response = call(essay, role, method, f"{C}rubric-criteria/{criterion.pk}/", {"text": "x"})
    assert response.status_code == status
    assert RubricItem.objects.filter(pk=criterion.pk, text="variance grows with d_k").exists()


def test_a_criterion_of_another_course_is_not_found(essay):
    world = essay["world"]
    elsewhere = Rubric.objects.create(course=world.people.other_course, exercise=essay["item"].exercise_version.exercise,
                                      part="why")
    criterion = RubricItem.objects.create(rubric=elsewhere, text="theirs", points=1)
    assert_problem(call(essay, "instructor", "patch", f"{C}rubric-criteria/{criterion.pk}/", {"text": "x"}), 404)
    assert_problem(call(essay, "instructor", "delete", f"{C}rubric-criteria/{criterion.pk}/"), 404)


# --- answers and applying rubric items ---------------------------------------------------


def test_answers_list_newest_per_student_with_ticked_items(essay):
    rubric = rubric_of(essay)
    big = rubric.items.first()
    services_rubrics.submission_grade_with_rubric(
        submission=essay["answers"]["sue"], rubric=rubric, grader=essay["world"].people.ta, item_ids=[big.pk]
    )
    response = call(essay, "ta", "get", essay["question"] + "answers/")
    assert response.status_code == 200
    rows = [(a["number"], a["username"], a["status"], a["score"], a["criteria"]) for a in response.json()]
    assert rows == [(1, "sam", "manual", None, []), (2, "sue", "graded", pytest.approx(2 / 3), [big.pk])]
    assert call(essay, "student", "get", essay["question"] + "answers/").status_code == 403
    assert call(essay, "outsider", "get", essay["question"] + "answers/").status_code == 404


def _apply_case(name):
    """A body for the grades/ table, built from the essay's real ids."""
    def build(essay, big, small):
        sam, sue = essay["answers"]["sam"].pk, essay["answers"]["sue"].pk
        return {
            "one item, two answers": {"submissions": [sam, sue], "criteria": [big]},
            "two items, one answer": {"submissions": [sam], "criteria": [big, small], "comment": "Both."},
            "replace with nothing": {"submissions": [sue], "replace": True},
            "duplicate ids": {"submissions": [sam, sam], "criteria": [small, small]},
            "unknown answer": {"submissions": [sam, essay["product"].pk], "criteria": [big]},
            "item of no rubric here": {"submissions": [sam], "criteria": [999999]},
            "no answers": {"submissions": [], "criteria": [big]},
            "no items, no replace": {"submissions": [sam]},
            "ids not numbers": {"submissions": ["sam"], "criteria": [big]},
            "submissions not a list": {"submissions": sam, "criteria": [big]},
            "comment not text": {"submissions": [sam], "criteria": [big], "comment": ["x"]},
        }[name]
    return build


@pytest.mark.parametrize(
    "case, status, scores, field",
    [
        # sue already has "softmax saturates" (1 of 3) before each case.
        ("one item, two answers", 200, {"sam": 2 / 3, "sue": 1.0}, None),
        ("two items, one answer", 200, {"sam": 1.0, "sue": 1 / 3}, None),
        ("replace with nothing", 200, {"sam": None, "sue": 0.0}, None),
        ("duplicate ids", 200, {"sam": 1 / 3, "sue": 1 / 3}, None),
        ("unknown answer", 400, {"sam": None, "sue": 1 / 3}, "submissions"),
        ("item of no rubric here", 400, {"sam": None, "sue": 1 / 3}, "criteria"),
        ("no answers", 400, {"sam": None, "sue": 1 / 3}, "submissions"),
        ("no items, no replace", 400, {"sam": None, "sue": 1 / 3}, "criteria"),
        ("ids not numbers", 400, {"sam": None, "sue": 1 / 3}, "submissions.0"),
        ("submissions not a list", 400, {"sam": None, "sue": 1 / 3}, "submissions"),
        ("comment not text", 400, {"sam": None, "sue": 1 / 3}, "comment"),
    ],
)
def test_apply_table(essay, case, status, scores, field):
    rubric = rubric_of(essay)
    big, small = rubric.items.all()
    services_rubrics.submission_grade_with_rubric(
        submission=essay["answers"]["sue"], rubric=rubric, grader=essay["world"].people.ta, item_ids=[small.pk]
    )
    body = _apply_case(case)(essay, big.pk, small.pk)
    response = call(essay, "ta", "post", essay["question"] + "grades/", body)
    assert response.status_code == status, response.content
    for username, score in scores.items():
        essay["answers"][username].refresh_from_db()
        stored = essay["answers"][username].score
        assert stored == (None if score is None else pytest.approx(score)), username
    if status == 400:
        assert field in response.json()["errors"]
    else:
        returned = {a["username"]: a for a in response.json()}
        assert set(returned) == {u for u in scores if scores[u] is not None and u in _graded_by(case)}
        for username, answer in returned.items():
            assert answer["status"] == "graded" and answer["score"] == pytest.approx(scores[username])


def _graded_by(case: str) -> set[str]:
    return {"one item, two answers": {"sam", "sue"}, "two items, one answer": {"sam"},
            "replace with nothing": {"sue"}, "duplicate ids": {"sam"}}[case]


def test_apply_keeps_each_comment_unless_one_is_given(essay):
    rubric = rubric_of(essay)
    big, small = rubric.items.all()
    ta = essay["world"].people.ta
    services_rubrics.submission_grade_with_rubric(
        submission=essay["answers"]["sue"], rubric=rubric, grader=ta, item_ids=[small.pk], comment="Say more."
    )
    sam, sue = essay["answers"]["sam"].pk, essay["answers"]["sue"].pk
    call(essay, "ta", "post", essay["question"] + "grades/", {"submissions": [sam, sue], "criteria": [big.pk]})
    comments = dict(ManualGrade.objects.filter(submission=sue).values_list("id", "comment"))
    assert sorted(comments.values()) == ["Say more.", "Say more."]
    call(essay, "ta", "post", essay["question"] + "grades/", {"submissions": [sue], "criteria": [big.pk], "comment": ""})
    assert ManualGrade.objects.filter(submission=sue).order_by("-id").first().comment == ""


def test_apply_without_a_rubric_is_not_found(essay):
    sam = essay["answers"]["sam"].pk
    assert_problem(call(essay, "ta", "post", essay["question"] + "grades/", {"submissions": [sam], "criteria": [1]}),
                   404, "no rubric yet")


@pytest.mark.parametrize("role, status", [("student", 403), ("outsider", 404), ("ta_read", 403), ("instructor", 200)])
def test_apply_callers(essay, role, status):
    rubric = rubric_of(essay)
    sam = essay["answers"]["sam"]
    response = call(essay, role, "post", essay["question"] + "grades/",
                    {"submissions": [sam.pk], "criteria": [rubric.items.first().pk]})
    assert response.status_code == status
    sam.refresh_from_db()
    assert sam.status == (SubmissionStatus.GRADED if status == 200 else SubmissionStatus.MANUAL)


# --- regrade requests ------------------------------------------------------------------


@pytest.fixture
def requested(essay):
    """sam's essay graded 2/3 and his request about it; sue's graded and answered."""
    rubric = rubric_of(essay)
    big, small = rubric.items.all()
    people = essay["world"].people
    for username, item in (("sam", big), ("sue", small)):
        services_rubrics.submission_grade_with_rubric(
            submission=essay["answers"][username], rubric=rubric, grader=people.ta, item_ids=[item.pk]
        )
        essay["answers"][username].refresh_from_db()
    sams = services_rubrics.regrade_request_create(submission=essay["answers"]["sam"], student=people.student,
                                                   message="I did say the softmax saturates.")
    sues = services_rubrics.regrade_request_create(submission=essay["answers"]["sue"], student=people.student2,
                                                   message="Please look again.")
    services_rubrics.regrade_request_reply(request=sues, replier=people.ta, reply="The grade stands.")
    return {**essay, "sams": sams, "sues": sues}


@pytest.mark.parametrize(
    "role, query, status, usernames",
    [
        ("ta", "", 200, ["sam"]),
        ("ta", "?status=open", 200, ["sam"]),
        ("ta", "?status=answered", 200, ["sue"]),
        ("instructor", "?status=all", 200, ["sue", "sam"]),  # newest first
        ("ta", "?status=closed", 400, None),
        ("student", "", 403, None),
        ("outsider", "", 404, None),
    ],
)
def test_regrade_requests_list_table(requested, role, query, status, usernames):
    response = call(requested, role, "get", f"{C}assignments/essay/regrade-requests/{query}")
    assert response.status_code == status
    if usernames is not None:
        assert [r["username"] for r in response.json()] == usernames
    if status == 200 and usernames == ["sam"]:
        (row,) = response.json()
        assert (row["assignment"], row["exercise"], row["part"], row["status"], row["score_before"]) == (
            "essay", "explain-scaling", "why", "open", pytest.approx(2 / 3)
        )
    if role == "ta":  # another assignment's list holds none of them
        assert call(requested, "ta", "get", f"{C}assignments/week1/regrade-requests/?status=all").json() == []


@pytest.mark.parametrize(
    "who, role, body, status, detail",
    [
        ("sams", "ta", {"reply": "You did; regraded."}, 200, ""),
        ("sues", "ta", {"reply": "Again?"}, 409, "already answered"),
        ("sams", "ta", {"reply": "  "}, 400, "reply"),
        ("sams", "ta", {}, 400, "reply"),
        ("sams", "ta", {"reply": "x" * 5001}, 400, "reply"),
        ("sams", "student", {"reply": "I answer myself"}, 403, ""),
        ("sams", "outsider", {"reply": "x"}, 404, ""),
        ("sams", "ta_read", {"reply": "x"}, 403, ""),
    ],
)
def test_regrade_reply_table(requested, who, role, body, status, detail):
    regrade = requested[who]
    response = call(requested, role, "post", f"{C}regrade-requests/{regrade.pk}/reply/", body)
    assert response.status_code == status, response.content
    regrade.refresh_from_db()
    if status == 200:
        data = response.json()
        assert (data["status"], data["reply"], data["replied_by"]) == ("answered", "You did; regraded.", "tariq")
        assert regrade.status == RegradeRequestStatus.ANSWERED
    else:
        assert_problem(response, status, detail)
        assert regrade.status == (RegradeRequestStatus.ANSWERED if who == "sues" else RegradeRequestStatus.OPEN)


def test_the_reply_records_the_score_after_a_regrade(requested):
    rubric = Rubric.objects.get()
    sam = requested["answers"]["sam"]
    call(requested, "ta", "post", requested["question"] + "grades/",
         {"submissions": [sam.pk], "criteria": [item.pk for item in rubric.items.all()]})
    data = call(requested, "ta", "post", f"{C}regrade-requests/{requested['sams'].pk}/reply/", {"reply": "Yes."}).json()
    assert (data["score_before"], data["score_after"]) == (pytest.approx(2 / 3), pytest.approx(1.0))


@pytest.mark.parametrize(
    "role, answer, body, status, detail",
    [
        ("student", "product", {"message": "Why only 1?"}, 201, ""),  # sam's own graded answer
        ("student", "sam", {"message": "Again"}, 409, "already asked"),  # his request is open
        ("student_read", "product", {"message": "Why?"}, 403, ""),
        ("student", "sue", {"message": "Look at hers"}, 404, ""),  # not his answer
        ("ta", "product", {"message": "On his behalf"}, 404, ""),  # staff ask for nobody
        ("student", "product", {"message": ""}, 400, "message"),
        ("student", "product", {}, 400, "message"),
        ("student", "product", {"message": "x" * 2001}, 400, "message"),
        ("student", "product", {"message": ["a"]}, 400, "message"),
    ],
)
def test_student_regrade_request_table(requested, role, answer, body, status, detail):
    submission = requested["product"] if answer == "product" else requested["answers"][answer]
    before = RegradeRequest.objects.count()
    response = call(requested, role, "post", f"/api/v1/submissions/{submission.pk}/regrade-requests/", body)
    assert response.status_code == status, response.content
    if status == 201:
        data = response.json()
        assert (data["username"], data["message"], data["status"], data["assignment"], data["part"]) == (
            "sam", "Why only 1?", "open", "week1", "product"
        )
        assert RegradeRequest.objects.count() == before + 1
    else:
        assert_problem(response, status, detail)
        assert RegradeRequest.objects.count() == before


def test_a_student_cannot_ask_about_an_answer_not_graded_yet(essay):
    response = call(essay, "student", "post", f"/api/v1/submissions/{essay['answers']['sam'].pk}/regrade-requests/",
                    {"message": "Grade it"})
    assert_problem(response, 409, "no grade yet")


def test_a_student_reads_the_replies_to_their_own_requests_only(requested):
    own = call(requested, "student", "get", f"/api/v1/submissions/{requested['answers']['sam'].pk}/regrade-requests/")
    assert [(r["message"], r["status"]) for r in own.json()] == [("I did say the softmax saturates.", "open")]
    sues = call(requested, "student", "get", f"/api/v1/submissions/{requested['answers']['sue'].pk}/regrade-requests/")
    assert_problem(sues, 404)
    requested["world"].tokens["student2"] = api_token_create(
        user=requested["world"].people.student2, name="sue", scope=TokenScope.WRITE, lifetime_days=7
    )[1]
    replied = call(requested, "student2", "get", f"/api/v1/submissions/{requested['answers']['sue'].pk}/regrade-requests/")
    assert [(r["reply"], r["replied_by"]) for r in replied.json()] == [("The grade stands.", "tariq")]


def test_apply_reads_what_was_ticked_under_the_rows_lock(essay):
    """The answers' rows are locked (in id order) before their earlier grades are read, so
    two graders applying items at once cannot drop each other's ticks."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    rubric = rubric_of(essay)
    big, small = rubric.items.all()
    sam, sue = essay["answers"]["sam"], essay["answers"]["sue"]
    with CaptureQueriesContext(connection) as queries:
        services_rubrics.rubric_items_apply(rubric=rubric, items=[big], submissions=[sue, sam],
                                            grader=essay["world"].people.ta)
    sql = [q["sql"] for q in queries.captured_queries]
    lock = next(i for i, q in enumerate(sql) if "FOR UPDATE" in q and '"grading_submission"' in q)
    first_grade_read = next(i for i, q in enumerate(sql) if 'FROM "instructor_manualgrade"' in q)
    assert lock < first_grade_read
    assert sql[lock].rstrip().endswith('ORDER BY "grading_submission"."id" ASC FOR UPDATE OF "grading_submission"')
