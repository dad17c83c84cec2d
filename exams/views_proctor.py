"""The staff's accommodations pages (list, one student's, CSV import; the course-wide ones:
list, one student's) and the proctor view
(live table, extend one student's time). Thin over exams.services_accommodations and the
selectors. Teaching assistants see both; only instructors change accommodations."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from attnquiz.confirmations import ConfirmationNeeded, confirmation_shown, confirmed_of
from courses.models import Role

from . import selectors_accommodations as selectors
from . import selectors_proctor
from . import services_accommodations as services
from .access import attempts_bound
from .forms_accommodations import (
    AccommodationForm,
    AccommodationsCsvForm,
    CourseAccommodationForm,
    ExtendTimeForm,
)


@login_required
@require_GET
def accommodations(request, course_slug: str, assignment_slug: str):
    assignment, role = selectors.access_accommodations(
        user=request.user, course_slug=course_slug, assignment_slug=assignment_slug
    )
    return render(
        request,
        "exams/accommodations.html",
        {
            "course": assignment.course,
            "assignment": assignment,
            "rows": selectors.accommodation_rows(assignment=assignment),
            "history": selectors.accommodation_history(assignment=assignment),
            "is_instructor": role == Role.INSTRUCTOR,
        },
    )


def _done(who: str, outcome: str, detail: str) -> str:
    """What the page says of a save: "sam: extra minutes 5 → 10." (no second full stop
    after a confirmed sentence)."""
    if outcome == "skip":
        return f"{who}: nothing changed."
    return f"{who}: {detail}" + ("" if detail.endswith((".", ".)")) else ".")


def _exists_notice(*, who: str, place: str, summary: str, typed: str) -> str:
    """What the "add" form says when the student chosen already has an accommodation: it
    opens theirs for editing instead of replacing it."""
    text = (
        f"Nothing was saved: {who} already has {place} ({summary or 'no values'}). "
        "It is shown below with its values: change what you need and save."
    )
    return text + (f" You had entered: {typed}." if typed else "")


@login_required
@require_http_methods(["GET", "POST"])
def accommodation_edit(request, course_slug: str, assignment_slug: str, user_id: int | None = None):
    """Add one student's accommodation (no ``user_id``) or change it. Adding one for a
    student who already has one saves nothing and opens theirs for editing; a save that
    ends or shortens the student's running attempt asks first (nothing saved until
    "Save anyway")."""
    assignment, role = selectors.access_accommodations(
        user=request.user, course_slug=course_slug, assignment_slug=assignment_slug, change=True
    )
    student = (
        selectors.access_accommodation_student(assignment=assignment, user_id=user_id)
        if user_id is not None
        else None
    )
    current, course_wide = None, ""
    if student is not None:
        current = assignment.accommodations.filter(student=student).first()
        course_wide = selectors.course_accommodation_summary(
            assignment.course.course_accommodations.filter(student=student).first()
        )
    initial = {name: getattr(current, name) for name in services.FIELDS} if current else {}
    form = AccommodationForm(
        request.POST if request.method == "POST" else None,
        initial=initial,
        assignment=assignment,
        students=selectors.course_students(assignment=assignment),
        student=student,
        marked=selectors.accommodated_student_ids(assignment=assignment) if student is None else (),
    )
    confirmation = None
    if request.method == "POST" and form.is_valid():
        chosen = form.chosen_student()
        try:
            outcome, detail = services.accommodation_set(
                assignment=assignment, student=chosen, values=form.values(), actor=request.user,
                confirmed=confirmed_of(request.POST), only_new=student is None,
            )
        except services.AccommodationExists as exists:
            tz = selectors.course_zone(assignment)
            messages.warning(request, _exists_notice(
                who=chosen.username, place="an accommodation on this assignment",
                summary=selectors.accommodation_summary(exists.current, tz=tz),
                typed=services.values_text(form.values(), tz=tz),
            ))
            return redirect("proctor:accommodation_edit", course_slug, assignment_slug, chosen.pk)
        except ConfirmationNeeded as needed:
            confirmation = confirmation_shown(needed)
        except services.AccommodationRefused as refused:
            for name, message in refused.problems.items():
                form.add_error(name or None, message)
        else:
            who = chosen.username
            messages.success(request, _done(who, outcome, detail))
            return redirect("proctor:accommodations", course_slug, assignment_slug)
    return render(
        request,
        "exams/accommodation_form.html",
        {"course": assignment.course, "assignment": assignment, "form": form, "student": student,
         "current": current, "course_wide": course_wide, "confirmation": confirmation},
        status=422 if form.errors else 200,
    )


@login_required
@require_POST
def accommodation_remove(request, course_slug: str, assignment_slug: str, user_id: int):
    """Remove one student's accommodation; when that ends or shortens their running attempt,
    the student's form again with the question and a button that removes it anyway."""
    assignment, role = selectors.access_accommodations(
        user=request.user, course_slug=course_slug, assignment_slug=assignment_slug, change=True
    )
    student = selectors.access_accommodation_student(assignment=assignment, user_id=user_id)
    try:
        removed = services.accommodation_remove(
            assignment=assignment, student=student, actor=request.user, confirmed=confirmed_of(request.POST)
        )
    except ConfirmationNeeded as needed:
        current = assignment.accommodations.filter(student=student).first()
        form = AccommodationForm(
            initial={name: getattr(current, name) for name in services.FIELDS} if current else {},
            assignment=assignment, students=selectors.course_students(assignment=assignment), student=student,
        )
        return render(
            request,
            "exams/accommodation_form.html",
            {"course": assignment.course, "assignment": assignment, "form": form, "student": student,
             "current": current, "course_wide": selectors.course_accommodation_summary(
                 assignment.course.course_accommodations.filter(student=student).first()
             ), "remove_confirmation": confirmation_shown(needed)},
        )
    if removed:
        messages.success(request, f"{student.username}: accommodation removed; the assignment's limits apply.")
    else:
        messages.error(request, f"{student.username} has no accommodation on this assignment.")
    return redirect("proctor:accommodations", course_slug, assignment_slug)


@login_required
@require_http_methods(["GET", "POST"])
def accommodations_import(request, course_slug: str, assignment_slug: str):
    """A CSV of accommodations: a dry run first (what would change, every row's errors,
    whose running time it would cut short), then apply; rows that cut someone's time are
    applied only with the dry run's confirmation, else the dry run is shown again, asking."""
    assignment, role = selectors.access_accommodations(
        user=request.user, course_slug=course_slug, assignment_slug=assignment_slug, change=True
    )
    form = AccommodationsCsvForm(request.POST or None, request.FILES or None)
    report, problem, text, asked_again = None, None, "", None
    if request.method == "POST" and form.is_valid():
        text = form.cleaned_data["text"]
        dry_run = request.POST.get("apply") != "1"
        try:
            rows = services.accommodation_rows_from_csv(text)
            try:
                report = services.accommodations_import(
                    assignment=assignment, rows=rows, dry_run=dry_run, actor=request.user,
                    confirmed=confirmed_of(request.POST),
                )
            except ConfirmationNeeded as needed:
                asked_again = confirmation_shown(needed)
                report = services.accommodations_import(
                    assignment=assignment, rows=rows, dry_run=True, actor=request.user
                )
        except services.AccommodationRefused as refused:
            problem = refused.message
        else:
            if not report.dry_run:
                messages.success(
                    request, f"Imported: {report.changes} change{'s' if report.changes != 1 else ''}."
                )
    return render(
        request,
        "exams/accommodations_import.html",
        {"course": assignment.course, "assignment": assignment, "form": form, "report": report,
         "problem": problem, "text": text, "columns": services.CSV_COLUMNS, "asked_again": asked_again},
        status=422 if (form.errors or problem or (report is not None and report.errors)) else 200,
    )


@login_required
@require_GET
def course_accommodations(request, course_slug: str):
    """The course-wide accommodations: list and history."""
    course, role = selectors.access_course_accommodations(user=request.user, course_slug=course_slug)
    return render(
        request,
        "exams/course_accommodations.html",
        {
            "course": course,
            "rows": [
                {"accommodation": row, "summary": selectors.course_accommodation_summary(row)}
                for row in selectors.course_accommodations_of(course=course)
            ],
            "history": selectors.course_accommodation_history(course=course),
            "is_instructor": role == Role.INSTRUCTOR,
        },
    )


@login_required
@require_http_methods(["GET", "POST"])
def course_accommodation_edit(request, course_slug: str, user_id: int | None = None):
    """Add one student's course-wide accommodation (no ``user_id``) or change it; as the
    assignment's: an existing one opens for editing, a cut to a running attempt asks first."""
    course, role = selectors.access_course_accommodations(user=request.user, course_slug=course_slug, change=True)
    student = selectors.access_course_student(course=course, user_id=user_id) if user_id is not None else None
    current = course.course_accommodations.filter(student=student).first() if student is not None else None
    initial = {name: getattr(current, name) for name in services.COURSE_FIELDS} if current else {}
    form = CourseAccommodationForm(
        request.POST if request.method == "POST" else None,
        initial=initial,
        students=selectors.students_of_course(course_id=course.pk),
        student=student,
        marked=selectors.course_accommodated_student_ids(course=course) if student is None else (),
    )
    confirmation = None
    if request.method == "POST" and form.is_valid():
        chosen = form.chosen_student()
        try:
            outcome, detail = services.course_accommodation_set(
                course=course, student=chosen, values=form.values(), actor=request.user,
                confirmed=confirmed_of(request.POST), only_new=student is None,
            )
        except services.AccommodationExists as exists:
            messages.warning(request, _exists_notice(
                who=chosen.username, place="a course-wide accommodation",
                summary=selectors.course_accommodation_summary(exists.current),
                typed=services.values_text(form.values(), tz=None),
            ))
            return redirect("proctor:course_accommodation_edit", course_slug, chosen.pk)
        except ConfirmationNeeded as needed:
            confirmation = confirmation_shown(needed)
        except services.AccommodationRefused as refused:
            for name, message in refused.problems.items():
                form.add_error(name or None, message)
        else:
            who = chosen.username
            messages.success(request, _done(who, outcome, detail))
            return redirect("proctor:course_accommodations", course_slug)
    return render(
        request,
        "exams/course_accommodation_form.html",
        {"course": course, "form": form, "student": student, "current": current, "confirmation": confirmation},
        status=422 if form.errors else 200,
    )


@login_required
@require_POST
def course_accommodation_remove(request, course_slug: str, user_id: int):
    course, role = selectors.access_course_accommodations(user=request.user, course_slug=course_slug, change=True)
    student = selectors.access_course_student(course=course, user_id=user_id)
    try:
        removed = services.course_accommodation_remove(
            course=course, student=student, actor=request.user, confirmed=confirmed_of(request.POST)
        )
    except ConfirmationNeeded as needed:
        current = course.course_accommodations.filter(student=student).first()
        form = CourseAccommodationForm(
            initial={name: getattr(current, name) for name in services.COURSE_FIELDS} if current else {},
            students=selectors.students_of_course(course_id=course.pk), student=student,
        )
        return render(
            request,
            "exams/course_accommodation_form.html",
            {"course": course, "form": form, "student": student, "current": current,
             "remove_confirmation": confirmation_shown(needed)},
        )
    if removed:
        messages.success(request, f"{student.username}: course-wide accommodation removed.")
    else:
        messages.error(request, f"{student.username} has no course-wide accommodation.")
    return redirect("proctor:course_accommodations", course_slug)


def _proctor_context(assignment, role) -> dict:
    rows = selectors_proctor.proctor_rows(assignment=assignment)
    return {
        "course": assignment.course,
        "assignment": assignment,
        "rows": rows,
        "counts": selectors_proctor.proctor_counts(rows),
        "is_instructor": role == Role.INSTRUCTOR,
    }


@login_required
@require_GET
def proctor(request, course_slug: str, assignment_slug: str):
    assignment, role = selectors.access_accommodations(
        user=request.user, course_slug=course_slug, assignment_slug=assignment_slug
    )
    context = _proctor_context(assignment, role)
    context["extend_form"] = ExtendTimeForm(students=selectors.course_students(assignment=assignment))
    context["bound_attempts"] = attempts_bound(assignment=assignment)
    return render(request, "exams/proctor.html", context)


@login_required
@require_GET
def proctor_rows(request, course_slug: str, assignment_slug: str):
    """The live table alone, for the page's htmx polling."""
    assignment, role = selectors.access_accommodations(
        user=request.user, course_slug=course_slug, assignment_slug=assignment_slug
    )
    return render(request, "exams/_proctor_rows.html", _proctor_context(assignment, role))


@login_required
@require_POST
def proctor_extend(request, course_slug: str, assignment_slug: str):
    """Extend one student's time. Reopening an attempt after its review showed the student
    verdicts, scores or solutions asks first: the proctor page again with the question and a
    button that posts the same extension with its token (nothing is saved until then)."""
    assignment, role = selectors.access_accommodations(
        user=request.user, course_slug=course_slug, assignment_slug=assignment_slug, change=True
    )
    form = ExtendTimeForm(request.POST, students=selectors.course_students(assignment=assignment))
    if not form.is_valid():
        messages.error(request, " ".join(message for errors in form.errors.values() for message in errors))
        return redirect("proctor:view", course_slug, assignment_slug)
    student, minutes = form.cleaned_data["student"], form.cleaned_data["minutes"]
    try:
        extension = services.accommodation_extend(
            assignment=assignment, student=student, minutes=minutes, actor=request.user,
            confirmed=confirmed_of(request.POST),
        )
    except ConfirmationNeeded as needed:
        context = _proctor_context(assignment, role)
        context["extend_form"] = form
        context["bound_attempts"] = attempts_bound(assignment=assignment)
        context["confirmation"] = {
            **confirmation_shown(needed), "fields": [("student", student.pk), ("minutes", minutes)],
        }
        return render(request, "exams/proctor.html", context)
    except services.AccommodationRefused as refused:
        messages.error(request, refused.message)
    else:
        messages.success(
            request, services.extension_text(extension, student=student, minutes=minutes, assignment=assignment)
        )
    return redirect("proctor:view", course_slug, assignment_slug)
