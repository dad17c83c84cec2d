"""
WSGI config for attnquiz project.

It exposes the WSGI callable as a module-level variable named ``application``.

For more information on this file, see
https://docs.djangoproject.com/en/5.2/howto/deployment/wsgi/
"""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'attnquiz.settings')

application = get_wsgi_application()

# Every task known before the first request: a process's threads then never race Celery's
# lazy first import of the tasks modules (see attnquiz.enqueue).
from attnquiz.enqueue import tasks_import  # noqa: E402

tasks_import()

# The views, through the URLconf, before freezing what the process keeps (attnquiz.startup_heap).
from django.urls import get_resolver  # noqa: E402

from attnquiz.startup_heap import startup_objects_freeze  # noqa: E402

get_resolver().url_patterns  # noqa: B018 -- imports every view module

# A student's first symbolic or derivation answer is read in the request: read one of each
# now, so no student waits for SymPy's first use (1.0–1.7 s) in this process.
from grading.services import checkers_warm_up  # noqa: E402

checkers_warm_up()
startup_objects_freeze()
