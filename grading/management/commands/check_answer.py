"""Grade JSON Lines from stdin to stdout (contract: grading.core.jsonl)."""

import sys

from django.core.management.base import BaseCommand

from grading.core.jsonl import answer_stream


class Command(BaseCommand):
    help = "Read grading requests as JSON Lines on stdin, write one JSON result line per request."
    # A pure grading filter: it needs neither URLs nor models, so it skips the system checks.
    requires_system_checks = []

    def handle(self, *args, **options):
        answer_stream(sys.stdin, sys.stdout)
