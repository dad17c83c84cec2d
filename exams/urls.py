from django.urls import path

from . import views

app_name = "exams"

A = "<slug:course_slug>/a/<slug:assignment_slug>/"

urlpatterns = [
    path(A + "start/", views.attempt_start, name="start"),
    path(A + "finish/", views.attempt_finish, name="finish"),
    path(A + "release/", views.grades_release, name="release"),
    path(A + "deadline/", views.deadline_poll, name="deadline"),
]
