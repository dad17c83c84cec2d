"""The exam access pages: entering an access code, and the page (or fragment) that says
why a request may not reach the attempt. Thin over exams.access."""

from __future__ import annotations

from django import forms
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme, urlencode
from django.contrib import messages
from django.views.decorators.http import require_http_methods, require_POST

from courses import selectors as course_selectors
from courses.models import Assignment
from courses.selectors import STAFF_ROLES, access_staff_assignment

from . import access


class AccessCodeForm(forms.Form):
    code = forms.CharField(
        label="Access code", max_length=200, strip=True,
        error_messages={"required": "Enter the access code your invigilator gave out."},
    )


def access_code_url(assignment: Assignment, *, next_url: str = "") -> str:
    url = reverse("exam_access_code", args=[assignment.course.slug, assignment.slug])
    return f"{url}?{urlencode({'next': next_url})}" if next_url else url


def _safe_next(request, fallback: str) -> str:
    candidate = request.POST.get("next") or request.GET.get("next") or ""
    if candidate and url_has_allowed_host_and_scheme(
        candidate, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return candidate
    return fallback


@login_required
@require_http_methods(["GET", "POST"])
def access_code_page(request, course_slug: str, assignment_slug: str):
    """Ask for the exam's access code, once per attempt; then on to where the student was going."""
    assignment, role = course_selectors.access_assignment(
        user=request.user, course_slug=course_slug, assignment_slug=assignment_slug
    )
    done = _safe_next(request, reverse("assignment", args=[course_slug, assignment_slug]))
    if role in STAFF_ROLES or not access.access_code_needed(request=request, assignment=assignment):
        return redirect(done)
    form = AccessCodeForm(request.POST if request.method == "POST" else None)
    status, retry_after = 200, None
    if request.method == "POST" and form.is_valid():
        try:
            access.access_code_enter(request=request, assignment=assignment, code=form.cleaned_data["code"])
        except access.AccessCodeRefused as refused:
            form.add_error("code", refused.message)
            status, retry_after = (429 if refused.retry_after else 403), refused.retry_after
        else:
            return redirect(done)
    elif request.method == "POST":
        status = 422
    response = render(
        request, "exams/access_code.html", {"assignment": assignment, "form": form, "next": done}, status=status
    )
    if retry_after:
        response["Retry-After"] = str(retry_after)
    return response


def exam_gate_response(request, *, assignment: Assignment, role: str | None, fragment: bool = False) -> HttpResponse | None:
    """None when the request may reach the attempt; otherwise the response that says why
    not: the code page for a page that needs the code, else a 403 page (or, for an htmx
    fragment, a 403 fragment in place of the result)."""
    try:
        access.access_exam_gate(request=request, assignment=assignment, role=role)
    except access.ExamAccessRefused as refused:
        code_url = access_code_url(assignment, next_url=request.get_full_path() if request.method == "GET" else "")
        if refused.code == "code_needed" and not fragment and request.method == "GET":
            return redirect(code_url)
        context = {
            "assignment": assignment,
            "message": refused.message,
            "code_url": code_url if refused.code == "code_needed" else None,
        }
        template = "exams/_access_refused.html" if fragment else "exams/access_refused.html"
        return render(request, template, context, status=403)
    return None


@login_required
@require_POST
def session_free(request, course_slug: str, assignment_slug: str):
    """The invigilator frees one student's one-session attempt for another browser."""
    assignment, _ = access_staff_assignment(
        user=request.user, course_slug=course_slug, assignment_slug=assignment_slug
    )
    try:
        student_id = int(request.POST.get("student", ""))
    except ValueError:
        student_id = None
    attempt = access.attempt_session_free(assignment=assignment, student_id=student_id) if student_id else None
    if attempt is None:
        messages.error(request, "Choose a student whose open attempt is bound to a browser.")
    else:
        messages.success(
            request, f"{attempt.student.username}'s attempt is free: the next browser they use takes it."
        )
    return redirect("proctor:view", course_slug, assignment_slug)
