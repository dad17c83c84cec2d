from django.urls import path

from . import views

app_name = "review"

urlpatterns = [
    path("courses/<slug:course_slug>/review/", views.review_settings, name="settings"),
]
