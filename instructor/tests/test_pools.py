"""Pools on the teaching side: each student is scored only on the items they were given
(gradebook, CSV, LTI score, dashboard), analytics count a pool item over those who were
given it, and a regrade regrades what each student answered without changing the draws."""

import csv
import io
import re

import pytest

from exams.access import access_code_matches
from django.urls import reverse

from authoring.tests.factories import (
    PASSWORD, assignment_create, product_yaml, published_version, submission_add, user_create, variant_for,
)
from courses.models import Enrolment, PoolDraw, Role
from exercises.selectors import assignment_summaries
from instructor import selectors, services
from lti.deep_linking import assignment_points
from lti.selectors import assignment_score


@pytest.fixture
def pooled(people):
    """Items pa and pb form pool "p" (2 points each), pc stands alone (1 point); each item
    has two parts of 1 point. sam was given pa, sue pb, tom (no answers) nothing yet.

    sam: pa both parts right; and pb's product right, from a variant he had before pb
         joined the pool (not his item: it must not count)
    sue: pb product wrong, total right; pc product right, total wrong
    """
    tom = user_create("tom")
    Enrolment.objects.create(course=people.course, user=tom, role=Role.STUDENT)
    versions = [published_version(source=product_yaml(slug=slug)) for slug in ("pa", "pb", "pc")]
    assignment = assignment_create(people.course, versions)
    pa, pb, pc = assignment.items.order_by("position")
    for item, pool, points in ((pa, "p", 2), (pb, "p", 2), (pc, "", 1)):
        item.pool, item.points = pool, points
        item.save()
    sam, sue = people.student, people.student2
    PoolDraw.objects.create(assignment=assignment, student=sam, pool="p", item=pa)
    PoolDraw.objects.create(assignment=assignment, student=sue, pool="p", item=pb)
    params = {"a": 3, "b": 4}
    submission_add(variant_for(pa, sam, params=params), "product", "12", awarded=1.0)
    submission_add(pa.variants.get(student=sam), "total", "7", awarded=1.0)
    submission_add(variant_for(pb, sam, params=params, seed=2), "product", "12", awarded=1.0)
    sue_pb = variant_for(pb, sue, params=params, seed=3)
    submission_add(sue_pb, "product", "13", awarded=0.0)
    submission_add(sue_pb, "total", "7", awarded=1.0)
    sue_pc = variant_for(pc, sue, params=params, seed=4)
    submission_add(sue_pc, "product", "12", awarded=1.0)
    submission_add(sue_pc, "total", "8", awarded=0.0)
    return {"assignment": assignment, "items": (pa, pb, pc), "tom": tom}


def book_rows(book):
    return [
        (row["student"].username, row["scores"], row["given"], [cell.shown for cell in row["cells"]], row["total"],
         row["out_of"], round(row["percent"], 2))
        for row in book["rows"]
    ]


def test_the_gradebook_scores_each_student_out_of_the_items_they_were_given(pooled):
    book = selectors.gradebook(assignment=pooled["assignment"])
    assert [info.label() for info in book["columns"]] == ["pa (/2)", "pb (/2)", "pc (/1)"]
    assert book["max_points"] == 3.0
    assert book_rows(book) == [
        ("sam", [2.0, None, None], [True, False, True], ["2.00", "not given", "—"], 2.0, 3.0, 66.67),
        ("sue", [None, 1.0, 0.5], [False, True, True], ["not given", "1.00", "0.50"], 1.5, 3.0, 50.0),
        ("tom", [None, None, None], [False, False, True], ["not given", "not given", "—"], 0.0, 3.0, 0.0),
    ]


def test_the_gradebook_page_and_csv_say_not_given(client, people, pooled):
    client.login(username="ines", password=PASSWORD)
    page = client.get(reverse("instructor:gradebook", args=["attn", "week1"])).content.decode()
    assert page.count(">not given</td>") == 4
    assert "Total /3<" in page
    response = client.get(reverse("instructor:gradebook_csv", args=["attn", "week1"]))
    rows = list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert rows == [
        ["username", "student_id", "email", "first_name", "last_name", "pa (/2)", "pb (/2)", "pc (/1)",
         "total (/3)", "percent", "pending"],
        ["sam", "", "", "Sam", "Stone", "2", "not given", "not attempted", "2", "66.67", ""],
        ["sue", "", "", "Sue", "Shaw", "not given", "1", "0.5", "1.5", "50", ""],
        ["tom", "", "", "", "", "not given", "not given", "not attempted", "not attempted", "", ""],
    ]


def test_the_api_gradebook_marks_the_items_given(client, people, pooled):
    client.login(username="ines", password=PASSWORD)
    data = client.get(reverse("api:gradebook", args=["attn", "week1"])).json()
    assert [column["pool"] for column in data["columns"]] == ["p", "p", ""]
    assert [(row["username"], row["scores"], row["given"], row["out_of"]) for row in data["rows"]] == [
        ("sam", [2.0, None, None], [True, False, True], 3.0),
        ("sue", [None, 1.0, 0.5], [False, True, True], 3.0),
        ("tom", [None, None, None], [False, False, True], 3.0),
    ]


def test_a_staff_page_shows_which_item_a_student_was_given(client, people, pooled):
    client.login(username="tariq", password=PASSWORD)
    page = client.get(reverse("instructor:student", args=["attn", "week1", people.student.pk])).content.decode()
    assert "Pool “p”: pa" in page


def test_analytics_count_a_pool_item_over_the_students_given_it(pooled):
    report = selectors.assignment_analytics(assignment=pooled["assignment"])
    assert report["students"] == 2
    summary = {
        exercise["info"].slug: (
            exercise["students"],
            [(part["key"], part["attempts"], part["students"], part["mean_score"]) for part in exercise["parts"]],
        )
        for exercise in report["exercises"]
    }
    assert summary == {
        "pa": (1, [("product", 1, 1, 1.0), ("total", 1, 1, 1.0)]),
        # sam's answer to pb (not his item) is left out
        "pb": (1, [("product", 1, 1, 0.0), ("total", 1, 1, 1.0)]),
        # The mean is over the students who answered: sam never answered pc, he is not a 0 there.
        # pc is worth 1 point, 0.5 a part (pa and pb 2 points, 1 a part), as in the gradebook.
        "pc": (2, [("product", 1, 1, 0.5), ("total", 1, 1, 0.0)]),
    }


def test_the_lms_score_and_the_dashboard_are_out_of_the_students_own_items(people, pooled):
    assignment = pooled["assignment"]
    sam = assignment_score(assignment=assignment, student=people.student)
    sue = assignment_score(assignment=assignment, student=people.student2)
    assert (sam.earned, sam.possible, sue.earned, sue.possible) == (2.0, 3.0, 1.5, 3.0)
    assert assignment_points(assignment) == 3.0
    summary = assignment_summaries(course=people.course, role=Role.STUDENT, student=people.student)[0]
    assert (summary["score_percent"], summary["solved"], summary["total"]) == (67, 1, 2)
    tom = assignment_summaries(course=people.course, role=Role.STUDENT, student=pooled["tom"])[0]
    assert (tom["score_percent"], tom["total"]) == (0, 2)
    assert not PoolDraw.objects.filter(student=pooled["tom"]).exists()  # a summary draws nothing


def test_a_regrade_regrades_what_each_student_answered_and_keeps_the_draws(settings, people, pooled):
    settings.GRADING_MODE = "inline"
    assignment = pooled["assignment"]
    draws_before = sorted(PoolDraw.objects.values_list("student__username", "pool", "item_id"))
    book_before = book_rows(selectors.gradebook(assignment=assignment))
    job = services.regrade_job_create(assignment=assignment, actor=people.instructor, dry_run=False, enqueue=False)
    services.regrade_job_run(job_id=job.pk)
    job.refresh_from_db()
    assert (job.status, job.total, job.processed) == ("done", 7, 7)
    assert sorted(PoolDraw.objects.values_list("student__username", "pool", "item_id")) == draws_before
    assert book_rows(selectors.gradebook(assignment=assignment)) == book_before


# --- Authoring: pools, shuffle and the exam access controls --------------------------------


@pytest.fixture
def unpooled(people):
    versions = [published_version(source=product_yaml(slug=slug)) for slug in ("pa", "pb", "pc")]
    assignment = assignment_create(people.course, versions)
    return assignment, list(assignment.items.order_by("position"))


def pools_url():
    return reverse("instructor:item_pools", args=["attn", "week1"])


def test_the_items_page_puts_exercises_into_a_pool(client, people, unpooled):
    assignment, (pa, pb, pc) = unpooled
    client.login(username="ines", password=PASSWORD)
    page = client.get(reverse("instructor:assignment", args=["attn", "week1"])).content.decode()
    assert f'<label class="aq-visually-hidden" for="id_pool_{pa.pk}">Pool of pa</label>' in page
    response = client.post(pools_url(), {f"pool_{pa.pk}": " p ", f"pool_{pb.pk}": "p", f"pool_{pc.pk}": ""})
    assert response.status_code == 302
    assert list(assignment.items.order_by("position").values_list("pool", flat=True)) == ["p", "p", ""]


def test_a_pool_of_unequal_points_is_a_form_error_and_saves_nothing(client, people, unpooled):
    assignment, (pa, pb, pc) = unpooled
    pb.points = 2
    pb.save()
    client.login(username="ines", password=PASSWORD)
    response = client.post(pools_url(), {f"pool_{pa.pk}": "p", f"pool_{pb.pk}": "p", f"pool_{pc.pk}": "p"})
    assert response.status_code == 422
    assert (
        "Every exercise in pool “p” must carry the same points (found 1, 2). Give them equal points first."
        in response.content.decode()
    )
    assert list(assignment.items.values_list("pool", flat=True)) == ["", "", ""]


def test_a_pool_name_too_long_is_a_form_error(client, people, unpooled):
    assignment, (pa, _, _) = unpooled
    client.login(username="ines", password=PASSWORD)
    response = client.post(pools_url(), {f"pool_{pa.pk}": "x" * 65})
    assert response.status_code == 422
    assert "Ensure this value has at most 64 characters (it has 65)." in response.content.decode()


def test_an_item_a_student_was_given_stays_in_its_pool(client, people, pooled):
    pa, pb, pc = pooled["items"]
    client.login(username="ines", password=PASSWORD)
    response = client.post(pools_url(), {f"pool_{pa.pk}": "", f"pool_{pb.pk}": "p", f"pool_{pc.pk}": "q"})
    assert response.status_code == 422
    assert "Students have already been given pa from its pool; it stays in that pool" in response.content.decode()
    pa.refresh_from_db()
    pc.refresh_from_db()
    assert (pa.pool, pc.pool) == ("p", "")


def test_changing_one_pool_items_points_changes_the_pools(client, people, pooled):
    pa, pb, pc = pooled["items"]
    client.login(username="ines", password=PASSWORD)
    url = reverse("instructor:item_update", args=["attn", "week1", pb.pk])
    asked = client.post(url, {"points": "4", "position": "2"})
    # sam and sue have started this homework: new points ask first.
    assert asked.status_code == 200
    token = re.search(r'name="impact" value="([^"]+)"', asked.content.decode()).group(1)
    response = client.post(url, {"points": "4", "position": "2", "confirm": "yes", "impact": token})
    assert response.status_code == 302
    assert dict(pooled["assignment"].items.values_list("exercise_version__exercise__slug", "points")) == {
        "pa": 4.0, "pb": 4.0, "pc": 1.0,
    }


def edit(client, **fields):
    data = {
        "title": "Week 1", "slug": "week1", "attempts_per_part": "3", "penalty_per_extra_attempt": "0",
        "late_penalty": "0", "solution_policy": "after_solved", "session_policy": "any", **fields,
    }
    return client.post(reverse("instructor:assignment_edit", args=["attn", "week1"]), data)


def test_the_assignment_form_validates_the_allowed_networks(client, people, unpooled):
    assignment, _ = unpooled
    client.login(username="ines", password=PASSWORD)
    response = edit(client, allowed_networks="192.0.2.0/24\n10.1.2.3/8\nlab")
    assert response.status_code == 422
    page = response.content.decode()
    assert "Line 2, “10.1.2.3/8”: host bits are set (e.g. write 10.0.0.0/8, not 10.1.2.3/8)." in page
    assert "Line 3, “lab”: not an IPv4 or IPv6 range in CIDR notation" in page
    assignment.refresh_from_db()
    assert assignment.allowed_networks == ""


def test_the_assignment_form_saves_order_and_access_controls(client, people, unpooled):
    assignment, _ = unpooled
    client.login(username="ines", password=PASSWORD)
    response = edit(
        client, allowed_networks=" 192.0.2.0/24\n2001:db8::/32 \n", access_code=" owl-42 ",
        session_policy="second_takes_over", shuffle_items="on",
    )
    assert response.status_code == 302
    assignment.refresh_from_db()
    assert (assignment.allowed_networks, assignment.session_policy, assignment.shuffle_items) == (
        "192.0.2.0/24\n2001:db8::/32", "second_takes_over", True,
    )
    # The code is stored hashed, and the hash matches what the instructor typed.
    assert assignment.access_code.startswith("hmac-sha256$") and "owl-42" not in assignment.access_code
    assert access_code_matches(stored=assignment.access_code, given="owl-42")
    page = client.get(reverse("instructor:assignment", args=["attn", "week1"])).content.decode()
    assert "order shuffled per student · access code · allowed networks only · one session: a second one ends the first" in page
