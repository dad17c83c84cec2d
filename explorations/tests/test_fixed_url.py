"""``{% fixed_url %}`` and ``{% fixed_static %}``: what ``{% url %}`` and ``{% static %}`` give,\nresolved once per script prefix (and static storage)."""

from django.template import Context, Template
from django.templatetags.static import static
from django.test import override_settings
from django.urls import clear_script_prefix, reverse, set_script_prefix

from explorations.templatetags.attnquiz_ui import fixed_static, fixed_url


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


BASE_PAGE_FILES = (
    "attnquiz/favicon.svg", "vendor/katex/katex.min.css", "attnquiz/attnquiz.css", "vendor/katex/katex.min.js",
    "vendor/katex/contrib/auto-render.min.js", "vendor/htmx/htmx.min.js", "attnquiz/attnquiz.js",
)


def test_each_file_reads_as_static_gives_it():
    for path in BASE_PAGE_FILES:
        assert fixed_static(path) == static(path)
    rendered = Template("{% load attnquiz_ui %}<script src=\"{% fixed_static 'attnquiz/attnquiz.js' %}\">").render(Context())
    assert rendered == '<script src="/static/attnquiz/attnquiz.js">'


def test_another_static_url_gives_its_own_urls():
    assert fixed_static("attnquiz/attnquiz.js") == "/static/attnquiz/attnquiz.js"
    with override_settings(STATIC_URL="/assets/"):
        assert fixed_static("attnquiz/attnquiz.js") == "/assets/attnquiz/attnquiz.js"
    assert fixed_static("attnquiz/attnquiz.js") == "/static/attnquiz/attnquiz.js"


def test_another_storage_gives_its_own_urls_not_the_remembered_ones():
    assert fixed_static("attnquiz/attnquiz.js") == "/static/attnquiz/attnquiz.js"
    elsewhere = {
        "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
        "staticfiles": {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"base_url": "https://cdn.example.org/assets/"},
        },
    }
    with override_settings(STORAGES=elsewhere):
        assert fixed_static("attnquiz/attnquiz.js") == "https://cdn.example.org/assets/attnquiz/attnquiz.js"
    assert fixed_static("attnquiz/attnquiz.js") == "/static/attnquiz/attnquiz.js"


def test_every_page_head_names_its_files_through_the_remembered_urls(client):
    html = client.get(reverse("login")).content.decode()
    for path in BASE_PAGE_FILES:
        assert f'"{static(path)}"' in html
