"""Teaching pages: assignments, gradebook and CSV, submissions, manual grading, regrades,
analytics. Thin: every fetch goes through an ``access_*`` selector."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from attnquiz import confirmations
from authoring.selectors import published_versions
from courses.models import Role
from grading.core.misconceptions import MISCONCEPTION_LABELS

from . import claims, selectors, selectors_fairness, selectors_hand_grading, selectors_rubrics, services
from .csv_response import csv_streaming_response, wants_excel_bom, xlsx_response
from .forms import (
    AssignmentForm, HandScoreForm, ItemAddForm, ItemPoolsForm, ItemUpdateForm, ManualGradeForm, RegradeForm,
)
from .models import RegradeStatus
from .views_rubrics import anonymous_grading


def _assignment_redirect(assignment, name: str = "instructor:assignment"):
    return redirect(name, assignment.course.slug, assignment.slug)


def edit_confirmed(request) -> confirmations.Confirmed:
    """What the instructor confirmed of an edit that reaches students who started the
    assignment: the token of the confirmation they answered, or False; the service checks
    it against the impact computed again, never trusting it."""
    return confirmations.confirmed_of(request.POST)


def render_edit_confirmation(request, *, assignment, role: str, needed, button: str):
    """The assignment page with a confirmation on top: what ``needed`` says (who the edit
    reaches and how) and a button that posts the same fields again with its token,
    confirmed. Nothing is saved."""
    fields = [
        (name, value)
        for name, values in request.POST.lists() if name not in ("csrfmiddlewaretoken", confirmations.CONFIRM_FIELD, confirmations.TOKEN_FIELD)
        for value in values
    ]
    confirmation = {
        **confirmations.confirmation_shown(needed), "action": request.get_full_path(), "fields": fields, "button": button,
    }
    return _render_assignment_detail(request, assignment=assignment, role=role, confirmation=confirmation)


@login_required
@require_GET
def course_home(request, course_slug: str):
    course, role = selectors.access_teaching(user=request.user, course_slug=course_slug)
    return render(
        request,
        "instructor/course_home.html",
        {
            "course": course,
            "role": role,
            "is_instructor": role == Role.INSTRUCTOR,
            "assignments": course.assignments.all(),
            "manual_waiting": selectors_rubrics.manual_waiting_count(course=course),
        },
    )


@login_required
@require_http_methods(["GET", "POST"])
def assignment_new(request, course_slug: str):
    course, role = selectors.access_teaching(user=request.user, course_slug=course_slug, instructor_only=True)
    form = AssignmentForm(request.POST or None, initial={"attempts_per_part": 3, "is_published": False})
    if request.method == "POST" and form.is_valid():
        try:
            assignment = services.assignment_create(course=course, **form.cleaned_data)
        except services.InstructorRefused as refused:
            form.add_error("slug", refused.message)
        else:
            messages.success(request, f"Created {assignment.title}. Now add exercises.")
            return _assignment_redirect(assignment)
    return render(
        request, "instructor/assignment_form.html", {"course": course, "form": form, "assignment": None},
        status=422 if form.errors else 200,
    )


@login_required
@require_http_methods(["GET", "POST"])
def assignment_edit(request, course_slug: str, assignment_slug: str):
    assignment, role = selectors.access_staff_assignment(
        user=request.user, course_slug=course_slug, assignment_slug=assignment_slug, instructor_only=True
    )
    form = AssignmentForm(request.POST or None, instance=assignment)
    confirmation = None
    if request.method == "POST" and form.is_valid():
        try:
            services.assignment_update(assignment=assignment, confirmed=edit_confirmed(request), **form.cleaned_data)
        except services.ConfirmationNeeded as needed:
            confirmation = confirmations.confirmation_shown(needed)
        except services.InstructorRefused as refused:
            form.add_error("slug", refused.message)
        else:
            messages.success(request, "Saved the assignment.")
            return _assignment_redirect(assignment)
    # A failed ModelForm has already copied the new values onto the instance: reload it.
    assignment.refresh_from_db()
    return render(
        request, "instructor/assignment_form.html",
        {"course": assignment.course, "form": form, "assignment": assignment, "confirmation": confirmation},
        status=422 if form.errors else 200,
    )


@login_required
@require_GET
def assignment_detail(request, course_slug: str, assignment_slug: str):
    assignment, role = selectors.access_staff_assignment(
        user=request.user, course_slug=course_slug, assignment_slug=assignment_slug
    )
    return _render_assignment_detail(request, assignment=assignment, role=role)


def _render_assignment_detail(
    request, *, assignment, role: str, pools_form=None, status: int = 200, confirmation: dict | None = None
):
    items = selectors.assignment_items_info(assignment=assignment)
    return render(
        request,
        "instructor/assignment_detail.html",
        {
            "course": assignment.course,
            "assignment": assignment,
            "is_instructor": role == Role.INSTRUCTOR,
            "items": items,
            "pools_form": pools_form or ItemPoolsForm(items=[info.item for info in items]),
            "versions": published_versions(),
            "jobs": assignment.regrade_jobs.all()[:5],
            "solutions_shown": selectors.solutions_in_words(assignment=assignment),
            "confirmation": confirmation,
        },
        status=status,
    )


@login_required
@require_POST
def item_pools(request, course_slug: str, assignment_slug: str):
    """Put the assignment's exercises into pools (a pool name per exercise)."""
    assignment, role = selectors.access_staff_assignment(
        user=request.user, course_slug=course_slug, assignment_slug=assignment_slug, instructor_only=True
    )
    form = ItemPoolsForm(request.POST, items=assignment.items.select_related("exercise_version__exercise"))
    if form.is_valid():
        try:
            changed = services.assignment_pools_set(
                assignment=assignment, pools=form.pools(), confirmed=edit_confirmed(request)
            )
        except services.ConfirmationNeeded as needed:
            return render_edit_confirmation(
                request, assignment=assignment, role=role, needed=needed, button="Save the pools anyway"
            )
        except services.InstructorRefused as refused:
            form.add_error(None, refused.message)
        else:
            messages.success(request, f"Saved the pools ({len(changed)} exercise{'s' * (len(changed) != 1)} changed).")
            return _assignment_redirect(assignment)
    return _render_assignment_detail(request, assignment=assignment, role=role, pools_form=form, status=422)


@login_required
@require_POST
def item_add(request, course_slug: str, assignment_slug: str):
    assignment, role = selectors.access_staff_assignment(
        user=request.user, course_slug=course_slug, assignment_slug=assignment_slug, instructor_only=True
    )
    form = ItemAddForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Choose a published exercise version and points of 0 or more.")
        return _assignment_redirect(assignment)
    try:
        item = services.assignment_item_add(
            assignment=assignment, version=form.cleaned_data["version"], points=form.cleaned_data["points"],
            confirmed=edit_confirmed(request),
        )
    except services.ConfirmationNeeded as needed:
        return render_edit_confirmation(
            request, assignment=assignment, role=role, needed=needed, button="Add it anyway"
        )
    except services.InstructorRefused as refused:
        messages.error(request, refused.message)
    else:
        messages.success(request, f"Added {item.exercise_version}.")
    return _assignment_redirect(assignment)


@login_required
@require_POST
def item_update(request, course_slug: str, assignment_slug: str, item_id: int):
    item, role = selectors.access_assignment_item_staff(
        user=request.user, course_slug=course_slug, assignment_slug=assignment_slug,
        item_id=item_id, instructor_only=True,
    )
    form = ItemUpdateForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Points must be 0 or more and the position a whole number.")
        return _assignment_redirect(item.assignment)
    previous_version = item.exercise_version
    new_points = form.cleaned_data["points"] != item.points
    new_version = form.cleaned_data["version"] not in (None, previous_version)
    try:
        item = services.assignment_item_update(
            item=item, points=form.cleaned_data["points"], position=form.cleaned_data["position"],
            version=form.cleaned_data["version"], confirmed=edit_confirmed(request),
        )
    except services.ConfirmationNeeded as needed:
        button = (
            "Save anyway" if new_points and new_version
            else "Switch the version anyway" if new_version else "Change the points anyway"
        )
        return render_edit_confirmation(request, assignment=item.assignment, role=role, needed=needed, button=button)
    except services.InstructorRefused as refused:
        messages.error(request, refused.message)
    else:
        if item.exercise_version_id != previous_version.pk:
            messages.success(
                request,
                f"Switched to {item.exercise_version}. Run a regrade to apply it to answers already given.",
            )
        else:
            messages.success(request, "Saved.")
    return _assignment_redirect(item.assignment)


@login_required
@require_POST
def item_remove(request, course_slug: str, assignment_slug: str, item_id: int):
    item, role = selectors.access_assignment_item_staff(
        user=request.user, course_slug=course_slug, assignment_slug=assignment_slug,
        item_id=item_id, instructor_only=True,
    )
    try:
        services.assignment_item_remove(item=item, confirmed=edit_confirmed(request))
    except services.ConfirmationNeeded as needed:
        return render_edit_confirmation(
            request, assignment=item.assignment, role=role, needed=needed, button="Remove it anyway"
        )
    except services.InstructorRefused as refused:
        messages.error(request, refused.message)
    else:
        messages.success(request, "Removed the exercise.")
    return _assignment_redirect(item.assignment)


def _int_or_none(value):
    try:
        return int(value) if value not in (None, "") else None
    except ValueError:
        return None


@login_required
@require_GET
def gradebook(request, course_slug: str, assignment_slug: str):
    assignment, role = selectors.access_staff_assignment(
        user=request.user, course_slug=course_slug, assignment_slug=assignment_slug
    )
    student_filter = request.GET.get("student", "").strip()[:100]
    item_filter = _int_or_none(request.GET.get("exercise"))
    include_dropped = request.GET.get("dropped") == "1"
    book = selectors.gradebook(
        assignment=assignment, student_filter=student_filter, item_filter=item_filter,
        include_dropped=include_dropped,
    )
    return render(
        request,
        "instructor/gradebook.html",
        {
            "course": assignment.course,
            "assignment": assignment,
            "role": role,  # the navigation's instructor-only links, without asking again
            "book": book,
            "student_filter": student_filter,
            "item_filter": item_filter,
            "include_dropped": include_dropped,
        },
    )


@login_required
@require_GET
def gradebook_csv(request, course_slug: str, assignment_slug: str):
    assignment, role = selectors.access_staff_assignment(
        user=request.user, course_slug=course_slug, assignment_slug=assignment_slug
    )
    return csv_streaming_response(
        selectors.gradebook_csv_rows(assignment=assignment),
        f"{assignment.course.slug}-{assignment.slug}-scores.csv",
        bom=wants_excel_bom(request),
    )


@login_required
@require_GET
def gradebook_xlsx(request, course_slug: str, assignment_slug: str):
    assignment, role = selectors.access_staff_assignment(
        user=request.user, course_slug=course_slug, assignment_slug=assignment_slug
    )
    return xlsx_response(
        selectors.gradebook_csv_rows(assignment=assignment),
        f"{assignment.course.slug}-{assignment.slug}-scores.xlsx",
        sheet_title=assignment.slug,
    )


@login_required
@require_GET
def submissions_csv(request, course_slug: str, assignment_slug: str):
    assignment, role = selectors.access_staff_assignment(
        user=request.user, course_slug=course_slug, assignment_slug=assignment_slug
    )
    return csv_streaming_response(
        selectors.submissions_csv_rows(assignment=assignment),
        f"{assignment.course.slug}-{assignment.slug}-submissions.csv",
    )


@login_required
@require_GET
def student_submissions(request, course_slug: str, assignment_slug: str, user_id: int):
    assignment, role = selectors.access_staff_assignment(
        user=request.user, course_slug=course_slug, assignment_slug=assignment_slug
    )
    student = selectors.access_course_student(course=assignment.course, user_id=user_id)
    submissions = selectors.student_submissions(assignment=assignment, student=student)
    return render(
        request,
        "instructor/student_submissions.html",
        {
            "course": assignment.course, "assignment": assignment, "student": student, "submissions": submissions,
            "pool_draws": selectors.student_pool_draws(assignment=assignment, student=student),
        },
    )


@login_required
@require_GET
def submission_detail(request, course_slug: str, submission_id: int):
    submission, role = selectors.access_course_submission(
        user=request.user, course_slug=course_slug, submission_id=submission_id
    )
    return _render_submission_detail(request, submission=submission)


@login_required
@require_POST
def submission_grade_by_hand(request, course_slug: str, submission_id: int):
    """A person sets the score of a checked answer (over the checker's verdict)."""
    submission, role = selectors_hand_grading.access_hand_grading(
        user=request.user, course_slug=course_slug, submission_id=submission_id
    )
    grading = selectors_hand_grading.hand_grading(submission=submission, course=_course_of(submission))
    form = HandScoreForm(request.POST, part_points=grading.part_points)
    if not form.is_valid():
        return _render_submission_detail(request, submission=submission, grading=grading, form=form, status=422)
    try:
        services.submission_grade_manually(
            submission=submission, grader=request.user, score=form.cleaned_data["fraction"],
            comment=form.cleaned_data["comment"],
        )
    except services.InstructorRefused as refused:
        return _render_submission_detail(
            request, submission=submission, grading=grading, form=form, refusal=refused.message, status=422
        )
    messages.success(request, f"Score of submission {submission.pk} set by hand.")
    return redirect("instructor:submission", course_slug, submission.pk)


@login_required
@require_POST
def submission_grade_return_to_checker(request, course_slug: str, submission_id: int):
    """A person's score of a checked answer gives way to the checker's grade again."""
    submission, role = selectors_hand_grading.access_hand_grading(
        user=request.user, course_slug=course_slug, submission_id=submission_id
    )
    try:
        services.submission_grade_return_to_checker(submission=submission, grader=request.user)
    except services.InstructorRefused as refused:
        return _render_submission_detail(request, submission=submission, refusal=refused.message, status=409)
    messages.success(request, f"Submission {submission.pk} has the checker's grade again.")
    return redirect("instructor:submission", course_slug, submission.pk)


def _course_of(submission):
    return submission.variant.assignment_item.assignment.course


def _render_submission_detail(
    request, *, submission, grading=None, form=None, refusal: str = "", status: int = 200
):
    course = _course_of(submission)
    grading = grading or selectors_hand_grading.hand_grading(submission=submission, course=course)
    if form is None and grading.allowed:
        form = HandScoreForm(part_points=grading.part_points)
    return render(
        request,
        "instructor/submission_detail.html",
        {
            "course": course,
            "submission": submission,
            "answer": selectors.submission_answer_shown(submission=submission),
            "grading": grading,
            "checker_steps_html": selectors_hand_grading.checker_steps_html(submission=submission),
            "hand_form": form,
            "refusal": refusal,
            "regrades": submission.regrade_changes.select_related("job"),
        },
        status=status,
    )


@login_required
@require_GET
def manual_queue(request, course_slug: str):
    course, role = selectors.access_teaching(user=request.user, course_slug=course_slug)
    include_graded = request.GET.get("all") == "1"
    return render(
        request,
        "instructor/manual_queue.html",
        {
            "course": course,
            "submissions": claims.queue_rows_with_claims(
                selectors_rubrics.manual_queue_rows(course=course, include_graded=include_graded)
            ),
            "include_graded": include_graded,
            "anonymous": anonymous_grading(request, course),
        },
    )


@login_required
@require_http_methods(["GET", "POST"])
def manual_grade(request, course_slug: str, submission_id: int):
    submission, role = selectors.access_course_submission(
        user=request.user, course_slug=course_slug, submission_id=submission_id
    )
    rubric_answer_id = selectors_rubrics.course_rubric_answer_id(submission=submission)
    if rubric_answer_id is not None:
        return _graded_by_course_rubric(request, submission=submission, answer_id=rubric_answer_id)
    rubric = selectors.rubric_for(submission=submission)
    form = ManualGradeForm(request.POST or None, rubric=rubric)
    refusal, status = None, None
    checked = selectors_hand_grading.hand_grading(submission=submission, course=_course_of(submission)).checked
    if request.method == "POST" and checked:
        # This page grades by a rubric; a checked answer's score is set on its own page.
        refusal = "Only free-text answers are graded on this page: set a checked answer's score on its submission page."
    elif request.method == "POST" and form.is_valid():
        try:
            services.submission_grade_manually(
                submission=submission, grader=request.user, score=form.cleaned_data["score"],
                criteria_met=sorted(form.cleaned_data.get("criteria") or []), comment=form.cleaned_data["comment"],
                grade_seen=services.grade_seen_posted(request.POST.get("grade_seen")),
            )
        except services.GradedMeanwhile as refused:
            refusal, status = refused.message, 409
        except services.InstructorRefused as refused:
            refusal = refused.message
        else:
            claims.answer_claim_release(submission=submission, grader=request.user)
            messages.success(request, f"Graded submission {submission.pk}.")
            return redirect("instructor:manual_queue", course_slug)
    claimed_by_other = claims.answer_claim_take(submission=submission, grader=request.user)
    history = list(submission.manual_grades.select_related("grader"))
    return render(
        request,
        "instructor/manual_grade.html",
        {
            "course": submission.variant.assignment_item.assignment.course,
            "submission": submission,
            "answer": selectors.submission_answer_shown(submission=submission),
            "rubric": rubric,
            "form": form,
            "refusal": refusal,
            "history": history,
            "grade_seen": history[0].pk if history else 0,
            "claimed_by_other": claimed_by_other,
            "anonymous": anonymous_grading(request, _course_of(submission)),
        },
        status=status or (422 if (form.errors or refusal) else 200),
    )


GRADED_BY_COURSE_RUBRIC = "This part is graded by the course's rubric, on its grading page."
NEWER_ANSWER_GRADED = (
    "Submission {old} is an earlier attempt: the course's rubric grades each student's newest answer "
    "to the part, submission {new}."
)
REFUSED_FOR_COURSE_RUBRIC = (
    "Not saved: this part is graded by the course's rubric now, not by the author's criteria. "
    "Grade the answer on its grading page."
)


def _graded_by_course_rubric(request, *, submission, answer_id: int):
    """The part has a course rubric, so the author's criteria grade nothing here: a GET goes
    to the answer's page of the rubric; a POST (from a page opened before the rubric was
    made) is refused with nothing saved, and the link."""
    course = _course_of(submission)
    url = reverse(
        "instructor:grading_answer", args=[course.slug, submission.variant.assignment_item_id, submission.part, answer_id]
    )
    if request.method == "GET":
        messages.info(request, GRADED_BY_COURSE_RUBRIC)
        if answer_id != submission.pk:
            messages.info(request, NEWER_ANSWER_GRADED.format(old=submission.pk, new=answer_id))
        return redirect(url)
    return render(
        request,
        "instructor/manual_grade.html",
        {
            "course": course,
            "submission": submission,
            "answer": selectors.submission_answer_shown(submission=submission),
            "rubric_grading_url": url,
            "refusal": REFUSED_FOR_COURSE_RUBRIC,
            "history": submission.manual_grades.select_related("grader"),
            "anonymous": anonymous_grading(request, course),
        },
        status=409,
    )


@login_required
@require_http_methods(["GET", "POST"])
def regrade_new(request, course_slug: str, assignment_slug: str):
    assignment, role = selectors.access_staff_assignment(
        user=request.user, course_slug=course_slug, assignment_slug=assignment_slug, instructor_only=True
    )
    infos = selectors.assignment_items_info(assignment=assignment)
    choices = [(info.item.pk, f"{info.slug} (v{info.item.exercise_version.number})") for info in infos]
    form = RegradeForm(request.POST or None, item_choices=choices, infos=infos)
    if request.method == "POST" and form.is_valid():
        try:
            job = services.regrade_job_create(
                assignment=assignment, actor=request.user, dry_run=True,
                allow_lower=form.cleaned_data["allow_lower"], item_ids=form.cleaned_data["items"],
                parts=form.cleaned_data["parts"],
            )
        except services.InstructorRefused as refused:
            form.add_error(None, refused.message)
        else:
            return redirect("instructor:regrade", course_slug, job.pk)
    return render(
        request,
        "instructor/regrade_new.html",
        {"course": assignment.course, "assignment": assignment, "form": form,
         "jobs": assignment.regrade_jobs.select_related("created_by")[:20]},
        status=422 if form.errors else 200,
    )


def _job_context(job):
    return {
        "job": job,
        "course": job.assignment.course,
        "assignment": job.assignment,
        "changes": job.changes.select_related("submission__student").order_by("submission_id")[:1000],
        "applied_by": job.applications.order_by("-created_at").first(),
        "finished": job.is_finished,
        "can_apply": job.dry_run and job.status == RegradeStatus.DONE and job.changed > 0,
    }


@login_required
@require_GET
def regrade_detail(request, course_slug: str, job_id: int):
    job, role = selectors.access_regrade_job(user=request.user, course_slug=course_slug, job_id=job_id)
    return render(request, "instructor/regrade_detail.html", _job_context(job))


@login_required
@require_GET
def regrade_progress(request, course_slug: str, job_id: int):
    job, role = selectors.access_regrade_job(user=request.user, course_slug=course_slug, job_id=job_id)
    response = render(request, "instructor/_regrade_progress.html", _job_context(job))
    if job.is_finished:
        response["HX-Refresh"] = "true"  # show the full list of changes once
    return response


@login_required
@require_POST
def regrade_apply(request, course_slug: str, job_id: int):
    job, role = selectors.access_regrade_job(user=request.user, course_slug=course_slug, job_id=job_id)
    try:
        applied = services.regrade_job_apply(dry_run=job, actor=request.user)
    except services.InstructorRefused as refused:
        messages.error(request, refused.message)
        return redirect("instructor:regrade", course_slug, job.pk)
    return redirect("instructor:regrade", course_slug, applied.pk)


@login_required
@require_GET
def analytics(request, course_slug: str, assignment_slug: str):
    assignment, role = selectors.access_staff_assignment(
        user=request.user, course_slug=course_slug, assignment_slug=assignment_slug
    )
    report = selectors.assignment_analytics(assignment=assignment)
    for exercise in report["exercises"]:
        exercise["facility_chart"] = selectors.facility_chart(exercise["parts"])
        for part in exercise["parts"]:
            named = [(MISCONCEPTION_LABELS.get(code, code), count) for code, count in part["misconceptions"]]
            part["misconception_chart"] = selectors.bar_chart(named) if named else None
    return render(
        request,
        "instructor/analytics.html",
        {
            "course": assignment.course, "assignment": assignment, "report": report,
            "fairness": selectors_fairness.assignment_fairness(assignment=assignment),
        },
    )
