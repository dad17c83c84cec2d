"""A student's own answers graded by a person, and their regrade requests (/grades/)."""

from django.urls import path

from . import views_rubrics

app_name = "grades"

urlpatterns = [
    path("", views_rubrics.my_manual_grades, name="mine"),
    path("<int:submission_id>/regrade-request/", views_rubrics.my_regrade_request, name="regrade_request"),
]
