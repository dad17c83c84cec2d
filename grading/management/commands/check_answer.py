"""Grade JSON Lines from stdin to stdout (contract: grading.core.jsonl)."""

import io
import sys

from django.core.management.base import BaseCommand

from grading.core.jsonl import answer_stream


class Command(BaseCommand):
    help = "Read grading requests as JSON Lines on stdin, write one JSON result line per request."
    # A pure grading filter: it needs neither URLs nor models, so it skips the system checks.
    requires_system_checks = []

    def handle(self, *args, **options):
        # Bytes that are not UTF-8 must not end the stream: they are read as U+FFFD.
        stdin = io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace")
        stdout = io.TextIOWrapper(sys.stdout.buffer, encoding="utf-8", errors="replace", line_buffering=True)
        answer_stream(stdin, stdout)
        stdout.flush()
