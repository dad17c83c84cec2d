from django.urls import path

from . import views_access

urlpatterns = [
    path(
        "courses/<slug:course_slug>/assignments/<slug:assignment_slug>/access-code/",
        views_access.access_code_page,
        name="exam_access_code",
    ),
    path(
        "teach/<slug:course_slug>/a/<slug:assignment_slug>/sessions/free/",
        views_access.session_free,
        name="exam_session_free",
    ),
]
