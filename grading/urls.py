from django.urls import path

from . import views

urlpatterns = [
    path("variants/<int:variant_id>/parts/<slug:part>/submit/", views.submit_answer, name="submit"),
    path("submissions/<int:submission_id>/", views.submission_result, name="submission"),
    path("preview/", views.preview_answer, name="preview"),
]
