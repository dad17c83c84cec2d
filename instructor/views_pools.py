"""Assignment editor: add a pool of N interchangeable exercises for one skill, after a preview."""

from __future__ import annotations

from functools import partial

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from authoring.selectors import published_version_preview
from authoring.services import AuthoringRefused, source_check_place

from . import selectors, selectors_pools, services, services_pools, views
from .forms_pools import SkillPoolForm


@login_required
@require_http_methods(["GET", "POST"])
def pool_by_skill(request, course_slug: str, assignment_slug: str):
    """GET: the exercises a pool of N for skill S would hold, with titles and previews.
    POST: add exactly the previewed exercises (refused if the bank's suggestion changed).

    A preview that another sandbox run of the person's keeps from being drawn is left out,
    saying why; the page itself is not refused, as its list is what matters."""
    assignment, role = selectors.access_staff_assignment(
        user=request.user, course_slug=course_slug, assignment_slug=assignment_slug, instructor_only=True
    )
    data = request.POST if request.method == "POST" else (request.GET if "skill" in request.GET else None)
    form = SkillPoolForm(data, initial={"count": 3, "points": 1.0})
    candidates, previews, status = [], [], 200
    if data is not None and form.is_valid():
        candidates = selectors_pools.skill_pool_candidates(
            assignment=assignment, skill=form.cleaned_data["skill"], count=form.cleaned_data["count"]
        )
        if request.method == "POST":
            chosen = sorted(request.POST.getlist("version"))
            offered = sorted(str(candidate.version.pk) for candidate in candidates)
            if chosen != offered:
                form.add_error(None, "The bank's suggestion changed since the preview; check it again.")
            else:
                try:
                    items = services_pools.assignment_pool_add(
                        assignment=assignment, versions=[c.version for c in candidates],
                        pool=form.pool_name(), points=form.points_value(), confirmed=views.edit_confirmed(request),
                    )
                except services.ConfirmationNeeded as needed:
                    return views.render_edit_confirmation(
                        request, assignment=assignment, role=role, needed=needed, button="Add the pool anyway"
                    )
                except services.InstructorRefused as refused:
                    form.add_error(None, refused.message)
                else:
                    messages.success(request, f"Added pool “{form.pool_name()}” of {len(items)} exercises.")
                    return redirect("instructor:assignment", course_slug, assignment_slug)
        previews = [_candidate_preview(request.user, candidate.version) for candidate in candidates]
    if form.errors:
        status = 422
    return render(
        request,
        "instructor/pool_by_skill.html",
        {
            "course": assignment.course, "assignment": assignment, "form": form,
            "rows": list(zip(candidates, previews)), "asked": data is not None and form.is_valid(),
            "skill_options": _skill_options(assignment),
        },
        status=status,
    )


def _candidate_preview(user, version) -> dict:
    """Seed 0 of one candidate, cached, or ``{"busy": why}``. Each miss takes the person's one
    sandbox place for its own run only: the person never runs two sandbox processes at once,
    and a Check of theirs sent meanwhile is refused for one preview's run at most, not the
    whole page's. A hit takes no place."""
    try:
        return published_version_preview(
            version=version, seed=0, place=partial(source_check_place, user=user, action="preview")
        )
    except AuthoringRefused as refused:
        return {"busy": refused.message}


def _skill_options(assignment) -> list[tuple[str, str, int]]:
    sizes = selectors_pools.skill_pool_sizes(assignment=assignment)
    return [(slug, label, sizes.get(slug, 0)) for slug, label in SkillPoolForm.base_fields["skill"].choices]
