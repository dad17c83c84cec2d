"""Keep a course's exercises in git: validate a folder of exercise files through the API,
then push the changed ones as drafts.

    manage.py bank_sync --url https://attnquiz.example.org --token aq_… --course attn exercises/

Every file is validated first (the editor's checks, line-precise); if any file has a
problem, nothing is pushed and the command exits 1, so a CI job fails before anything
changes. Otherwise each file whose content differs from its exercise's latest version is
pushed as a draft (a new exercise, or version n + 1); unchanged files are left alone.
Drafts still go through review on the site (or via the API): nobody approves their own.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from authoring.services import MAX_SOURCE_BYTES, source_hash

PATTERNS = ("*.yaml", "*.yml")


class ApiError(Exception):
    def __init__(self, status: int, detail: str, body: dict | None = None):
        super().__init__(detail)
        self.status, self.detail, self.body = status, detail, body or {}


class BankClient:
    """The few API calls a sync needs, with the standard library only."""

    def __init__(self, *, url: str, token: str, course: str, timeout: float):
        self.base = url.rstrip("/") + f"/api/v1/courses/{urllib.parse.quote(course)}/exercises/"
        self.token, self.timeout = token, timeout

    def call(self, method: str, path: str = "", body: dict | None = None) -> tuple[int, object]:
        request = urllib.request.Request(
            self.base + path,
            method=method,
            data=json.dumps(body).encode() if body is not None else None,
            headers={
                "Authorization": f"Bearer {self.token}",
                "Accept": "application/json",
                "Content-Type": "application/json",
            },
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return response.status, json.loads(response.read() or b"null")
        except urllib.error.HTTPError as error:
            try:
                problem = json.loads(error.read() or b"{}")
            except ValueError:
                problem = {}
            raise ApiError(error.code, problem.get("detail") or error.reason, problem) from None
        except (urllib.error.URLError, TimeoutError, OSError) as error:
            raise ApiError(0, f"could not reach {self.base}: {getattr(error, 'reason', error)}") from None

    def latest_hashes(self) -> dict[str, str]:
        _, rows = self.call("GET")
        return {row["slug"]: row["latest"]["content_hash"] for row in rows if row["owned"]}

    def validate(self, source: str) -> dict:
        return self.call("POST", "validate/", {"source": source})[1]

    def push(self, source: str) -> tuple[int, dict]:
        return self.call("POST", "", {"source": source})


class Command(BaseCommand):
    help = "Validate a folder of exercise files through the API and push the changed ones as drafts."

    def add_arguments(self, parser):
        parser.add_argument("directory", type=Path)
        parser.add_argument("--url", required=True, help="The site, e.g. https://attnquiz.example.org")
        parser.add_argument("--token", required=True, help="A read and write API token of an instructor")
        parser.add_argument("--course", required=True, help="The course's slug")
        parser.add_argument("--dry-run", action="store_true", help="Validate and report; push nothing")
        parser.add_argument("--timeout", type=float, default=60.0, help="Seconds per request")

    def handle(self, *args, directory: Path, url: str, token: str, course: str, dry_run: bool,
               timeout: float, **options):
        if not directory.is_dir():
            raise CommandError(f"{directory} is not a folder.")
        files = sorted({path for pattern in PATTERNS for path in directory.rglob(pattern)})
        if not files:
            raise CommandError(f"No exercise files (*.yaml, *.yml) in {directory}.")
        client = BankClient(url=url, token=token, course=course, timeout=timeout)
        try:
            sources, problems = self._validate(client, directory, files)
            if problems:
                raise CommandError(f"{problems} problem(s) found; nothing was pushed.")
            self._push(client, directory, sources, dry_run=dry_run)
        except ApiError as error:
            if not error.status:
                raise CommandError(error.detail) from None
            raise CommandError(f"The API refused: {error.detail} (HTTP {error.status})") from None

    def _validate(self, client: BankClient, directory: Path, files: list[Path]) -> tuple[dict, int]:
        sources, problems, slugs = {}, 0, {}
        for path in files:
            name = path.relative_to(directory)
            data = path.read_bytes()
            if len(data) > MAX_SOURCE_BYTES:
                self.stderr.write(f"{name}: larger than {MAX_SOURCE_BYTES} bytes")
                problems += 1
                continue
            try:
                source = data.decode("utf-8")
            except UnicodeDecodeError as exc:
                self.stderr.write(f"{name}: not UTF-8 text (byte {exc.start})")
                problems += 1
                continue
            result = client.validate(source)
            if not result["valid"]:
                for issue in result["issues"]:
                    where = f"{name}:{issue['line']}" if issue["line"] else f"{name}"
                    path_part = f" {issue['path']}:" if issue["path"] else ""
                    self.stderr.write(f"{where}:{path_part} {issue['message']}")
                    problems += 1
                continue
            if result["slug"] in slugs:
                self.stderr.write(f"{name}: the slug '{result['slug']}' is also used by {slugs[result['slug']]}")
                problems += 1
                continue
            slugs[result["slug"]] = name
            sources[name] = (result["slug"], source)
        return sources, problems

    def _push(self, client: BankClient, directory: Path, sources: dict, *, dry_run: bool) -> None:
        latest = client.latest_hashes()
        pushed = unchanged = 0
        for name, (slug, source) in sources.items():
            if latest.get(slug) == source_hash(source):
                unchanged += 1
                self.stdout.write(f"{name}: {slug} unchanged")
                continue
            if dry_run:
                self.stdout.write(f"{name}: {slug} would be pushed as a draft")
                pushed += 1
                continue
            try:
                status, version = client.push(source)
            except ApiError as error:
                issues = error.body.get("issues") or []
                lines = [f"{name}:{i['line'] or ''} {i['message']}" for i in issues] or [f"{name}: {error.detail}"]
                raise CommandError("\n".join(lines) + f"\nPushing {name} was refused (HTTP {error.status}).") from None
            pushed += status == 201
            unchanged += status == 200
            self.stdout.write(f"{name}: {slug} v{version['number']} {version['status']}"
                              + ("" if status == 201 else " (unchanged)"))
        verb = "would push" if dry_run else "pushed"
        self.stdout.write(self.style.SUCCESS(f"{len(sources)} file(s) valid; {verb} {pushed}, {unchanged} unchanged."))
