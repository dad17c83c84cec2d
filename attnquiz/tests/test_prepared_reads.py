"""PreparedRead gives what the queryset it was built from gives, in one query, and refuses
the reads whose SQL a value could change."""

from __future__ import annotations

import threading

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.db import connection
from django.db.models import Count, F, Value
from django.db.models.functions import Concat

from attnquiz.prepared_reads import PreparedRead
from courses.models import AssignmentItem, Enrolment, Role
from exercises.models import Variant
from review.models import ReviewEntry
from exercises.selectors import _own_variant_of_item
from exercises.services import variant_get_or_create_for_item
from exams.selectors_accommodations import carried_accommodation


def _enrolments_of_user(*, user_id):
    return (
        Enrolment.objects.select_related("course", "user")
        .annotate(
            label=Concat("user__username", Value(" as "), "role"),
            course_enrolments=Count("course__enrolments"),
            course_code=F("course__slug"),
        )
        .filter(user_id=user_id)
        .order_by("course_id")
    )


ENROLMENTS_OF_USER = PreparedRead(_enrolments_of_user, user_id=int)


@pytest.fixture
def enrolments(demo):
    return list(Enrolment.objects.order_by("pk"))


def _fields(instance) -> dict:
    return {field.attname: getattr(instance, field.attname) for field in instance._meta.concrete_fields}


@pytest.mark.django_db
class TestResultsEqualTheQuerysets:
    def test_models_with_their_related_rows_and_annotations(self, enrolments, django_assert_num_queries):
        users = {enrolment.user_id for enrolment in enrolments}
        assert len(users) >= 3
        for user_id in users:
            expected = list(_enrolments_of_user(user_id=user_id))
            with django_assert_num_queries(1):
                got = ENROLMENTS_OF_USER.all(user_id=user_id)
                # the select_related rows came with it: no query reading them
                related = [(row.course.slug, row.user.username) for row in got]
            assert [_fields(row) for row in got] == [_fields(row) for row in expected]
            assert related == [(row.course.slug, row.user.username) for row in expected]
            assert [(row.label, row.course_enrolments, row.course_code) for row in got] == [
                (row.label, row.course_enrolments, row.course_code) for row in expected
            ]
            assert all(row._state.adding is False and row._state.db == "default" for row in got)

    def test_datetimes_come_back_as_the_queryset_converts_them(self, enrolments):
        enrolment = enrolments[0]
        got = ENROLMENTS_OF_USER.all(user_id=enrolment.user_id)
        row = next(row for row in got if row.pk == enrolment.pk)
        assert row.created_at == enrolment.created_at
        assert row.created_at.tzinfo is not None

    def test_values_list_rows_and_flat_values(self, enrolments):
        rows = PreparedRead(
            lambda *, course_id: Enrolment.objects.filter(course_id=course_id)
            .order_by("user__username")
            .values_list("user__username", "role"),
            course_id=int,
        )
        flat = PreparedRead(
            lambda *, course_id, role: Enrolment.objects.filter(course_id=course_id, role=role)
            .order_by("user_id")
            .values_list("user_id", flat=True),
            course_id=int,
            role=str,
        )
        course_id = enrolments[0].course_id
        expected_rows = list(
            Enrolment.objects.filter(course_id=course_id).order_by("user__username").values_list("user__username", "role")
        )
        assert rows.all(course_id=course_id) == expected_rows
        assert len(expected_rows) >= 3
        students = list(
            Enrolment.objects.filter(course_id=course_id, role=Role.STUDENT).order_by("user_id").values_list("user_id", flat=True)
        )
        assert flat.all(course_id=course_id, role=Role.STUDENT) == students
        assert flat.all(course_id=course_id, role="no such role") == []
        assert flat.first(course_id=course_id, role=Role.STUDENT) == students[0]
        assert flat.first(course_id=course_id + 10_000, role=Role.STUDENT) is None

    def test_a_string_value_is_a_parameter_never_sql(self, enrolments):
        read = PreparedRead(
            lambda *, role: Enrolment.objects.filter(role=role).values_list("pk", flat=True),
            role=str,
        )
        assert read.all(role="student' OR '1'='1") == []
        assert read.all(role="%") == []


@pytest.mark.django_db
class TestTheReadsThePagesMake:
    def test_own_variant_of_item_is_the_querysets_with_the_accommodation_read(self, demo, django_user_model):
        from exercises.selectors import _OWN_VARIANT_OF_ITEM

        student = django_user_model.objects.get(username="student1")
        item = AssignmentItem.objects.filter(assignment=demo.assignment).order_by("pk").first()
        variant = variant_get_or_create_for_item(item=item, student=student)
        values = dict(item_id=item.pk, student_id=student.pk, context=f"assignment:{item.pk}")

        expected = _own_variant_of_item(**values).get()
        got = _OWN_VARIANT_OF_ITEM.first(**values)
        assert got.pk == variant.pk
        assert _fields(got) == _fields(expected)
        assert got.assignment_item.assignment.course.slug == demo.course.slug
        assert got.exercise_version.exercise.slug == expected.exercise_version.exercise.slug
        assert carried_accommodation(got) == carried_accommodation(expected)
        assert vars(got)["own_accommodation_read"] is True
        # the deferred columns stay deferred
        assert got.exercise_version.get_deferred_fields() == {"source", "spec"}

        assert _OWN_VARIANT_OF_ITEM.first(**{**values, "context": f"assignment:{item.pk + 1}"}) is None
        assert _OWN_VARIANT_OF_ITEM.first(**{**values, "student_id": student.pk + 10_000}) is None

    def test_own_variant_for_answer_carries_the_role(self, demo, django_user_model):
        from grading.views import _OWN_VARIANT_FOR_ANSWER, _own_variant_for_answer

        student = django_user_model.objects.get(username="student1")
        item = AssignmentItem.objects.filter(assignment=demo.assignment).order_by("pk").first()
        variant = variant_get_or_create_for_item(item=item, student=student)

        got = _OWN_VARIANT_FOR_ANSWER.first(variant_id=variant.pk, user_id=student.pk)
        expected = _own_variant_for_answer(variant_id=variant.pk, user_id=student.pk).get()
        assert got.course_role == expected.course_role == Role.STUDENT
        assert _fields(got) == _fields(expected)
        other = django_user_model.objects.get(username="student2")
        assert _OWN_VARIANT_FOR_ANSWER.first(variant_id=variant.pk, user_id=other.pk) is None


@pytest.mark.django_db
class TestCompiledOnce:
    def test_the_build_runs_once_per_thread(self, enrolments):
        calls = []

        def build(*, user_id):
            calls.append(user_id)
            return Enrolment.objects.filter(user_id=user_id).values_list("pk", flat=True)

        read = PreparedRead(build, user_id=int)
        for enrolment in enrolments[:3]:
            assert read.all(user_id=enrolment.user_id) == list(
                Enrolment.objects.filter(user_id=enrolment.user_id).values_list("pk", flat=True)
            )
        assert len(calls) == 1
        assert calls[0] not in {enrolment.user_id for enrolment in enrolments}  # the placeholder

        compiled_elsewhere = []
        thread = threading.Thread(target=lambda: compiled_elsewhere.append(read._compiled_read()))
        thread.start()
        thread.join()
        assert len(calls) == 2 and compiled_elsewhere[0] is not read._compiled_read()


@pytest.mark.django_db
class TestRefused:
    @pytest.mark.parametrize(
        "values, message",
        [
            ({}, "exactly ['user_id']"),
            ({"user_id": 1, "extra": 2}, "exactly ['user_id']"),
            ({"user_id": None}, "user_id must be int, got NoneType"),
            ({"user_id": "1"}, "user_id must be int, got str"),
            ({"user_id": True}, "user_id must be int, got bool"),
            ({"user_id": 1.0}, "user_id must be int, got float"),
        ],
    )
    def test_values_of_the_wrong_name_or_type(self, values, message):
        with pytest.raises(TypeError, match=message.replace("[", r"\[").replace("]", r"\]")):
            ENROLMENTS_OF_USER.all(**values)

    @pytest.mark.parametrize("kinds", [{}, {"user_id": float}, {"user_id": list}, {"user_id": object}])
    def test_kinds_other_than_int_and_str(self, kinds):
        with pytest.raises(ImproperlyConfigured):
            PreparedRead(lambda **_: Enrolment.objects.all(), **kinds)

    @pytest.mark.parametrize(
        "build, kinds, message",
        [
            (
                lambda *, name: Enrolment.objects.filter(user__username__contains=name),
                {"name": str},
                "changes a value",
            ),
            (
                lambda *, name: Enrolment.objects.filter(user__username__startswith=name),
                {"name": str},
                "changes a value",
            ),
            (
                lambda *, user_id, course_id: Enrolment.objects.filter(user_id=user_id),
                {"user_id": int, "course_id": int},
                "does not use ['course_id']",
            ),
            (
                lambda *, user_id: Enrolment.objects.filter(user_id=user_id).prefetch_related("course"),
                {"user_id": int},
                "cannot prefetch",
            ),
            (
                lambda *, user_id: Enrolment.objects.filter(user_id=user_id).values("role"),
                {"user_id": int},
                "not ValuesIterable",
            ),
            pytest.param(
                lambda *, number: ReviewEntry.objects.filter(rating=number),
                {"number": int},
                "depends on its values",
                # a 16-bit column: PostgreSQL's range, which Django checks a value against
                marks=pytest.mark.skipif(connection.vendor != "postgresql", reason="SQLite has no small integers"),
            ),
        ],
        ids=["contains", "startswith", "unused value", "prefetch", "values dicts", "a small column"],
    )
    def test_reads_a_value_could_change_or_that_are_not_one_query(self, enrolments, build, kinds, message):
        read = PreparedRead(build, **kinds)
        values = {name: 1 if kind is int else "student1" for name, kind in kinds.items()}
        with pytest.raises(ImproperlyConfigured, match=message.replace("[", r"\[").replace("]", r"\]")):
            read.all(**values)


@pytest.mark.django_db
class TestTheWindowReads:
    """The window's row: the assignment, its course, the student's accommodations and
    attempt, joined only when they exist, as the queryset joins them."""

    def _rows(self, *, assignment, student_id):
        from exams.selectors import _window_row, _window_row_of

        got = _window_row(assignment=assignment, student_id=student_id)
        expected = _window_row_of(assignment_id=assignment.pk, student_id=student_id, clock_start=False).get()
        return got, expected

    @staticmethod
    def _joined(row) -> dict:
        return {
            name: _fields(vars(row)[name]) if vars(row).get(name) is not None else None
            for name in ("window_accommodation", "window_course_accommodation", "window_attempt")
        }

    def test_with_and_without_an_accommodation_and_an_attempt(self, demo, django_user_model):
        from datetime import timedelta

        from django.utils import timezone

        from exams.models import Accommodation, AssignmentAttempt

        assignment = demo.assignment
        student, other = (django_user_model.objects.get(username=name) for name in ("student1", "student2"))
        Accommodation.objects.create(assignment=assignment, student=student, time_limit_minutes=75)
        AssignmentAttempt.objects.create(
            assignment=assignment, student=student, started_at=timezone.now() - timedelta(minutes=3)
        )

        got, expected = self._rows(assignment=assignment, student_id=student.pk)
        assert _fields(got) == _fields(expected)
        assert self._joined(got) == self._joined(expected)
        assert got.window_accommodation.time_limit_minutes == 75
        assert got.window_attempt.student_id == student.pk and got.course.slug == demo.course.slug

        got, expected = self._rows(assignment=assignment, student_id=other.pk)
        assert self._joined(got) == self._joined(expected) == {
            "window_accommodation": None, "window_course_accommodation": None, "window_attempt": None,
        }

    def test_the_deadline_read_finds_only_an_own_attempt_on_an_exam(self, demo, django_user_model):
        from django.http import Http404
        from django.utils import timezone

        from courses.models import AssignmentKind
        from exams.models import AssignmentAttempt
        from exams.selectors import access_own_deadline

        assignment = demo.assignment
        student, other = (django_user_model.objects.get(username=name) for name in ("student1", "student2"))
        AssignmentAttempt.objects.create(assignment=assignment, student=student, started_at=timezone.now())
        slugs = dict(course_slug=demo.course.slug, assignment_slug=assignment.slug)
        with pytest.raises(Http404):  # homework has no deadline of an attempt
            access_own_deadline(**slugs, student=student)
        assignment.kind = AssignmentKind.EXAM
        assignment.save()
        window, course = access_own_deadline(**slugs, student=student)
        assert course.pk == demo.course.pk and window.attempt.student_id == student.pk
        with pytest.raises(Http404):
            access_own_deadline(**slugs, student=other)
        with pytest.raises(Http404):
            access_own_deadline(course_slug=demo.course.slug, assignment_slug=assignment.slug + "x", student=student)


@pytest.mark.django_db
class TestHostileValues:
    @pytest.mark.parametrize("item_id", [2**63, 10**30, -(2**63) - 1])
    def test_an_id_no_column_can_hold_matches_nothing(self, demo, django_user_model, item_id):
        from exercises.selectors import _OWN_VARIANT_OF_ITEM

        student = django_user_model.objects.get(username="student1")
        assert _OWN_VARIANT_OF_ITEM.first(item_id=item_id, student_id=student.pk, context="assignment:1") is None

    @pytest.mark.parametrize("item_id", [2**31, 2**63 - 1, 2**63, 10**30])
    def test_the_exercise_page_of_such_an_id_is_a_404(self, demo, client, django_user_model, item_id):
        from django.urls import reverse

        client.force_login(django_user_model.objects.get(username="student1"))
        assert client.get(reverse("exercise", args=[item_id])).status_code == 404


@pytest.mark.django_db
class TestTheSessionsUser:
    """The backend's get_user, a prepared read: the active user of the session's id."""

    def _get_user(self, user_id):
        from accounts.backends import UsernameOrEmailBackend

        return UsernameOrEmailBackend().get_user(user_id)

    def test_the_user_of_an_id_as_the_session_stores_it(self, demo, django_user_model):
        student = django_user_model.objects.get(username="student1")
        for stored in (student.pk, str(student.pk)):
            user = self._get_user(stored)
            assert (user.pk, user.username, user.password) == (student.pk, "student1", student.password)

    def test_no_user_for_an_inactive_account_or_an_id_that_is_none(self, demo, django_user_model):
        student = django_user_model.objects.get(username="student1")
        student.is_active = False
        student.save()
        assert self._get_user(student.pk) is None
        for stored in ("abc", "", None, "1.5", 2**31, str(2**63), str(10**30), 10**30, [1]):
            assert self._get_user(stored) is None, stored


@pytest.mark.django_db
class TestTheAssignmentPagesReads:
    def test_a_student_finds_only_a_published_assignment_the_staff_any(self, demo, django_user_model, django_assert_num_queries):
        from django.http import Http404

        from courses.selectors import access_assignment

        student = django_user_model.objects.get(username="student1")
        instructor = django_user_model.objects.get(username="instructor")
        slugs = dict(course_slug=demo.course.slug, assignment_slug=demo.assignment.slug)
        with django_assert_num_queries(3):  # the course, the role, the assignment
            assignment, role = access_assignment(user=student, **slugs)
            assert assignment.course.slug == demo.course.slug  # came with it: no query
        assert (assignment.pk, role) == (demo.assignment.pk, Role.STUDENT)

        demo.assignment.is_published = False
        demo.assignment.save()
        with pytest.raises(Http404):
            access_assignment(user=student, **slugs)
        assignment, role = access_assignment(user=instructor, **slugs)
        assert (assignment.pk, role) == (demo.assignment.pk, Role.INSTRUCTOR)
        for other in ({**slugs, "assignment_slug": "no-such"}, {**slugs, "course_slug": "no-such"}):
            with pytest.raises(Http404):
                access_assignment(user=instructor, **other)

    def test_the_statuses_read_only_the_students_own_variants_of_this_assignment(self, demo, django_user_model):
        from exercises.selectors import _VARIANTS_OF_ASSIGNMENT, assignment_item_statuses

        student, other = (django_user_model.objects.get(username=name) for name in ("student1", "student2"))
        items = list(AssignmentItem.objects.filter(assignment=demo.assignment).order_by("position", "pk"))
        mine = variant_get_or_create_for_item(item=items[0], student=student)
        variant_get_or_create_for_item(item=items[1], student=other)

        own = _VARIANTS_OF_ASSIGNMENT.all(assignment_id=demo.assignment.pk, student_id=student.pk)
        assert [variant.pk for variant in own] == [mine.pk]
        assert _VARIANTS_OF_ASSIGNMENT.all(assignment_id=demo.assignment.pk + 10_000, student_id=student.pk) == []

        rows = assignment_item_statuses(assignment=demo.assignment, student=student)
        assert [row["item"].pk for row in rows] == [item.pk for item in items]
        assert {row["status"]["state"] for row in rows} == {"not started"}
        assert all(row["item"].assignment is demo.assignment for row in rows)


def _prepared_statements_of_this_connection() -> list[str]:
    with connection.cursor() as cursor:  # Django's own cursor: binds on the client, never prepares
        cursor.execute("SELECT statement FROM pg_prepared_statements ORDER BY statement")
        return [row[0] for row in cursor.fetchall()]


@pytest.mark.django_db
@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL keeps the prepared statements")
class TestPlannedOncePerConnection:
    def test_the_read_is_a_prepared_statement_and_the_orms_queries_are_not(self, enrolments):
        user_id = enrolments[0].user_id
        before = _prepared_statements_of_this_connection()
        first = ENROLMENTS_OF_USER.all(user_id=user_id)
        again = ENROLMENTS_OF_USER.all(user_id=user_id)
        list(Enrolment.objects.filter(user_id=user_id))  # the ORM's own read
        added = [statement for statement in _prepared_statements_of_this_connection() if statement not in before]
        assert len(added) == 1  # one statement for both runs of the read; none for the ORM's
        assert "courses_enrolment" in added[0] and "$1" in added[0]
        assert [row.pk for row in first] == [row.pk for row in again] == [
            row.pk for row in _enrolments_of_user(user_id=user_id)
        ]

    def test_with_prepared_statements_off_it_binds_on_the_client(self, enrolments):
        """A PgBouncer in transaction mode keeps no prepared statements:
        DATABASE_PREPARED_STATEMENTS=0 sets the connection's threshold to None."""
        connection.ensure_connection()
        threshold = connection.connection.prepare_threshold
        connection.connection.prepare_threshold = None
        try:
            before = _prepared_statements_of_this_connection()
            read = PreparedRead(lambda *, course_id: Enrolment.objects.filter(course_id=course_id), course_id=int)
            rows = read.all(course_id=enrolments[0].course_id)
            assert _prepared_statements_of_this_connection() == before
            assert {row.pk for row in rows} == {e.pk for e in enrolments if e.course_id == enrolments[0].course_id}
        finally:
            connection.connection.prepare_threshold = threshold

    def test_the_query_log_shows_the_values(self, enrolments, django_assert_num_queries):
        user_id = enrolments[0].user_id
        with django_assert_num_queries(1) as captured:
            ENROLMENTS_OF_USER.all(user_id=user_id)
        assert f'"courses_enrolment"."user_id" = {user_id}' in captured.captured_queries[0]["sql"]
