"""Framing by the registered LMS origins only, when configured."""

from django.conf import settings as project_settings


def test_the_middleware_is_installed_after_x_frame_options():
    middleware = project_settings.MIDDLEWARE
    assert middleware.index("lti.middleware.LmsFramingMiddleware") > middleware.index(
        "django.middleware.clickjacking.XFrameOptionsMiddleware"
    )


def test_without_origins_pages_stay_unframeable(client, db, settings):
    response = client.get("/login/")
    assert response["X-Frame-Options"] == "DENY"
    assert "frame-ancestors 'none'" in response["Content-Security-Policy"].split("; ")


def test_configured_origins_may_frame_every_page(client, db, settings):
    settings.LTI_FRAME_ANCESTORS = ["https://canvas.example.edu", "https://moodle.example.edu"]
    response = client.get("/login/")
    assert "X-Frame-Options" not in response
    assert (
        "frame-ancestors 'self' https://canvas.example.edu https://moodle.example.edu"
        in response["Content-Security-Policy"].split("; ")
    )
