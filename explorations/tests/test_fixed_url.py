"""``{% fixed_url %}``: the URL ``{% url %}`` gives, reversed once per script prefix."""

from django.template import Context, Template
from django.urls import clear_script_prefix, reverse, set_script_prefix

from explorations.templatetags.attnquiz_ui import fixed_url


def test_each_name_reads_as_url_reverses_it():
    for name in ("dashboard", "explorations:index", "profile", "logout", "login", "signup", "preview",
                 "explorations:scaling", "explorations:variance"):
        assert fixed_url(name) == reverse(name)
    rendered = Template("{% load attnquiz_ui %}<a href=\"{% fixed_url 'dashboard' %}\">").render(Context())
    assert rendered == f'<a href="{reverse("dashboard")}">'


def test_a_site_under_a_path_prefix_gets_its_prefixed_url():
    plain = fixed_url("dashboard")
    set_script_prefix("/attnquiz/")
    try:
        assert fixed_url("dashboard") == "/attnquiz" + plain
    finally:
        clear_script_prefix()
    assert fixed_url("dashboard") == plain
