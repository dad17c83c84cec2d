"""Rubric grading by question: the course's hand-graded parts, every student's answer to
one part with "next waiting", anonymous mode and an item applied to many answers, the
rubric's items, and regrade requests (the staff's replies and the student's requests).
Thin: reads through ``selectors_rubrics``, writes through ``services_rubrics``."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from attnquiz import confirmations
from exams.views_access import exam_gate_response

from . import claims, selectors, selectors_rubric_change, selectors_rubrics, services_rubrics
from .forms_regrade import RegradeReplyForm
from .services import ConfirmationNeeded, InstructorRefused


def anonymous_grading(request, course) -> bool:
    """Anonymous mode is kept per course in the grader's session; ``?anonymous=1|0`` sets it.
    Every grading page of the course reads it (the manual queue and its grading page too), so
    that a grader who hid the names does not meet them on the next page."""
    key = f"aq-anonymous-grading-{course.pk}"
    if "anonymous" in request.GET:
        request.session[key] = request.GET["anonymous"] == "1"
    return bool(request.session.get(key, False))


def _int_list(values) -> list[int]:
    numbers = []
    for value in values[:1000]:
        try:
            numbers.append(int(value))
        except (TypeError, ValueError):
            continue
    return numbers


def _question_url(course, item, part: str) -> str:
    return reverse("instructor:grading_question", args=[course.slug, item.pk, part])


@login_required
@require_GET
def grading_home(request, course_slug: str):
    course, role = selectors.access_teaching(user=request.user, course_slug=course_slug)
    return render(
        request,
        "instructor/grading_home.html",
        {
            "course": course,
            "parts": selectors_rubrics.course_manual_parts(course=course),
            "open_requests": selectors_rubrics.course_regrade_requests(course=course).count(),
        },
    )


def _rubric(course, item, part: str):
    return selectors_rubrics.question_rubric(course=course, item=item, part=part) or services_rubrics.rubric_for_part(
        course=course, item=item, part=part, seed_criteria=selectors_rubrics.author_criteria(item=item, part=part)
    )


@login_required
@require_GET
def grading_question(request, course_slug: str, item_id: int, part: str):
    course, item, spec_part, role = selectors_rubrics.access_question(
        user=request.user, course_slug=course_slug, item_id=item_id, part=part
    )
    return _question_page(request, course=course, item=item, part=part)


def _question_page(request, *, course, item, part: str, confirmation: dict | None = None):
    """The question's page; ``confirmation``: a change of the rubric asking first (nothing
    changed yet), shown on top with its confirm button."""
    answers = claims.answers_with_claims(selectors_rubrics.question_answers(item=item, part=part))
    spec = selectors.version_spec(item.exercise_version)
    rubric = _rubric(course, item, part)
    return render(
        request,
        "instructor/grading_question.html",
        {
            "course": course,
            "item": item,
            "part": part,
            "part_label": selectors_rubrics.part_label(spec, part),
            "part_points": selectors_rubrics.question_part_points(item=item, part=part),
            "spec": spec,
            "rubric": rubric,
            "out_of_step": selectors_rubric_change.rubric_out_of_step(rubric=rubric),
            "answers": answers,
            "next_waiting": claims.next_waiting_unclaimed(answers, grader=request.user),
            "waiting": sum(1 for answer in answers if answer.waiting),
            "anonymous": anonymous_grading(request, course),
            "confirmation": confirmation,
        },
    )


@login_required
@require_http_methods(["GET", "POST"])
def grading_answer(request, course_slug: str, item_id: int, part: str, submission_id: int):
    course, item, spec_part, role = selectors_rubrics.access_question(
        user=request.user, course_slug=course_slug, item_id=item_id, part=part
    )
    answers = selectors_rubrics.question_answers(item=item, part=part)
    answer = next((a for a in answers if a.submission.pk == submission_id), None)
    if answer is None:
        raise Http404("No such answer to this part.")
    rubric = _rubric(course, item, part)
    refusal, status = None, 200
    if request.method == "POST":
        try:
            services_rubrics.submission_grade_with_rubric(
                submission=answer.submission, rubric=rubric, grader=request.user,
                item_ids=_int_list(request.POST.getlist("items")), comment=request.POST.get("comment", "")[:5000],
                grade_seen=services_rubrics.grade_seen_posted(request.POST.get("grade_seen")),
            )
        except services_rubrics.GradedMeanwhile as refused:
            refusal, status = refused.message, 409
        except InstructorRefused as refused:
            refusal, status = refused.message, 422
        else:
            claims.answer_claim_release(submission=answer.submission, grader=request.user)
            label = "this answer" if anonymous_grading(request, course) else answer.submission.student.username
            messages.success(request, f"Graded {label}.")
            following = claims.next_waiting_unclaimed(
                selectors_rubrics.question_answers(item=item, part=part), grader=request.user,
                after=submission_id,
            )
            if following is None:
                messages.info(request, "Every answer to this part is graded.")
                return redirect(_question_url(course, item, part))
            return redirect("instructor:grading_answer", course.slug, item.pk, part, following.submission.pk)
    return _answer_page(
        request, course=course, item=item, part=part, answers=answers, answer=answer, rubric=rubric,
        refusal=refusal, posted=request.method == "POST", status=status,
    )


def _answer_page(
    request, *, course, item, part: str, answers, answer, rubric, refusal=None, posted=False, confirmation=None,
    status=None,
):
    """One answer's grading page; ``posted``: a refused grade, its ticks and comment put back;
    ``confirmation`` as on the question's page."""
    spec = selectors.version_spec(item.exercise_version)
    index = answers.index(answer)
    submission_id = answer.submission.pk
    claimed_by_other = claims.answer_claim_take(submission=answer.submission, grader=request.user)
    history = list(answer.submission.manual_grades.select_related("grader"))
    return render(
        request,
        "instructor/grading_answer.html",
        {
            "course": course,
            "item": item,
            "part": part,
            "part_label": selectors_rubrics.part_label(spec, part),
            "part_points": selectors_rubrics.question_part_points(item=item, part=part),
            "spec": spec,
            "spec_part": spec.part(part),
            "rubric": rubric,
            "answer": answer,
            "history": history,
            "grade_seen": history[0].pk if history else 0,
            "shown": selectors.submission_answer_shown(submission=answer.submission),
            "comment": request.POST.get("comment", "") if posted else
            (answer.submission.feedback or {}).get("grader_comment", ""),
            "ticked": set(_int_list(request.POST.getlist("items"))) if posted else set(answer.ticked),
            "previous": answers[index - 1] if index > 0 else None,
            "following": answers[index + 1] if index + 1 < len(answers) else None,
            "next_waiting": claims.next_waiting_unclaimed(answers, grader=request.user, after=submission_id),
            "claimed_by_other": claimed_by_other,
            "count": len(answers),
            "anonymous": anonymous_grading(request, course),
            "refusal": refusal,
            "confirmation": confirmation,
        },
        status=status or (422 if refusal else 200),
    )


def _points_posted(value) -> float:
    try:
        points = float(value if value is not None else "")
    except ValueError:
        raise InstructorRefused("An item's points are a number, e.g. 2 or -1.") from None
    if points != points:  # NaN
        raise InstructorRefused("An item's points are a number, e.g. 2 or -1.")
    return points


def _rubric_item_posted(rubric, value):
    found = rubric.items.filter(pk=(_int_list([value]) or [0])[0]).first()
    if found is None:
        raise InstructorRefused("No such rubric item.")
    return found


# What each change of the rubric's items does, and the confirm button of its question.
_CONFIRM_BUTTONS = {
    "remove": "Remove the item and score the answers again",
    "update": "Change the points and score the answers again",
    "rescore": "Score the answers again",
    "add": "Add the item and score the answers again",
}


@login_required
@require_POST
def grading_rubric_edit(request, course_slug: str, item_id: int, part: str):
    """Add an item (``text``, ``points``), give one other points (``update``: its id,
    ``points``), remove one (``remove``: its id), or score the graded answers again under
    the rubric as it stands (``rescore``). A change that changes scores asks first: the
    page again with the question on top (nothing changed) and a button that posts the same
    fields with the question's token (``confirm=yes``, ``impact``). Course staff: TAs
    change a rubric as instructors do, through the same question."""
    course, item, spec_part, role = selectors_rubrics.access_question(
        user=request.user, course_slug=course_slug, item_id=item_id, part=part
    )
    rubric = _rubric(course, item, part)
    confirmed = confirmations.confirmed_of(request.POST)
    action = next((name for name in ("remove", "update", "rescore") if request.POST.get(name)), "add")
    back_to = _int_list([request.POST.get("back_to")])
    try:
        if action == "remove":
            removed = _rubric_item_posted(rubric, request.POST["remove"])
            services_rubrics.rubric_item_remove(item=removed, actor=request.user, confirmed=confirmed)
            messages.success(request, "Removed the item.")
        elif action == "update":
            changed = _rubric_item_posted(rubric, request.POST["update"])
            services_rubrics.rubric_item_update(
                item=changed, points=_points_posted(request.POST.get("points")), actor=request.user, confirmed=confirmed
            )
            messages.success(request, "Saved the item's points.")
        elif action == "rescore":
            count = services_rubrics.rubric_rescore(rubric=rubric, actor=request.user, confirmed=confirmed)
            messages.success(request, f"Scored {count} answer{'s' * (count != 1)} again.")
        else:
            services_rubrics.rubric_item_add(
                rubric=rubric, text=request.POST.get("text", ""), points=_points_posted(request.POST.get("points")),
                actor=request.user, confirmed=confirmed,
            )
            messages.success(request, "Added the item.")
    except ConfirmationNeeded as needed:
        confirmation = {
            **confirmations.confirmation_shown(needed),
            "action": request.path,
            "fields": [
                (name, value) for name, values in request.POST.lists()
                if name not in ("csrfmiddlewaretoken", confirmations.CONFIRM_FIELD, confirmations.TOKEN_FIELD)
                for value in values
            ],
            "button": _CONFIRM_BUTTONS[action],
        }
        answers = selectors_rubrics.question_answers(item=item, part=part)
        answer = next((a for a in answers if back_to and a.submission.pk == back_to[0]), None)
        if answer is not None:
            return _answer_page(
                request, course=course, item=item, part=part, answers=answers, answer=answer,
                rubric=_rubric(course, item, part), confirmation=confirmation,
            )
        return _question_page(request, course=course, item=item, part=part, confirmation=confirmation)
    except InstructorRefused as refused:
        messages.error(request, refused.message)
    if back_to:  # from an answer's page: back to that answer
        return redirect("instructor:grading_answer", course.slug, item.pk, part, back_to[0])
    return redirect(_question_url(course, item, part))


@login_required
@require_POST
def grading_apply(request, course_slug: str, item_id: int, part: str):
    """Tick one rubric item on every answer chosen."""
    course, item, spec_part, role = selectors_rubrics.access_question(
        user=request.user, course_slug=course_slug, item_id=item_id, part=part
    )
    rubric = _rubric(course, item, part)
    rubric_item = rubric.items.filter(pk=(_int_list([request.POST.get("item")]) or [0])[0]).first()
    chosen = set(_int_list(request.POST.getlist("answers")))
    submissions = [a.submission for a in selectors_rubrics.question_answers(item=item, part=part) if a.submission.pk in chosen]
    if rubric_item is None or not submissions:
        messages.error(request, "Choose a rubric item and at least one answer.")
    else:
        try:
            count = services_rubrics.rubric_item_apply(
                rubric=rubric, item=rubric_item, submissions=submissions, grader=request.user
            )
        except InstructorRefused as refused:
            messages.error(request, refused.message)
        else:
            claims.answer_claims_release(submissions=submissions, grader=request.user)
            messages.success(request, f"Applied “{rubric_item.text}” to {count} answer{'s' * (count != 1)}.")
    return redirect(_question_url(course, item, part))


# ---------------------------------------------------------------------------
# Regrade requests
# ---------------------------------------------------------------------------


def _regrade_requests_page(request, course, *, refusal: str | None = None, status: int = 200, refused_reply=None):
    """The course's requests; ``refused_reply`` (request id, reply, score typed) puts a
    refused reply back in its form."""
    show_all = request.GET.get("all") == "1"
    shown = selectors_rubrics.course_regrade_requests_shown(course=course, open_only=not show_all)
    for regrade_request in shown:
        if refused_reply is not None and regrade_request.pk == refused_reply[0]:
            regrade_request.typed_reply, regrade_request.typed_score = refused_reply[1:]
    return render(
        request,
        "instructor/regrade_requests.html",
        {"course": course, "requests": shown, "show_all": show_all, "refusal": refusal},
        status=status,
    )


def _refusal_status(refused: InstructorRefused) -> int:
    if isinstance(refused, services_rubrics.RegradeHidden):
        return 403
    if isinstance(refused, services_rubrics.RubricConflict):
        return 409
    return 400


@login_required
@require_GET
def regrade_requests(request, course_slug: str):
    course, role = selectors.access_teaching(user=request.user, course_slug=course_slug)
    return _regrade_requests_page(request, course)


@login_required
@require_POST
def regrade_request_reply(request, course_slug: str, request_id: int):
    """Answer a request; with a new score (a checked answer) the reply grades it by hand."""
    regrade_request, role = selectors_rubrics.access_regrade_request(
        user=request.user, course_slug=course_slug, request_id=request_id
    )
    form = RegradeReplyForm(request.POST)
    refusal, status = None, 400
    if not form.is_valid():
        refusal = next(iter(form.errors.values()))[0]
    else:
        try:
            answered = services_rubrics.regrade_request_reply(
                request=regrade_request, replier=request.user, reply=form.cleaned_data["reply"],
                score=form.cleaned_data["fraction"],
            )
        except InstructorRefused as refused:
            refusal, status = refused.message, _refusal_status(refused)
    if refusal is not None:
        course = regrade_request.submission.variant.assignment_item.assignment.course
        typed = (regrade_request.pk, request.POST.get("reply", "")[:5000], request.POST.get("score", "")[:20])
        return _regrade_requests_page(request, course, refusal=refusal, status=status, refused_reply=typed)
    messages.success(request, f"Sent the reply ({answered.get_outcome_display().lower()}).")
    return redirect("instructor:regrade_requests", course_slug)


def _my_grades_page(request, *, refusal: str | None = None, status: int = 200, typed: dict | None = None):
    answers = selectors_rubrics.student_graded_answers(student=request.user)
    for answer in answers:
        answer.typed = (typed or {}).get(answer.submission.pk, "")
    return render(
        request, "instructor/my_manual_grades.html", {"answers": answers, "refusal": refusal}, status=status
    )


@login_required
@require_GET
def my_manual_grades(request):
    """A student's graded answers and their requests: the answers a person graded and those
    they asked about, the replies, and the form to ask for another look."""
    return _my_grades_page(request)


@login_required
@require_POST
def my_regrade_request(request, submission_id: int):
    """Ask for another look at one's own graded answer, from /grades/ or the exercise page
    (``back=exercise`` returns there). A refusal is the page again with its message: 403
    while the review policy hides the grade, 409 by the state of things, 400 otherwise."""
    submission, visibility = selectors_rubrics.access_own_answer(user=request.user, submission_id=submission_id)
    item = submission.variant.assignment_item
    if item is not None:  # an exam's networks and one-session binding guard its answers here too
        refusal = exam_gate_response(request, assignment=item.assignment, role=None)
        if refusal is not None:
            return refusal
    message = request.POST.get("message", "")
    try:
        services_rubrics.regrade_request_create(
            submission=submission, student=request.user, message=message, visibility=visibility
        )
    except InstructorRefused as refused:
        return _my_grades_page(
            request, refusal=refused.message, status=_refusal_status(refused), typed={submission.pk: message[:2000]}
        )
    if request.POST.get("back") == "exercise" and item is not None:
        messages.success(request, "Sent your request; the reply will appear under your answer.")
        return redirect(reverse("exercise", args=[item.pk]) + f"#regrade-{submission.pk}")
    messages.success(request, "Sent your request; the reply will appear here.")
    return redirect(reverse("grades:mine") + f"#graded-{submission.pk}")
