"""Assignment editor: a searchable exercise picker (titles, skills, a preview per exercise)
that adds several exercises at once, in the order they were ticked."""

from __future__ import annotations

from functools import partial

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from authoring.selectors import published_version_preview
from authoring.services import SOURCE_CHECK_RETRY_SECONDS, AuthoringRefused, source_check_place
from exercises.engine.skills import SKILLS
from exercises.specs import part_label, version_spec

from . import selectors, selectors_picker, services, views
from .forms import ItemsAddForm

PREVIEW_SEED = 0


@login_required
@require_http_methods(["GET", "POST"])
def exercise_picker(request, course_slug: str, assignment_slug: str):
    """GET ``?q=…&skill=…&source=…``: the exercises that fit the search. POST: add the ticked ones."""
    assignment, role = selectors.access_staff_assignment(
        user=request.user, course_slug=course_slug, assignment_slug=assignment_slug, instructor_only=True
    )
    query = request.GET.get("q", "").strip()[: selectors_picker.MAX_QUERY_LENGTH]
    skill = request.GET.get("skill", "").strip()
    problem, status = "", 200
    if skill and skill not in SKILLS:
        problem, status, skill = f"There is no skill called '{skill[:40]}'; showing every skill.", 400, ""
    source = request.GET.get("source", "").strip()
    if source and source not in selectors_picker.SOURCES:
        problem, status, source = "Choose where the exercises come from from the list; showing all.", 400, ""
    form = ItemsAddForm(request.POST if request.method == "POST" else None, initial={"points": 1.0})
    if request.method == "POST":
        if form.is_valid():
            try:
                outcome = services.assignment_items_add(
                    assignment=assignment, version_ids=form.cleaned_data["version_ids"],
                    points=form.cleaned_data["points"], confirmed=views.edit_confirmed(request),
                )
            except services.ConfirmationNeeded as needed:
                return views.render_edit_confirmation(
                    request, assignment=assignment, role=role, needed=needed, button="Add them anyway"
                )
            except services.InstructorRefused as refused:
                problem = refused.message
            else:
                _report_added(request, outcome)
                return redirect("instructor:assignment", course_slug, assignment_slug)
        else:
            problem = " ".join(error for errors in form.errors.values() for error in errors)
        status = 400
    rows = selectors_picker.exercise_picker_rows(assignment=assignment, query=query, skill=skill, source=source)
    return render(
        request,
        "instructor/exercise_picker.html",
        {
            "course": assignment.course, "assignment": assignment, "rows": rows, "form": form,
            "query": query, "skill": skill, "skill_options": selectors_picker.picker_skill_options(),
            "source": source, "source_options": list(selectors_picker.SOURCES.items()),
            "filtered": bool(query or skill or source), "problem": problem,
            "ticked": set(form.cleaned_data.get("version_ids", [])) if form.is_bound and form.is_valid() else set(),
        },
        status=status,
    )


def _report_added(request, outcome: services.ItemsAdded) -> None:
    count = len(outcome.added)
    if count:
        names = ", ".join(item.exercise_version.exercise.slug for item in outcome.added)
        messages.success(request, f"Added {count} exercise{'s' * (count != 1)}: {names}.")
    if outcome.skipped:
        messages.info(request, f"Skipped, already in the assignment: {', '.join(outcome.skipped)}.")


@login_required
@require_GET
def exercise_preview(request, course_slug: str, assignment_slug: str, version_id: int):
    """What a student would see of one assignable version, for a sample variant (seed 0);
    the picker loads it into its row, and without scripts it is a page of its own.

    Drawn once per version (then cached), in the sandbox, holding the person's one place
    for it: while another run of theirs holds it, 429 with Retry-After and the reason,
    and the row (authoring_check.js) or the page asks again after the wait."""
    assignment, role = selectors.access_staff_assignment(
        user=request.user, course_slug=course_slug, assignment_slug=assignment_slug, instructor_only=True
    )
    version = selectors_picker.access_assignable_version(version_id=version_id)
    spec = version_spec(version)
    preview, busy = None, {}
    try:
        preview = published_version_preview(
            version=version, seed=PREVIEW_SEED,
            place=partial(source_check_place, user=request.user, action="preview"),
        )
    except AuthoringRefused as refused:
        busy = {"busy": refused.message, "retry_after": SOURCE_CHECK_RETRY_SECONDS}
    fragment = request.headers.get("HX-Request") == "true"
    response = render(
        request,
        "instructor/_exercise_preview.html" if fragment else "instructor/exercise_preview.html",
        {
            "course": assignment.course, "assignment": assignment, "version": version, "preview": preview,
            "choice_parts": _choice_parts(spec, preview) if preview else [], **busy,
        },
        status=429 if busy else 200,
    )
    if busy:
        response["Retry-After"] = str(SOURCE_CHECK_RETRY_SECONDS)
    return response


def _choice_parts(spec, preview: dict) -> list[tuple[str, list[str]]]:
    """(part label, the choices' texts) of each part that offers choices; the prompt
    already holds every part's question, but not what a student picks from."""
    return [
        (part_label(spec, part["key"]), [choice["text"] for choice in part["choices"]])
        for part in preview.get("parts", ()) if part.get("choices")
    ]
