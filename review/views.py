"""The course's spaced-review settings page (staff read it, instructors change it)."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render

from courses.models import Role

from . import selectors, services
from .forms import ReviewSettingsForm


@login_required
def review_settings(request, course_slug: str):
    course, role, current = selectors.access_review_settings(
        user=request.user, course_slug=course_slug, change=request.method == "POST"
    )
    initial = {
        "enabled": current.enabled,
        "feeding_assignments": list(current.feeding_assignments.all()) if current.pk else [],
    }
    form = ReviewSettingsForm(request.POST or None, course=course, initial=initial)
    if request.method == "POST" and form.is_valid():
        services.review_settings_update(
            course=course,
            enabled=form.cleaned_data["enabled"],
            feeding_assignments=list(form.cleaned_data["feeding_assignments"]),
        )
        messages.success(request, "Saved the review settings.")
        return redirect("review:settings", course.slug)
    return render(
        request,
        "review/settings.html",
        {"course": course, "form": form, "is_instructor": role == Role.INSTRUCTOR, "current": current},
        status=422 if form.errors else 200,
    )
