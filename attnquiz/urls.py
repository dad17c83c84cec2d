"""Top-level URL configuration."""

from django.contrib import admin
from django.urls import include, path

from attnquiz import views as project_views
from exercises import views as exercise_views

urlpatterns = [
    path("", exercise_views.dashboard, name="dashboard"),
    path("login/", project_views.LoginView.as_view(), name="login"),
    path("logout/", project_views.LogoutView.as_view(), name="logout"),
    path("healthz/", project_views.readiness, name="health"),
    path("healthz/live/", project_views.liveness, name="liveness"),
    path("", include("exercises.urls")),
    path("", include("exams.urls_access")),
    path("grading/", include("grading.urls")),
    path("explore/", include("explorations.urls")),
    path("author/", include("authoring.urls")),
    path("teach/", include("instructor.urls")),
    path("grades/", include("instructor.urls_student")),
    path("teach/", include("exams.urls_proctor")),
    path("teach/", include("mastery.urls")),
    path("exam/", include("exams.urls")),
    path("lti/", include("lti.urls")),
    path("api/", include("api.urls")),
    path("accounts/", include("accounts.urls")),
    path("", include("courses.urls")),
    path("", include("review.urls")),
    path("admin/", admin.site.urls),
]

handler400 = "attnquiz.errors.bad_request"
handler500 = "attnquiz.errors.server_error"
