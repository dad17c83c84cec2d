from django.urls import path

from . import views

app_name = "explorations"

urlpatterns = [
    path("", views.index, name="index"),
    path("scaling/", views.scaling, name="scaling"),
    path("scaling.json", views.scaling_json, name="scaling-json"),
    path("variance/", views.variance, name="variance"),
    path("variance.json", views.variance_json, name="variance-json"),
]
