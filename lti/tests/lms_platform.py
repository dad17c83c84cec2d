"""An independent LTI 1.3 platform for the tests, built on the third-party ``lti1p3platform``.

It runs as a small HTTP server on 127.0.0.1 (a thread of the test process) and plays an
LMS: it starts logins, answers the OIDC authorisation request with an id_token built and
signed by ``lti1p3platform`` (resource link and deep linking launches, with the AGS and
NRPS claims), issues access tokens after checking attnquiz's client assertion, serves
line items, takes scores and serves the roster (the library's AGS and NRPS services),
accepts the deep-linking response, and offers dynamic registration.

Nothing here is attnquiz code. Where the library is wrong, the work-around is here:

- its services read ``page`` and ``limit`` from the query string as strings and add 1
  to them (``TypeError`` on the second page): the request wrapper converts them to int;
- its ``Link`` header is ``<url>; rel=next`` (valid per RFC 8288, but pylti1p3next on
  the tool side only follows the quoted ``rel="next"`` that Canvas and Moodle send): the
  server writes the quoted form;
- it has no dynamic registration: the two endpoints (OpenID configuration and the
  registration POST) are written out here, following LTI Dynamic Registration 1.0;
- it does not check ``aud`` of the deep-linking response, nor ``redirect_uri`` of the
  authorisation request: checked here.
"""

from __future__ import annotations

import html
import json
import secrets
import threading
import time
import typing as t
import urllib.parse
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from lti1p3platform.ltiplatform import LTI1P3PlatformConfAbstract
from lti1p3platform.membership import Context
from lti1p3platform.message_launch import LTIAdvantageMessageLaunchAbstract
from lti1p3platform.oidc_login import OIDCLoginAbstract
from lti1p3platform.registration import Registration
from lti1p3platform.request import Request
from lti1p3platform.service_connector import (
    AssignmentsGradesService,
    NamesRoleProvisioningService,
)

MEMBERSHIP = "http://purl.imsglobal.org/vocab/lis/v2/membership#"
INSTRUCTOR = MEMBERSHIP + "Instructor"
LEARNER = MEMBERSHIP + "Learner"


class PlainRequest(Request):
    """lti1p3platform's request interface over a plain dict (work-around: int paging)."""

    def build_metadata(self, request: dict) -> dict:
        query = dict(request.get("query", {}))
        for name in ("page", "limit"):
            if name in query:
                query[name] = int(query[name])
        return {
            "method": request["method"],
            "form_data": request.get("form", {}),
            "get_data": query,
            "headers": request.get("headers", {}),
            "content_type": request.get("content_type", ""),
            "path": request.get("path", ""),
            "json": request.get("json"),
        }


class PlatformConf(LTI1P3PlatformConfAbstract):
    def init_platform_config(self, **kwargs):
        self._registration = kwargs["registration"]

    def get_registration_by_params(self, **kwargs):
        return self._registration


class Launcher(LTIAdvantageMessageLaunchAbstract):
    def render_launch_form(self, launch_data, **kwargs):
        return launch_data


class LoginStarter(OIDCLoginAbstract):
    def set_lti_message_hint(self, **kwargs):
        self._lti_message_hint = kwargs["hint"]

    def get_redirect(self, url):
        return url


@dataclass
class Link:
    resource_link_id: str
    context_id: str
    title: str
    custom: dict = field(default_factory=dict)
    lineitem_id: str | None = None


class PlatformAgs(AssignmentsGradesService):
    """Line items and scores kept in the LmsPlatform's memory."""

    def __init__(self, request, platform: "LmsPlatform", context_id: str, lineitem_id=None):
        self.lms = platform
        self.context_id = context_id
        super().__init__(
            request,
            platform.conf,
            platform.lineitems_url(context_id),
            platform.lineitem_url(lineitem_id) if lineitem_id in platform.lineitems else None,
        )

    def find_lineitems(self, page=1, limit=None, line_item_id=None, resource_link_id=None,
                       resource_id=None, tag=None):
        items = [
            item for item in self.lms.lineitems.values() if item["context_id"] == self.context_id
        ]
        return {"content": [self.lms.lineitem_public(i) for i in items], "has_next": False}

    def find_lineitem(self, line_item_id):
        return self.lms.lineitem_public(self.lms.lineitems[line_item_id])

    def create_lineitem(self, creation_data):
        return self.lms.lineitem_public(
            self.lms.lineitem_create(context_id=self.context_id, **creation_data)
        )

    def update_lineitem(self, update_data):
        raise NotImplementedError

    def delete_lineitem(self, line_item_id):
        raise NotImplementedError

    def update_score(self, line_item_id, score):
        from lti1p3platform.exceptions import LineItemNotFoundException
        from lti1p3platform.score import UpdateScoreStatus

        if line_item_id not in self.lms.lineitems:
            raise LineItemNotFoundException()
        with self.lms.lock:
            self.lms.scores.append({"lineitem": line_item_id, **score})
        return UpdateScoreStatus.SUCCESS

    def get_results(self, line_item_id, page=1, limit=None, user_id=None):
        raise NotImplementedError


class PlatformNrps(NamesRoleProvisioningService):
    def __init__(self, request, platform: "LmsPlatform", context_id: str):
        self.lms = platform
        self.context_id = context_id
        super().__init__(request, platform.conf, platform.memberships_url(context_id))

    def get_member_data_page(self, page=1, limit=None, role=None, since=None, rlid=None):
        members = self.lms.contexts[self.context_id]["members"]
        rows = [self.lms.member(user, status) for user, status in members.items()]
        if not limit:
            return {"content": rows, "has_next": False}
        start = (page - 1) * limit
        return {"content": rows[start : start + limit], "has_next": start + limit < len(rows)}

    def get_context_by_id(self):
        context = self.lms.contexts[self.context_id]
        return Context(id=self.context_id, label=context["label"], title=context["title"])


class LmsPlatform:
    """The LMS. ``tool_url`` is attnquiz's address (the test client's or a live server's)."""

    def __init__(self, *, tool_url: str, client_id: str = "attnquiz-at-testlms",
                 deployment_id: str = "deployment-7", page_size: int | None = 2,
                 host: str = "127.0.0.1"):
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.private_pem = key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ).decode()
        self.public_pem = key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        ).decode()
        self.tool_url = tool_url.rstrip("/")
        self.client_id = client_id
        self.deployment_id = deployment_id
        self.page_size = page_size
        self.lock = threading.Lock()
        self.users: dict[str, dict] = {}
        self.contexts: dict[str, dict] = {}
        self.links: dict[str, Link] = {}
        self.lineitems: dict[str, dict] = {}
        self.scores: list[dict] = []
        self.deep_link_items: list[dict] = []
        self.requests: list[tuple[str, str]] = []
        self.registrations: list[dict] = []
        self.registration_token = secrets.token_urlsafe(16)
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        # ``host`` may be "localhost" so the LMS page and a live server on localhost are
        # the same site for the browser (their cookies then reach the iframe).
        self.url = f"http://{host}:{self.httpd.server_address[1]}"
        self.issuer = self.url
        self.registration = (
            Registration()
            .set_iss(self.issuer)
            .set_client_id(client_id)
            .set_deployment_id(deployment_id)
            .set_oidc_login_url(self.tool_url + "/lti/login/")
            .set_launch_url(self.tool_url + "/lti/launch/")
            .set_deeplink_launch_url(self.tool_url + "/lti/launch/")
            .set_platform_public_key(self.public_pem)
            .set_platform_private_key(self.private_pem)
            .set_tool_key_set_url(self.tool_url + "/lti/jwks/")
        )
        self.conf = PlatformConf(registration=self.registration)
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self.thread.start()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    # --- The LMS's data --------------------------------------------------------------

    def add_user(self, key: str, *, given: str, family: str, roles: list[str]) -> None:
        self.users[key] = {
            "user_id": f"user-{key}",
            "given_name": given,
            "family_name": family,
            "name": f"{given} {family}",
            "email": f"{key}@testlms.example",
            "roles": roles,
        }

    def add_context(self, context_id: str, *, title: str, label: str, members: list[str]) -> None:
        self.contexts[context_id] = {
            "title": title,
            "label": label,
            "members": {member: "Active" for member in members},
        }

    def add_link(self, resource_link_id: str, *, context_id: str, title: str,
                 custom: dict | None = None, score_maximum: float | None = None) -> Link:
        link = Link(resource_link_id, context_id, title, custom or {})
        if score_maximum is not None:
            item = self.lineitem_create(
                context_id=context_id, label=title, scoreMaximum=score_maximum,
                resourceLinkId=resource_link_id,
            )
            link.lineitem_id = item["id"]
        self.links[resource_link_id] = link
        return link

    def lineitem_create(self, *, context_id: str, **data) -> dict:
        with self.lock:
            number = len(self.lineitems) + 1
            item = {
                "context_id": context_id,
                **data,
                "id": f"{self.lineitems_url(context_id)}/{number}",
            }
            self.lineitems[str(number)] = item
        return item

    def lineitem_public(self, item: dict) -> dict:
        return {k: v for k, v in item.items() if k != "context_id"}

    def member(self, user: str, status: str) -> dict:
        person = self.users[user]
        return {**{k: v for k, v in person.items()}, "status": status}

    def lineitems_url(self, context_id: str) -> str:
        return f"{self.url}/contexts/{context_id}/lineitems"

    def lineitem_url(self, number: str) -> str:
        return self.lineitems[number]["id"]

    def memberships_url(self, context_id: str) -> str:
        return f"{self.url}/contexts/{context_id}/memberships"

    def scores_for(self, lineitem_id: str) -> list[dict]:
        number = lineitem_id.rstrip("/").rsplit("/", 1)[-1]
        return [score for score in self.scores if score["lineitem"] == number]

    # --- Tool-side registration (what an admin would type into attnquiz) -----------------

    def register_in_attnquiz(self):
        from lti import services

        return services.platform_register(
            name="Test LMS (lti1p3platform)",
            issuer=self.issuer,
            client_id=self.client_id,
            auth_login_url=self.url + "/auth",
            auth_token_url=self.url + "/token",
            deployment_ids=[self.deployment_id],
            keyset_url=self.url + "/jwks",
        )

    def trust_tool_keys(self, jwks: dict) -> None:
        """Use attnquiz's keyset as given (the test client has no server to fetch it from)."""
        self.registration.set_tool_key_set(jwks)

    # --- Messages --------------------------------------------------------------------

    def login_url(self, *, user: str, hint: str) -> str:
        """The third-party login initiation URL the LMS sends the browser to."""
        starter = LoginStarter(None, self.conf)
        starter.set_lti_message_hint(hint=hint)
        return starter.initiate_login(user)

    def authorize(self, query: dict) -> dict:
        """The OIDC authorisation endpoint: a signed launch for the hinted message.

        Returns ``{"id_token", "state", "launch_url"}`` — what the auto-posting form carries.
        """
        if query.get("redirect_uri") != self.tool_url + "/lti/launch/":
            raise ValueError(f"redirect_uri {query.get('redirect_uri')!r} is not registered")
        user = self.users[query["login_hint"]]
        kind, _, target = query.get("lti_message_hint", "").partition(":")
        launcher = Launcher(PlainRequest({"method": "GET", "query": query}), self.conf)
        launcher.set_user_data(
            user["user_id"], user["roles"], full_name=user["name"], email_address=user["email"]
        )
        launcher.set_extra_claims(
            {"given_name": user["given_name"], "family_name": user["family_name"]}
        )
        if kind == "deeplink":
            context_id = target
            launcher.set_dl(
                self.url + "/deep_link_return",
                title="Add attnquiz content",
                accept_types={"ltiResourceLink"},
                extra_data={"context_id": context_id},
            )
        else:
            link = self.links[target]
            context_id = link.context_id
            launcher.set_resource_link_claim(link.resource_link_id, title=link.title)
            if link.custom:
                launcher.set_custom_parameters_claim(link.custom)
        context = self.contexts[context_id]
        launcher.set_launch_context_claim(
            context_id, context_title=context["title"], context_label=context["label"]
        )
        lineitem_id = None if kind == "deeplink" else self.links[target].lineitem_id  # a URL
        launcher.set_ags(
            self.lineitems_url(context_id), lineitem_url=lineitem_id,
            allow_creating_lineitems=True,
        )
        memberships = self.memberships_url(context_id)
        if self.page_size:
            memberships += f"?limit={self.page_size}"
        launcher.set_nrps(memberships)
        return launcher.lti_launch()

    def accept_deep_link(self, form: dict) -> list[dict]:
        """The deep-linking return URL: verify the tool's JWT, add its links to the course."""
        items = self.conf.validate_deeplinking_resp(form)
        claims = jwt.decode(form["JWT"], options={"verify_signature": False})
        if claims.get("aud") not in (self.issuer, [self.issuer]):
            raise ValueError(f"deep linking response addressed to {claims.get('aud')!r}")
        if claims.get("https://purl.imsglobal.org/spec/lti/claim/deployment_id") != self.deployment_id:
            raise ValueError("deep linking response for another deployment")
        context_id = claims["https://purl.imsglobal.org/spec/lti-dl/claim/data"]["context_id"]
        for item in items:
            self.deep_link_items.append(item)
            number = len(self.links) + 1
            line_item = item.get("lineItem")
            link = self.add_link(
                f"dl-link-{number}", context_id=context_id, title=item["title"],
                custom=item.get("custom") or {},
            )
            if line_item:
                link.lineitem_id = self.lineitem_create(
                    context_id=context_id, resourceLinkId=link.resource_link_id, **line_item
                )["id"]
        return items

    # --- Dynamic registration (not in lti1p3platform: LTI-DR 1.0 by hand) ---------------

    def openid_configuration(self) -> dict:
        return {
            "issuer": self.issuer,
            "authorization_endpoint": self.url + "/auth",
            "token_endpoint": self.url + "/token",
            "jwks_uri": self.url + "/jwks",
            "registration_endpoint": self.url + "/register",
            "scopes_supported": ["openid"],
            "response_types_supported": ["id_token"],
            "id_token_signing_alg_values_supported": ["RS256"],
            "https://purl.imsglobal.org/spec/lti-platform-configuration": {
                "product_family_code": "lti1p3platform",
                "version": "0.1.8",
                "messages_supported": [
                    {"type": "LtiResourceLinkRequest"}, {"type": "LtiDeepLinkingRequest"},
                ],
            },
        }

    def register_tool(self, body: dict, authorization: str) -> tuple[int, dict]:
        if authorization != f"Bearer {self.registration_token}":
            return 401, {"error": "bad registration token"}
        tool = body.get("https://purl.imsglobal.org/spec/lti-tool-configuration", {})
        self.registrations.append(body)
        self.registration.set_tool_key_set_url(body["jwks_uri"])
        return 200, {
            **body,
            "client_id": self.client_id,
            "https://purl.imsglobal.org/spec/lti-tool-configuration": {
                **tool, "deployment_id": self.deployment_id,
            },
        }

    # --- HTTP ------------------------------------------------------------------------

    def _handler(self):
        platform = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _send(self, status: int, body, content_type="application/json", headers=None):
                data = body if isinstance(body, bytes) else (
                    body.encode() if isinstance(body, str) else json.dumps(body).encode()
                )
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            def _read(self) -> tuple[dict, dict, t.Any]:
                split = urllib.parse.urlsplit(self.path)
                query = dict(urllib.parse.parse_qsl(split.query))
                length = int(self.headers.get("Content-Length", 0))
                raw = self.rfile.read(length).decode() if length else ""
                form, body = {}, None
                if "json" in (self.headers.get("Content-Type") or ""):
                    body = json.loads(raw or "null")
                elif raw:
                    form = dict(urllib.parse.parse_qsl(raw))
                return query, form, body

            def do_GET(self):
                self._dispatch("GET")

            def do_POST(self):
                self._dispatch("POST")

            def _service_request(self, query, body):
                return PlainRequest({
                    "method": self.command, "query": query, "headers": dict(self.headers),
                    "content_type": self.headers.get("Content-Type", ""),
                    "path": self.path, "json": body,
                })

            def _answer(self, response):
                if not 200 <= response.code < 300:
                    return self._send(response.code, {"error": response.message})
                result = response.result
                headers = {}
                if isinstance(result, dict) and "content" in result:
                    if result.get("next"):
                        headers["Link"] = f'<{result["next"]}>; rel="next"'
                    result = result["content"]
                elif isinstance(result, dict) and result.get("next"):
                    headers["Link"] = f'<{result["next"]}>; rel="next"'  # quoted: see module doc
                self._send(response.code, result if result is not None else b"",
                           content_type=response.media_type, headers=headers)

            def _dispatch(self, method):
                query, form, body = self._read()
                path = urllib.parse.urlsplit(self.path).path
                with platform.lock:
                    platform.requests.append((method, path))
                parts = path.strip("/").split("/")
                try:
                    if path == "/jwks":
                        return self._send(200, platform.conf.get_jwks())
                    if path == "/auth":
                        launch = platform.authorize(query)
                        return self._send(200, autopost_page(launch["launch_url"], {
                            "id_token": launch["id_token"], "state": launch["state"],
                        }), content_type="text/html")
                    if path == "/token" and method == "POST":
                        return self._send(200, platform.conf.get_access_token(form))
                    if path == "/deep_link_return" and method == "POST":
                        items = platform.accept_deep_link(form)
                        titles = ", ".join(html.escape(i["title"]) for i in items)
                        return self._send(200, f"<!doctype html><title>Added</title>"
                                          f"<p id='added'>Added: {titles}</p>",
                                          content_type="text/html")
                    if path == "/.well-known/openid-configuration":
                        return self._send(200, platform.openid_configuration())
                    if path == "/register" and method == "POST":
                        status, answer = platform.register_tool(
                            body or {}, self.headers.get("Authorization", "")
                        )
                        return self._send(status, answer)
                    if path == "/launch":  # a page of the LMS with the tool in an iframe
                        src = platform.login_url(user=query["user"], hint=query["hint"])
                        return self._send(200, frame_page(src), content_type="text/html")
                    if parts[0] == "contexts" and len(parts) >= 3:
                        context_id = parts[1]
                        request = self._service_request(query, body)
                        if parts[2] == "memberships":
                            service = PlatformNrps(request, platform, context_id)
                            return self._answer(service.handle_get_members())
                        if parts[2] == "lineitems" and len(parts) == 3:
                            service = PlatformAgs(request, platform, context_id)
                            if method == "POST":
                                return self._answer(service.handle_create_lineitem())
                            return self._answer(service.handle_get_lineitems())
                        if parts[2] == "lineitems" and len(parts) == 5 and parts[4] == "scores":
                            service = PlatformAgs(request, platform, context_id, parts[3])
                            return self._answer(service.handle_update_score(parts[3]))
                        if parts[2] == "lineitems" and len(parts) == 4:
                            service = PlatformAgs(request, platform, context_id, parts[3])
                            return self._answer(service.handle_get_lineitem(parts[3]))
                    return self._send(404, {"error": f"no route {method} {path}"})
                except Exception as error:  # the test reads the reason in the answer
                    from lti1p3platform.exceptions import LtiServiceException

                    status = getattr(error, "status_code", 400) if isinstance(
                        error, LtiServiceException) else 400
                    return self._send(status, {"error": f"{type(error).__name__}: {error}"})

        return Handler


def autopost_page(action: str, fields: dict) -> str:
    inputs = "".join(
        f'<input type="hidden" name="{html.escape(k)}" value="{html.escape(v)}">'
        for k, v in fields.items()
    )
    return (
        "<!doctype html><html><body>"
        f'<form id="f" method="post" action="{html.escape(action)}">{inputs}</form>'
        "<script>document.getElementById('f').submit();</script></body></html>"
    )


def frame_page(src: str) -> str:
    return (
        "<!doctype html><html><head><title>Test LMS</title></head><body>"
        "<h1>Test LMS course</h1>"
        f'<iframe id="tool" src="{html.escape(src)}" width="1000" height="800" '
        'allow="clipboard-write"></iframe></body></html>'
    )


def form_fields(page: str) -> dict:
    """The hidden fields of an auto-posting form (what a browser would post)."""
    import re

    return {
        html.unescape(name): html.unescape(value)
        for name, value in re.findall(r'name="([^"]+)" value="([^"]*)"', page)
    }


def wait_for(predicate, *, timeout: float = 20.0, interval: float = 0.1):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise TimeoutError("condition not met")
