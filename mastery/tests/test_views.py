"""The instructor's skill grid for every role, its order and paging, and the student's skill
map on the dashboard with its levels and misconception wording."""

import pytest
from django.urls import reverse

from authoring.tests.factories import PASSWORD, ROLE_USERS, people_create, request_as, user_create
from courses.models import Enrolment, Role
from mastery import selectors
from mastery.models import SkillMastery
from mastery.urls import urlpatterns

pytestmark = pytest.mark.django_db

# anonymous, student of the course, student of another course, TA, instructor, instructor of another course
ROLES = ("anonymous", "student", "other_student", "ta", "instructor", "outsider")
WALK = [
    # (url name, path, expected status per role in ROLES order)
    ("course_grid", reverse("mastery:course_grid", args=["attn"]), (302, 403, 404, 200, 200, 404)),
    ("course_grid", reverse("mastery:course_grid", args=["attn"]) + "?page=x", (302, 403, 404, 200, 200, 404)),
    ("course_grid", reverse("mastery:course_grid", args=["no-such-course"]), (302, 404, 404, 404, 404, 404)),
]


@pytest.fixture
def people():
    people = people_create()
    other_student = user_create("olga")
    Enrolment.objects.create(course=people.other_course, user=other_student, role=Role.STUDENT)
    return people


def as_role(client, role, path):
    if role == "other_student":
        client.login(username="olga", password=PASSWORD)
        return client.get(path)
    return request_as(client, role, "get", path)


def test_the_walk_covers_every_url_of_the_app():
    assert sorted({p.name for p in urlpatterns}) == sorted({name for name, _, _ in WALK})


@pytest.mark.parametrize("role_index,role", list(enumerate(ROLES)))
@pytest.mark.parametrize("row", WALK, ids=lambda row: row[1])
def test_every_url_for_every_role(client, people, role_index, role, row):
    _, path, expected = row
    assert as_role(client, role, path).status_code == expected[role_index], (role, path)
    assert set(ROLE_USERS) | {"anonymous", "other_student"} == set(ROLES)


def mastery(student, skill, p_known, attempts=2, recent=(), course=None):
    from courses.models import Course

    return SkillMastery.objects.create(
        student=student, course=course or Course.objects.get(slug="attn"), skill=skill, p_known=p_known, attempts=attempts, recent_misconceptions=list(recent)
    )


def test_grid_puts_the_class_weakest_skills_first_and_says_practice_never_counts(client, people):
    mastery(people.student, "scaling", 0.2)
    mastery(people.student2, "scaling", 0.4)  # mean 0.3
    mastery(people.student, "softmax", 0.97)  # mean 0.97
    mastery(people.student2, "variance-derivation", 0.5)  # mean 0.5
    outsider_student = user_create("olaf")  # not in the course: never counted
    mastery(outsider_student, "softmax", 0.01)
    client.login(username="tariq", password=PASSWORD)
    response = client.get(reverse("mastery:course_grid", args=["attn"]))
    page = response.content.decode()
    columns = response.context["columns"]
    assert [c.skill for c in columns][:3] == ["scaling", "variance-derivation", "softmax"]
    assert [(c.mean, c.students_seen) for c in columns][:3] == [(pytest.approx(0.3), 2), (0.5, 1), (0.97, 1)]
    # the never-attempted skills follow, in the vocabulary's order
    assert [c.skill for c in columns][3:] == [
        "dot-product-scores", "softmax-saturation", "weighted-values", "projections", "matrix-shapes", "multi-head-shapes",
    ]
    assert "<strong>Practice never counts toward grades</strong>" in page
    rows = response.context["rows"]
    assert [(row.name, [cell.level for cell in row.cells[:3]]) for row in rows] == [
        ("Sue Shaw", ["shaky", "shaky", "not yet seen"]),
        ("Sam Stone", ["shaky", "not yet seen", "strong"]),
    ]
    assert "olaf" not in page
    assert 'href="/teach/attn/skills/"' in client.get(reverse("instructor:course", args=["attn"])).content.decode()


def test_grid_pages_through_many_students_with_a_fixed_number_of_queries(client, people, django_user_model,
                                                                         django_assert_max_num_queries):
    users = [django_user_model(username=f"s{index:04d}", last_name=f"Z{index:04d}") for index in range(120)]
    django_user_model.objects.bulk_create(users)
    users = list(django_user_model.objects.filter(username__startswith="s0"))
    Enrolment.objects.bulk_create([Enrolment(course=people.course, user=user, role=Role.STUDENT) for user in users])
    SkillMastery.objects.bulk_create([
        SkillMastery(student=user, course=people.course, skill="scaling", p_known=0.5, attempts=1) for user in users
    ])
    client.login(username="ines", password=PASSWORD)
    url = reverse("mastery:course_grid", args=["attn"])
    with django_assert_max_num_queries(12):
        first = client.get(url)
    assert len(first.context["rows"]) == selectors.GRID_PAGE_SIZE
    assert "Page 1 of 3 (122 students)" in first.content.decode()
    last = client.get(url + "?page=3")
    assert len(last.context["rows"]) == 22
    assert client.get(url + "?page=999").context["page"].number == 3  # out of range: the last page


@pytest.mark.parametrize(
    ("p_known", "attempts", "level"),
    [(None, 0, "not yet seen"), (0.99, 0, "not yet seen"), (0.95, 3, "strong"), (0.9499, 3, "developing"),
     (0.6, 1, "developing"), (0.5999, 1, "shaky"), (0.0, 4, "shaky")],
)
def test_levels_and_their_thresholds(p_known, attempts, level):
    assert selectors.mastery_level(p_known, attempts) == level


@pytest.mark.parametrize(
    ("recent", "note"),
    [
        ([], ""),
        (["", ""], ""),
        (["forgot_sigma"], "last attempt showed ‘forgot σ’"),
        (["forgot_sigma", "forgot_sigma", ""], "last 2 attempts showed ‘forgot σ’"),
        (["no_scaling", "no_scaling", "no_scaling", "divided_by_d_k"], "last 3 attempts showed ‘left out √d_k’"),
        (["", "no_scaling", "divided_by_d_k", "no_scaling", ""], "2 of the last 5 attempts showed ‘left out √d_k’"),
        (["", "divided_by_d_k", "no_scaling"], "1 of the last 3 attempts showed ‘divided by d_k, not √d_k’"),
        (["unknown_code"], "last attempt showed ‘unknown_code’"),
        ([None, 3], ""),
    ],
)
def test_misconception_note(recent, note):
    assert selectors.misconception_note(recent) == note


def test_dashboard_shows_the_students_skill_map(client, people):
    mastery(people.student, "variance-derivation", 0.31, attempts=2, recent=["forgot_sigma", "forgot_sigma"])
    mastery(people.student, "scaling", 0.98, attempts=3)
    client.login(username="sam", password=PASSWORD)
    page = client.get(reverse("dashboard")).content.decode()
    assert f'<h3 id="skill-map-heading-{people.course.pk}">My skills in {people.course.title}</h3>' in page
    assert ('<span class="skill-name">variance derivation</span>: <strong class="skill-level">'
            '<span class="skill-mark" aria-hidden="true"></span>shaky</strong>') in page
    assert ('<span class="aq-note">(2 attempts, 31% likely known)</span> — '
            '<span class="skill-note">last 2 attempts showed ‘forgot σ’</span>') in page
    assert '<span class="skill-name">scaling by √d_k</span>: <strong class="skill-level"><span class="skill-mark" aria-hidden="true"></span>strong</strong>' in page
    assert page.count("not yet seen") == 7
    assert "Practice never counts toward grades." in page
    assert "style=" not in page.split('id="skill-map-heading')[1].split("</section>")[0]


def test_staff_only_dashboards_show_no_skill_map(client, people):
    client.login(username="ines", password=PASSWORD)
    assert "My skills" not in client.get(reverse("dashboard")).content.decode()


def _grid(client, **params):
    response = client.get(reverse("mastery:course_grid", args=["attn"]), params)
    return [row.username for row in response.context["rows"]], response.content.decode()


def test_grid_sorts_by_any_column_and_filters_by_level(client, people):
    tom = user_create("tom", first_name="Tom", last_name="Ash")
    Enrolment.objects.create(course=people.course, user=tom, role=Role.STUDENT)
    mastery(people.student, "scaling", 0.2)  # sam: shaky
    mastery(people.student2, "scaling", 0.97)  # sue: strong
    mastery(tom, "softmax", 0.7)  # tom: developing softmax, scaling not yet seen
    client.login(username="tariq", password=PASSWORD)
    assert _grid(client)[0] == ["tom", "sue", "sam"]  # by last name: Ash, Shaw, Stone
    assert _grid(client, sort="name", order="desc")[0] == ["sam", "sue", "tom"]
    assert _grid(client, sort="scaling")[0] == ["sam", "sue", "tom"]  # lowest first, unseen last
    assert _grid(client, sort="scaling", order="desc")[0] == ["sue", "sam", "tom"]
    assert _grid(client, level="strong", level_skill="scaling")[0] == ["sue"]
    assert _grid(client, level="developing")[0] == ["tom"]
    assert _grid(client, level="not yet seen", level_skill="scaling")[0] == ["tom"]
    assert _grid(client, level="shaky", sort="bogus", level_skill="nope")[0] == ["sam"]  # unknown values ignored
    names, page = _grid(client, sort="scaling")
    assert 'aria-sort="ascending"' in page
    assert "Tom Ash <span class=\"muted\">tom</span>" in page  # one way of naming: name, then username
