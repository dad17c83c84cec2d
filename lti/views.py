"""LTI 1.3 endpoints: OIDC login initiation, the launch, our JWKS, and link mapping.

The login and launch arrive as cross-site requests from the LMS (often inside an
iframe), so they are CSRF-exempt: their protection is the signed id_token, the
single-use state and nonce, and the state cookie that binds them to this browser.
"""

from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from courses.models import Role
from courses.selectors import course_role

from . import services
from .models import ResourceLink
from .selectors import tool_jwks

STATE_COOKIE_PREFIX = "lti_state_"
SESSION_STATES = "lti_states"
MAX_SESSION_STATES = 10


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
    if result.course is None or (result.assignment is None and result.role != Role.INSTRUCTOR):
        return _problem(request, result.problem, status=result.status)
    login(request, result.user, backend="django.contrib.auth.backends.ModelBackend")
    if result.assignment is None:
        if result.problem:
            messages.warning(request, result.problem)
        response = redirect("lti:link_map", link_id=result.link.pk)
    else:
        response = redirect("assignment", result.course.slug, result.assignment.slug)
    response.delete_cookie(STATE_COOKIE_PREFIX + state)
    return response


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
