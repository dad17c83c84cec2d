"""Project-level pages: health probes and the sign-out confirmation. Thin views."""

from __future__ import annotations

from django.contrib.auth import views as auth_views
from django.http import HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from accounts.forms import LoginForm
from courses.selectors import sign_in_landing_url

from . import health
from .device_trust import device_cookie_set


@never_cache
@require_GET
def liveness(request):
    """The process answers HTTP. Touches nothing else: a database outage is not a reason
    to restart the web server."""
    return HttpResponse("ok", content_type="text/plain")


@never_cache
@require_GET
def readiness(request):
    """200 when every dependency answers, else 503; the body says which one failed."""
    checks = health.readiness_checks()
    ready = health.is_ready(checks)
    return JsonResponse(
        {"status": "ok" if ready else "unavailable", "checks": checks}, status=200 if ready else 503
    )


class LoginView(auth_views.LoginView):
    """Django's sign-in, leaving the browser a device cookie for the account
    (attnquiz.device_trust): others' wrong passwords at its address cannot pause it.

    It leads to a safe ``next`` (Django checks it with url_has_allowed_host_and_scheme),
    else a student of exactly one course to that course, else to the dashboard."""

    authentication_form = LoginForm

    def form_valid(self, form):
        response = super().form_valid(form)
        device_cookie_set(response, user=form.get_user())
        return response

    def get_default_redirect_url(self):
        if self.next_page:
            return super().get_default_redirect_url()
        return sign_in_landing_url(user=self.request.user)


class LogoutView(auth_views.LogoutView):
    """Signing out is a POST (a GET must change nothing); a GET asks to confirm it."""

    http_method_names = ["get", "post", "options"]

    def get(self, request, *args, **kwargs):
        if not request.user.is_authenticated:
            return redirect("login")
        return render(request, "registration/logout_confirm.html")
