from django.urls import path

from . import views

app_name = "lti"

urlpatterns = [
    path("login/", views.login_initiation, name="login"),
    path("launch/", views.launch, name="launch"),
    path("jwks/", views.jwks, name="jwks"),
    path("links/<int:link_id>/", views.link_map, name="link_map"),
]
