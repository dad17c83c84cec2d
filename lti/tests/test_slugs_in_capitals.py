"""A course or assignment the LMS makes never takes a short name that differs from one
stored before in capitals only: each keeps its own address."""

from __future__ import annotations

from courses.models import Assignment, Course
from lti import services


def test_a_new_lms_course_does_not_take_a_name_stored_in_capitals(lms):
    Course.objects.create(slug="ML-301", title="Stored before names were lower case")
    mapped = services.lti_context_create(
        platform=lms.platform, context={"id": "course-77", "label": "ML-301", "title": "Machine Learning 301"}
    )
    assert mapped.course.slug.startswith("ml-301-")
    assert len(mapped.course.slug) == len("ml-301-") + 6
    assert Course.objects.filter(slug__iexact="ml-301").count() == 1


def test_a_new_lms_assignment_does_not_take_a_name_stored_in_capitals(linked):
    Assignment.objects.create(course=linked.course, slug="Week-4", title="Stored in capitals")
    made = services.resource_link_map_new_assignment(link=linked.link, title="Week 4")
    assert made.slug.startswith("week-4-")
    assert len(made.slug) == len("week-4-") + 4
    assert Assignment.objects.filter(course=linked.course, slug__iexact="week-4").count() == 1
