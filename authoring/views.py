"""Authoring pages: the exercise list, the YAML editor with line-precise errors, previews,
the 100-variant test, import/export and the review workflow. Thin over selectors/services."""

from __future__ import annotations

from functools import partial

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from courses.models import Role
from exercises import engine
from exercises.models import VersionStatus
from exercises.specs import version_spec

from . import selectors, services
from .format_reference import format_reference
from .forms import CommentForm, ImportForm, PreviewForm, ReviewSettingForm, SourceForm, TransitionForm, VariantTestForm
from .selectors import Action

NEW_EXERCISE_TEMPLATE = """\
slug: my-new-exercise
title: A new exercise
version: 1
difficulty: easy
parameters:
  a: {generator: int_range, min: 1, max: 9}
  b: {generator: int_range, min: 1, max: 9}
prompt: |
  Compute ${{a}} \\times {{b}}$.
parts:
  - key: product
    type: numeric
    answer: "a * b"
    decimals: 0
    solution: |
      ${{a}} \\times {{b}} = {{a * b}}$.
"""


def _version_url(access: selectors.VersionAccess, name: str = "version", number: int | None = None) -> str:
    return reverse(
        f"authoring:{name}",
        args=[access.course.slug, access.exercise.slug, number or access.version.number],
    )


def _spec_errors(error: engine.SpecError) -> list[dict]:
    return [{"line": i.line, "path": i.path, "message": i.message, "text": str(i)} for i in error.errors]


def _busy(response: HttpResponse) -> HttpResponse:
    """The 429 of a request that would run a source in the sandbox while another run of the
    person's is under way: nothing ran and nothing was stored; the page tries again after
    Retry-After (authoring_check.js)."""
    response.status_code = 429
    response["Retry-After"] = str(services.SOURCE_CHECK_RETRY_SECONDS)
    return response


def _busy_context(refused: services.AuthoringRefused) -> dict:
    return {"busy": refused.message, "retry_after": services.SOURCE_CHECK_RETRY_SECONDS}


@login_required
@require_GET
def exercise_list(request, course_slug: str):
    course, role = selectors.access_authoring(user=request.user, course_slug=course_slug)
    return render(
        request,
        "authoring/exercise_list.html",
        {
            "course": course,
            "role": role,
            "can_edit": role == Role.INSTRUCTOR,
            "rows": selectors.exercises_for_course(course=course),
            "in_review": selectors.versions_in_review(course=course),
            "review_form": ReviewSettingForm(
                initial={"second_reviewer": selectors.second_reviewer_setting(course=course)}
            ),
            "second_reviewer": selectors.second_reviewer_required(course=course),
            "instructors": selectors.course_instructor_count(course=course),
        },
    )


@login_required
@require_POST
def review_setting(request, course_slug: str):
    """Whether publishing in this course needs a second reviewer (instructors only)."""
    course, role = selectors.access_authoring(user=request.user, course_slug=course_slug, action=Action.EDIT)
    form = ReviewSettingForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Choose when a second reviewer is required.")
    else:
        services.course_review_setting_save(
            course=course, actor=request.user, second_reviewer=form.cleaned_data["second_reviewer"]
        )
        messages.success(request, "Saved when a second reviewer is required.")
    return redirect("authoring:list", course.slug)


@login_required
@require_http_methods(["GET", "POST"])
def exercise_new(request, course_slug: str):
    course, role = selectors.access_authoring(
        user=request.user, course_slug=course_slug, action=Action.EDIT
    )
    form = SourceForm(request.POST or None, initial={"source": NEW_EXERCISE_TEMPLATE})
    errors, refusal, busy = [], None, {}
    if request.method == "POST" and form.is_valid():
        try:
            version = services.exercise_create(
                course=course, actor=request.user, source=form.cleaned_data["source"]
            )
        except engine.SpecError as error:
            errors = _spec_errors(error)
        except services.AuthoringRefused as refused:
            if refused.code == "busy":
                busy = _busy_context(refused)
            else:
                refusal = refused.message
        else:
            messages.success(request, f"Created {version.exercise.slug} as draft version 1.")
            return redirect("authoring:version", course.slug, version.exercise.slug, 1)
    response = render(
        request,
        "authoring/editor.html",
        {"course": course, "role": role, "form": form, "errors": errors, "refusal": refusal,
         "version": None, "is_new": True, **busy},
        status=422 if errors or refusal else 200,
    )
    return _busy(response) if busy else response


@login_required
@require_http_methods(["GET", "POST"])
def exercise_import(request, course_slug: str):
    course, role = selectors.access_authoring(
        user=request.user, course_slug=course_slug, action=Action.EDIT
    )
    form = ImportForm(request.POST or None, request.FILES or None)
    errors, refusal, busy = [], None, {}
    if request.method == "POST" and form.is_valid():
        name, data = form.upload()
        try:
            version = services.exercise_import(course=course, actor=request.user, data=data)
        except engine.SpecError as error:
            errors = _spec_errors(error)
        except services.AuthoringRefused as refused:
            if refused.code == "busy":
                # The file stays in the page, to be sent again as it is.
                form = ImportForm(initial=ImportForm.kept_initial(name=name, data=data))
                busy = {**_busy_context(refused), "kept_name": name,
                        "kept_text": data.decode("utf-8", errors="replace")}
            else:
                refusal = refused.message
        else:
            messages.success(
                request, f"Imported {version.exercise.slug} as draft version {version.number}."
            )
            return redirect("authoring:version", course.slug, version.exercise.slug, version.number)
    failed = bool(errors or refusal or form.errors)
    response = render(
        request,
        "authoring/import.html",
        {"course": course, "role": role, "form": form, "errors": errors, "refusal": refusal, **busy},
        status=422 if failed else 200,
    )
    return _busy(response) if busy else response


@login_required
@require_POST
def source_check(request, course_slug: str):
    """Validate unsaved source and preview one seed of it (the editor's live check): one at a
    time per person (429 while another of theirs runs), each under the sandbox's limits."""
    course, role = selectors.access_authoring(user=request.user, course_slug=course_slug)
    form = SourceForm(request.POST)
    preview_form = PreviewForm(request.POST)
    context = {"errors": [], "preview": None, "form_errors": None, "failure": None, "problems": []}
    if not form.is_valid():
        context["form_errors"] = form.errors.get("source")
    else:
        seed = preview_form.cleaned_data["seed"] if preview_form.is_valid() else 0
        try:
            with services.source_check_place(user=request.user):
                checked = selectors.source_check(source=form.cleaned_data["source"], seed=seed)
        except services.AuthoringRefused as refused:
            return _busy(render(request, "authoring/_check.html", {"busy": refused.message}))
        context.update(
            errors=_spec_errors(engine.SpecError(checked["errors"])) if checked["errors"] else [],
            failure=checked["failure"],
            problems=checked["problems"],
            preview=checked["preview"],
            preview_seed_error=preview_form.errors.get("seed"),
            seeds_checked=selectors.CHECK_SEEDS,
        )
    return render(request, "authoring/_check.html", context)


@login_required
@require_GET
def exercise_format(request, course_slug: str):
    """docs/exercise-format.md as a page, for the course's staff (the editor links to it)."""
    course, role = selectors.access_authoring(user=request.user, course_slug=course_slug)
    reference = format_reference()
    return render(
        request,
        "authoring/format_reference.html",
        {"course": course, "role": role, "reference": reference},
        status=200 if reference else 404,
    )


@login_required
@require_GET
def exercise_detail(request, course_slug: str, slug: str):
    course, role, exercise, owned = selectors.access_exercise(
        user=request.user, course_slug=course_slug, slug=slug
    )
    return render(
        request,
        "authoring/exercise_detail.html",
        {
            "course": course,
            "role": role,
            "exercise": exercise,
            "owned": owned,
            "versions": selectors.versions_visible(exercise=exercise, course=course),
            "events": selectors.exercise_history(exercise=exercise) if owned else [],
        },
    )


@login_required
@require_GET
def version_detail(request, course_slug: str, slug: str, number: int):
    access = selectors.access_version(
        user=request.user, course_slug=course_slug, slug=slug, number=number
    )
    version = access.version
    spec = selectors.authoring_spec(version)
    is_instructor = access.owned and access.role == Role.INSTRUCTOR
    second_reviewer = selectors.second_reviewer_required(course=access.course)
    # Seed 0 drawn in the sandbox, holding the person's one place for it (a published
    # version's once, then from the cache, as the picker's); while another run of theirs
    # holds it, the page comes without it and asks for it after the wait.
    preview, preview_busy = None, {}
    place = partial(services.source_check_place, user=request.user, action="preview")
    try:
        if version.status in selectors.LIBRARY_STATUSES:
            preview = selectors.published_version_preview(version=version, seed=0, place=place, spec=spec)
        else:
            with place():
                preview = selectors.version_preview_limited(spec=spec, seed=0)
    except services.AuthoringRefused as refused:
        preview_busy = _busy_context(refused)
    return render(
        request,
        "authoring/version_detail.html",
        {
            "access": access,
            "course": access.course,
            "role": access.role,
            "version": version,
            "spec": spec,
            "variant_names": list(spec.variants),
            "owned": access.owned,
            "can_edit": is_instructor and version.status != VersionStatus.IN_REVIEW,
            "can_submit": is_instructor and version.status == VersionStatus.DRAFT,
            "can_withdraw": is_instructor and version.status == VersionStatus.IN_REVIEW,
            "can_approve": is_instructor
            and version.status == VersionStatus.IN_REVIEW
            and (version.created_by_id != request.user.pk or not second_reviewer),
            "can_publish_directly": is_instructor and version.status == VersionStatus.DRAFT and not second_reviewer,
            "second_reviewer": second_reviewer,
            "is_author": version.created_by_id == request.user.pk,
            "can_retire": is_instructor and version.status == VersionStatus.PUBLISHED,
            "publish_warning": services.PUBLISH_WARNING,
            "can_comment": access.owned,
            "comment_form": CommentForm(),
            "events": version.events.select_related("actor") if access.owned else [],
            "preview": preview,
            **preview_busy,
        },
    )


@login_required
@require_http_methods(["GET", "POST"])
def version_edit(request, course_slug: str, slug: str, number: int):
    access = selectors.access_version(
        user=request.user, course_slug=course_slug, slug=slug, number=number, action=Action.EDIT
    )
    version = access.version
    form = SourceForm(request.POST or None, initial={"source": version.source})
    errors, refusal, busy = [], None, {}
    if version.status == VersionStatus.IN_REVIEW:
        refusal = "This version is in review; return it to draft before editing."
    if request.method == "POST" and form.is_valid() and refusal is None:
        try:
            saved = services.version_save(
                version=version, actor=request.user, source=form.cleaned_data["source"]
            )
        except engine.SpecError as error:
            errors = _spec_errors(error)
        except services.AuthoringRefused as refused:
            if refused.code == "busy":
                busy = _busy_context(refused)
            else:
                refusal = refused.message
        else:
            if saved.number != version.number:
                messages.success(
                    request,
                    f"Version {version.number} is published and unchanged; "
                    f"your edit is draft version {saved.number}.",
                )
            else:
                messages.success(request, f"Saved draft version {saved.number}.")
            return redirect(_version_url(access, number=saved.number))
    failed = request.method == "POST" and bool(errors or refusal or form.errors)
    response = render(
        request,
        "authoring/editor.html",
        {
            "course": access.course,
            "role": access.role,
            "form": form,
            "errors": errors,
            "refusal": refusal,
            "version": version,
            "is_new": False,
            **busy,
        },
        status=422 if failed else 200,
    )
    return _busy(response) if busy else response


@login_required
@require_GET
def version_preview(request, course_slug: str, slug: str, number: int):
    access = selectors.access_version(
        user=request.user, course_slug=course_slug, slug=slug, number=number
    )
    spec = selectors.authoring_spec(access.version)
    form = PreviewForm(request.GET or {"seed": 0})
    preview, form_error, busy = None, None, {}
    if form.is_valid():
        name = form.cleaned_data["variant"] or None
        if name is not None and name not in spec.variants:
            form_error = f"There is no named variant '{name}'."
        else:
            try:
                with services.source_check_place(user=request.user, action="preview"):
                    preview = selectors.version_preview_limited(
                        spec=spec, seed=form.cleaned_data["seed"], variant_name=name
                    )
            except services.AuthoringRefused as refused:
                busy = _busy_context(refused)
    else:
        form_error = "; ".join(f"{field}: {' '.join(errs)}" for field, errs in form.errors.items())
    template = (
        "authoring/_preview.html"
        if request.headers.get("HX-Request") == "true"
        else "authoring/preview_page.html"
    )
    response = render(
        request,
        template,
        {"access": access, "course": access.course, "role": access.role, "version": access.version,
         "preview": preview, "form_error": form_error, **busy},
        status=200 if preview else 400,
    )
    return _busy(response) if busy else response


@login_required
@require_http_methods(["GET", "POST"])
def version_test(request, course_slug: str, slug: str, number: int):
    access = selectors.access_version(
        user=request.user, course_slug=course_slug, slug=slug, number=number
    )
    form = VariantTestForm(request.POST or None, initial={"first_seed": 0})
    report, stopped = None, None
    busy = False
    if request.method == "POST" and form.is_valid():
        try:
            run = services.variant_test_start(user=request.user)
        except services.AuthoringRefused as refused:
            stopped, busy = refused.message, True
        else:
            try:
                report = selectors.version_test_variants_limited(
                    spec=selectors.authoring_spec(access.version),
                    first_seed=form.cleaned_data["first_seed"],
                )
            except selectors.SourceCheckStopped as problem:
                stopped = problem.message
            finally:
                services.variant_test_finish(run=run)
    response = render(
        request,
        "authoring/variant_test.html",
        {
            "access": access,
            "course": access.course,
            "role": access.role,
            "version": access.version,
            "form": form,
            "report": report,
            "stopped": stopped,
        },
        status=400 if form.errors else 200,
    )
    return _busy(response) if busy else response


@login_required
@require_http_methods(["GET", "POST"])
def version_preflight(request, course_slug: str, slug: str, number: int):
    """Before any student answers: the spread over 200 seeds of what makes a variant easier."""
    access = selectors.access_version(
        user=request.user, course_slug=course_slug, slug=slug, number=number
    )
    spread, stopped, busy = None, None, False
    if request.method == "POST":
        try:
            # The same kind of work as a variant test, under the same limits: it takes one of
            # the person's variant-test places, so pre-flights cannot hold the checkers either.
            run = services.variant_test_start(user=request.user)
        except services.AuthoringRefused as refused:
            stopped, busy = refused.message, True
        else:
            try:
                spread = selectors.version_variant_spread_limited(spec=version_spec(access.version))
            except selectors.SourceCheckStopped as problem:
                stopped = problem.message
            finally:
                services.variant_test_finish(run=run)
    response = render(
        request,
        "authoring/preflight.html",
        {"access": access, "course": access.course, "role": access.role, "version": access.version,
         "spread": spread, "stopped": stopped,
         "seeds": selectors.PREFLIGHT_SEEDS},
    )
    return _busy(response) if busy else response


@login_required
@require_GET
def version_export(request, course_slug: str, slug: str, number: int):
    access = selectors.access_version(
        user=request.user, course_slug=course_slug, slug=slug, number=number
    )
    response = HttpResponse(
        access.version.source.encode("utf-8"), content_type="application/yaml; charset=utf-8"
    )
    response["Content-Disposition"] = f'attachment; filename="{slug}-v{number}.yaml"'
    return response


@login_required
@require_POST
def version_transition(request, course_slug: str, slug: str, number: int):
    access = selectors.access_version(
        user=request.user, course_slug=course_slug, slug=slug, number=number, action=Action.EDIT
    )
    form = TransitionForm(request.POST)
    if not form.is_valid() or form.cleaned_data["to_status"] not in VersionStatus.values:
        messages.error(request, "Unknown workflow step.")
        return redirect(_version_url(access))
    try:
        version = services.version_transition(
            version=access.version,
            actor=request.user,
            to_status=form.cleaned_data["to_status"],
            message=form.cleaned_data["message"],
        )
    except services.AuthoringRefused as refused:
        messages.error(request, refused.message)
    except engine.SpecError as error:
        issues = "; ".join(str(issue) for issue in error.errors)
        messages.error(request, services.NOT_PUBLISHABLE.format(number=access.version.number, issues=issues))
    else:
        if version.status == VersionStatus.PUBLISHED:
            messages.success(request, services.PUBLISHED_NOTICE.format(number=version.number))
        else:
            messages.success(request, f"Version {version.number} is now {version.get_status_display().lower()}.")
    return redirect(_version_url(access))


@login_required
@require_POST
def version_comment(request, course_slug: str, slug: str, number: int):
    access = selectors.access_version(
        user=request.user, course_slug=course_slug, slug=slug, number=number, action=Action.COMMENT
    )
    form = CommentForm(request.POST)
    if form.is_valid():
        try:
            services.version_comment(
                version=access.version, actor=request.user, message=form.cleaned_data["message"]
            )
        except services.AuthoringRefused as refused:
            messages.error(request, refused.message)
        else:
            messages.success(request, "Comment added.")
    else:
        messages.error(request, "A comment cannot be empty.")
    return redirect(_version_url(access))
