"""The project's URLs plus one view that fails, for the error page tests."""

from django.urls import path

from attnquiz.urls import handler500, urlpatterns as project_urlpatterns  # noqa: F401


def fails(request):
    raise RuntimeError("a bug in a view")


urlpatterns = [path("boom/", fails), *project_urlpatterns]
