from django.urls import path

from . import views

app_name = "mastery"

urlpatterns = [
    path("<slug:course_slug>/skills/", views.course_grid, name="course_grid"),
]
