"""LTI 1.3 endpoints: OIDC login, the launch, our JWKS, link mapping, the deep-linking
picker, the course choice for a new LMS course, the LMS page of a course, and dynamic
registration.

The login and launch arrive as cross-site requests from the LMS (often inside an
iframe), so they are CSRF-exempt: their protection is the signed id_token, the
single-use state and nonce, and the state cookie that binds them to this browser.
"""

import time
import urllib.parse

from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.db.models import Count
from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from courses.models import Role
from courses.selectors import access_course_staff, course_role

from . import deep_linking, passback, registration, services
from .models import LtiContext, Passback, PassbackStatus, ResourceLink
from .selectors import tool_jwks

STATE_COOKIE_PREFIX = "lti_state_"
SESSION_STATES = "lti_states"
MAX_SESSION_STATES = 10
SESSION_PENDING = "lti_pending_launches"
MAX_PENDING = 5
PENDING_SECONDS = 3600


def _problem(request, message: str, *, status: int) -> HttpResponse:
    return render(request, "lti/problem.html", {"message": message}, status=status)


@csrf_exempt
@never_cache
@require_http_methods(["GET", "POST"])
def login_initiation(request):
    params = request.POST if request.method == "POST" else request.GET
    try:
        redirect_to = services.login_initiate(
            params=params,
            redirect_uri=request.build_absolute_uri(reverse("lti:launch")),
            host=request.get_host(),
        )
    except services.LtiRefused as refusal:
        return _problem(request, refusal.message, status=refusal.status)
    states = request.session.get(SESSION_STATES, [])
    request.session[SESSION_STATES] = (states + [redirect_to.state])[-MAX_SESSION_STATES:]
    response = redirect(redirect_to.url)
    # The launch is a cross-site POST: a SameSite=Lax session cookie is not sent with it,
    # so the state also travels in its own SameSite=None cookie (HTTPS only, as browsers require).
    secure = request.is_secure()
    response.set_cookie(
        STATE_COOKIE_PREFIX + redirect_to.state,
        "1",
        max_age=services.LOGIN_STATE_SECONDS,
        secure=secure,
        httponly=True,
        samesite="None" if secure else "Lax",
    )
    return response


@csrf_exempt
@never_cache
@require_POST
def launch(request):
    browser_states = set(request.session.get(SESSION_STATES, [])) | {
        name[len(STATE_COOKIE_PREFIX) :]
        for name in request.COOKIES
        if name.startswith(STATE_COOKIE_PREFIX)
    }
    state = request.POST.get("state", "")
    try:
        verified = services.launch_validate(
            state=state, id_token=request.POST.get("id_token", ""), browser_states=browser_states
        )
        result = services.launch_accept(launch=verified)
    except services.LtiRefused as refusal:
        return _problem(request, refusal.message, status=refusal.status)
    response = _after_launch(request, verified, result)
    response.delete_cookie(STATE_COOKIE_PREFIX + state)
    return response


def _after_launch(request, launch: services.Launch, result: services.LaunchResult):
    """Log the person in and send them where the accepted launch leads."""
    if result.choose_course:
        login(request, result.user, backend="accounts.backends.UsernameOrEmailBackend")
        return redirect("lti:course_choice", token=_pending_put(request, launch))
    if result.course is None or (result.assignment is None and result.role != Role.INSTRUCTOR):
        return _problem(request, result.problem, status=result.status)
    login(request, result.user, backend="accounts.backends.UsernameOrEmailBackend")
    if launch.is_deep_linking:
        token = _pending_put(request, launch, context_id=result.context.pk)
        return redirect("lti:deep_link", token=token)
    if result.assignment is None:
        if result.problem:
            messages.warning(request, result.problem)
        return redirect("lti:link_map", link_id=result.link.pk)
    return redirect("assignment", result.course.slug, result.assignment.slug)


# A verified launch that needs one more answer from the instructor (which course, which
# content) waits in their session, which the launch has just logged them into.


def _pending_put(request, launch: services.Launch, *, context_id: int | None = None) -> str:
    import secrets

    pending = {
        token: entry
        for token, entry in request.session.get(SESSION_PENDING, {}).items()
        if entry["at"] > time.time() - PENDING_SECONDS
    }
    token = secrets.token_urlsafe(16)
    pending[token] = {
        "platform": launch.platform.pk,
        "claims": launch.claims,
        "context": context_id,
        "at": time.time(),
    }
    request.session[SESSION_PENDING] = dict(list(pending.items())[-MAX_PENDING:])
    return token


def _pending_get(request, token: str) -> tuple[services.Launch, int | None]:
    from .models import Platform

    entry = request.session.get(SESSION_PENDING, {}).get(token)
    if entry is None or entry["at"] < time.time() - PENDING_SECONDS:
        raise services.LtiRefused(
            "This step of the LMS launch has expired; open the link from the LMS again."
        )
    platform = Platform.objects.filter(pk=entry["platform"]).first()
    if platform is None:
        raise services.LtiRefused("This LMS is no longer registered here.")
    return services.launch_from_claims(platform=platform, claims=entry["claims"]), entry["context"]


def _pending_drop(request, token: str) -> None:
    pending = dict(request.session.get(SESSION_PENDING, {}))
    pending.pop(token, None)
    request.session[SESSION_PENDING] = pending


@login_required
@require_http_methods(["GET", "POST"])
def course_choice(request, token: str):
    """A new LMS course (or one copied in the LMS): a new attnquiz course, or an existing one."""
    try:
        launch, _ = _pending_get(request, token)
    except services.LtiRefused as refusal:
        return _problem(request, refusal.message, status=refusal.status)
    error = ""
    if request.method == "POST":
        try:
            result = services.launch_accept(
                launch=launch, course_choice=request.POST.get("course", "") or services.NEW_COURSE
            )
            if result.user != request.user:
                raise Http404("No such launch.")
            _pending_drop(request, token)
            return _after_launch(request, launch, result)
        except services.LtiRefused as refusal:
            error = refusal.message
    return render(
        request,
        "lti/course_choice.html",
        {
            "lms_title": launch.context.get("title") or launch.context.get("label") or "LMS course",
            "courses": services.courses_taught(user=request.user),
            "error": error,
        },
        status=400 if error else 200,
    )


@login_required
@require_http_methods(["GET", "POST"])
def deep_link(request, token: str):
    """The content picker the LMS shows in its iframe (Deep Linking 2.0)."""
    try:
        launch, context_id = _pending_get(request, token)
        context = deep_linking.deep_link_context(
            platform_id=launch.platform.pk, context_id=context_id
        )
    except (services.LtiRefused, LtiContext.DoesNotExist) as refusal:
        return _problem(request, getattr(refusal, "message", "No such LMS course."), status=400)
    course = context.course
    if course_role(user=request.user, course=course) != Role.INSTRUCTOR:
        raise Http404("No such LMS request.")
    error = ""
    if request.method == "POST":
        try:
            assignment = _picked_assignment(request, course)
            answer = deep_linking.deep_link_response(
                platform=launch.platform,
                deployment_id=launch.deployment_id,
                settings=launch.deep_linking,
                assignment=assignment,
                launch_url=request.build_absolute_uri(reverse("lti:launch")),
            )
        except services.LtiRefused as refusal:
            error = refusal.message
        else:
            _pending_drop(request, token)
            response = render(
                request,
                "lti/deep_link_return.html",
                {"return_url": answer.return_url, "jwt": answer.jwt, "assignment": assignment},
            )
            # The form posts to the LMS: allow that one origin for this one response
            # (django-csp reads this attribute, as its @csp_update decorator sets it).
            parts = urllib.parse.urlsplit(answer.return_url)
            response._csp_update = {"form-action": [f"{parts.scheme}://{parts.netloc}"]}
            return response
    return render(
        request,
        "lti/deep_link_pick.html",
        {
            "context": context,
            "course": course,
            "assignments": course.assignments.order_by("title"),
            "versions": deep_linking.bank_versions(),
            "error": error,
        },
        status=400 if error else 200,
    )


def _picked_assignment(request, course):
    pick = request.POST.get("pick", "")
    if pick == "assignment":
        assignment = course.assignments.filter(slug=request.POST.get("assignment", "")).first()
        if assignment is None:
            raise services.LtiRefused("Pick one of this course's assignments.")
        return assignment
    if pick == "exercise":
        return deep_linking.deep_link_assignment_from_bank(
            course=course, title="", exercise_slugs=[request.POST.get("exercise", "")]
        )
    if pick == "new":
        return deep_linking.deep_link_assignment_from_bank(
            course=course,
            title=request.POST.get("title", ""),
            exercise_slugs=request.POST.getlist("exercises"),
        )
    raise services.LtiRefused("Pick an assignment, an exercise or a new assignment.")


@login_required
@require_http_methods(["GET", "POST"])
def course_lms(request, course_slug: str):
    """An instructor's view of the LMS connection: linked LMS courses, rosters, grade passback."""
    course, _role = access_course_staff(user=request.user, slug=course_slug, instructor_only=True)
    if request.method == "POST":
        action = request.POST.get("action", "")
        if action == "sync":
            context = course.lti_contexts.filter(pk=_int(request.POST.get("context"))).first()
            if context is None:
                raise Http404("No such LMS course.")
            started = services.roster_sync_schedule(context=context, force=True)
            notice = (
                "The roster is being synced; reload in a moment."
                if started
                else "The LMS offers no roster service for that course."
            )
        elif action == "resend":
            row = Passback.objects.filter(
                pk=_int(request.POST.get("passback")), link__context__course=course
            ).first()
            if row is None:
                raise Http404("No such grade.")
            passback.passback_resend(passback=row)
            notice = "The grade is being sent again."
        else:
            return _problem(request, "Unknown action.", status=400)
        messages.success(request, notice)
        return redirect("lti:course_lms", course_slug=course.slug)
    rows = (
        Passback.objects.filter(link__context__course=course)
        .select_related("user", "link__assignment")
        .order_by("-changed_at")
    )
    counts = {status: 0 for status in PassbackStatus.values}
    counts.update(dict(rows.order_by().values_list("status").annotate(n=Count("pk"))))
    return render(
        request,
        "lti/course_lms.html",
        {
            "course": course,
            "contexts": course.lti_contexts.select_related("platform").order_by("pk"),
            "passbacks": rows[:500],
            "counts": counts,
        },
    )


def _int(value) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


@csrf_exempt
@never_cache
@require_http_methods(["GET", "POST"])
def register(request):
    """Dynamic Registration 1.0: the LMS opens this with openid_configuration (GET)."""
    params = request.POST if request.method == "POST" else request.GET
    token = params.get("t", "")
    openid_configuration = params.get("openid_configuration", "")
    registration_token = params.get("registration_token", "")
    try:
        link_id = registration.registration_token_check(token)
        if request.method == "GET":
            if not openid_configuration.startswith(("https://", "http://")):
                raise services.LtiRefused(
                    "The LMS sent no openid_configuration URL; start the registration from the LMS."
                )
            return render(
                request,
                "lti/registration.html",
                {
                    "issuer": urllib.parse.urlsplit(openid_configuration).netloc,
                    "openid_configuration": openid_configuration,
                    "registration_token": registration_token,
                    "token": token,
                },
            )
        platform, deployment_id = registration.platform_register_dynamically(
            base_url=request.build_absolute_uri("/").rstrip("/"),
            openid_configuration_url=openid_configuration,
            registration_token=registration_token,
            link_id=link_id,
        )
    except services.LtiRefused as refusal:
        return _problem(request, refusal.message, status=refusal.status)
    return render(
        request,
        "lti/registration.html",
        {"done": True, "platform": platform, "deployment_id": deployment_id},
    )


@require_GET
def jwks(request):
    services.tool_key_ensure()
    return JsonResponse(tool_jwks())


@login_required
@require_http_methods(["GET", "POST"])
def link_map(request, link_id: int):
    """An instructor picks (or creates) the assignment an LMS link opens."""
    link = (
        ResourceLink.objects.select_related("context__course", "assignment")
        .filter(pk=link_id)
        .first()
    )
    if (
        link is None
        or course_role(user=request.user, course=link.context.course) != Role.INSTRUCTOR
    ):
        raise Http404("No such LMS link.")
    course = link.context.course
    error = ""
    if request.method == "POST":
        try:
            if request.POST.get("new_title") is not None:
                assignment = services.resource_link_map_new_assignment(
                    link=link, title=request.POST["new_title"]
                )
                messages.success(
                    request, f"The link now opens '{assignment.title}'. Add its exercises here."
                )
                return redirect("instructor:assignment", course.slug, assignment.slug)
            assignment = course.assignments.filter(slug=request.POST.get("assignment", "")).first()
            if assignment is None:
                raise services.LtiRefused("Pick one of this course's assignments.")
            services.resource_link_map(link=link, assignment=assignment)
            return redirect("assignment", course.slug, assignment.slug)
        except services.LtiRefused as refusal:
            error = refusal.message
    return render(
        request,
        "lti/link_map.html",
        {
            "link": link,
            "course": course,
            "assignments": course.assignments.order_by("title"),
            "error": error,
        },
        status=400 if error else 200,
    )
