"""The web app's security rules, checked on every route the app has (its own and every page module's, found by
enumerating ``app.routes``, so a page added later is covered without a new test): no page without a session,
no action without the role it needs, no unsafe request without its CSRF token, the security headers on every
response, error pages without tracebacks, and no parameter of any route that makes the server fail."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.routing import Route
from starlette.testclient import TestClient
from web_support import csrf, make_app, signed_in

from passhat.serve.web.accounts import ROLES, role_includes
from passhat.serve.web.security import required_role

PUBLIC = {"/login", "/login/totp", "/enrol"}  # the sign-in pages: open to anyone, by design
PLAUSIBLE = {"name": "someone", "run_id": "run-1", "ticket_id": "1", "trial_id": "1", "scenario": "task-1"}
PARAM = re.compile(r"{(\w+)(?::(\w+))?}")
SECURITY_HEADERS = ("content-security-policy", "x-frame-options", "x-content-type-options", "referrer-policy")


@pytest.fixture(scope="module")
def out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("runs")


@pytest.fixture(scope="module")
def app(out: Path):
    return make_app(out)


@pytest.fixture(scope="module")
def clients(app, out: Path) -> dict[str, TestClient]:
    """A signed-in client of each role."""
    return {role: signed_in(app, out, role, f"{role}-user") for role in ROLES}


def filled(path: str, values: dict[str, str] | None = None) -> str:
    """The route's path with each parameter given a plausible value (``values`` first)."""

    def value(match: re.Match[str]) -> str:
        name, convertor = match.group(1), match.group(2)
        if values and name in values:
            return quote(values[name], safe="")
        return {"int": "1", "float": "1.5", "path": "a/b", "uuid": "00000000-0000-0000-0000-000000000001"}.get(
            convertor or "", PLAUSIBLE.get(name, "x1")
        )

    return PARAM.sub(value, path)


def endpoints(app) -> Iterator[tuple[Route, str]]:
    """Every (route, method) of the app, HEAD left to GET's."""
    for route in app.routes:
        if isinstance(route, Route):
            for method in sorted(route.methods or ()):
                if method != "HEAD":
                    yield route, method


def unsafe(method: str) -> bool:
    return method not in ("GET", "HEAD", "OPTIONS")


def request(client: TestClient, method: str, url: str, data: dict[str, str] | None = None, params: dict | None = None):
    if unsafe(method):
        return client.request(method, url, data=data or {}, params=params, follow_redirects=False)
    return client.request(method, url, params=params, follow_redirects=False)


def test_the_app_has_the_contracts_routes(app):
    paths = {route.path for route, _ in endpoints(app)}
    assert {"/login", "/login/totp", "/enrol", "/logout", "/account", "/admin/users", "/audit"} <= paths
    assert any(getattr(route, "path", None) == "/static" for route in app.routes)


def test_every_route_but_the_sign_in_pages_needs_a_role(app):
    for route, method in endpoints(app):
        assert (required_role(route.endpoint) is None) == (route.path in PUBLIC), f"{method} {route.path}"


def test_without_a_session_every_page_sends_to_sign_in_and_every_action_is_refused(app):
    for route, method in endpoints(app):
        if route.path in PUBLIC:
            continue
        client = TestClient(app)
        url = filled(route.path)
        if not unsafe(method):
            response = request(client, method, url)
            assert response.status_code == 303, f"{method} {url}"
            assert response.headers["location"] == f"/login?next={quote(url, safe='')}"
        else:
            data = {"csrf_token": csrf(client)}  # a valid pre-session token: the refusal is for the missing session
            assert request(client, method, url, data).status_code == 401, f"{method} {url}"
            assert request(TestClient(app), method, url).status_code in (401, 403), f"{method} {url} without a token"


def test_every_route_refuses_each_role_below_its_own(app, clients):
    checked = 0
    for route, method in endpoints(app):
        needed = required_role(route.endpoint)
        if needed is None:
            continue
        for role, client in clients.items():
            if role_includes(role, needed):
                continue
            response = request(client, method, filled(route.path), {"csrf_token": csrf(client)})
            assert response.status_code == 403, f"{role} {method} {route.path}"
            assert f"needs the {needed} role" in response.text
            checked += 1
    assert checked > 0


def test_every_unsafe_request_without_its_csrf_token_is_refused_even_signed_in(app, clients):
    admin = clients["admin"]
    other_token = csrf(clients["viewer"])  # valid, but for another session
    for route, method in endpoints(app):
        if not unsafe(method):
            continue
        url = filled(route.path)
        for data, headers in (({}, {}), ({"csrf_token": other_token}, {}), ({"csrf_token": ""}, {"X-CSRF-Token": "0" * 64})):
            response = admin.request(method, url, data=data, headers=headers, follow_redirects=False)
            assert response.status_code == 403, f"{method} {url} with {data or headers or 'nothing'}"
    assert admin.get("/account").status_code == 200  # still signed in: none of those went through


def test_the_sign_in_form_needs_its_token_too(app):
    client = TestClient(app)
    assert client.post("/login", data={"name": "admin-user", "password": "x" * 12}).status_code == 403


def test_the_csrf_token_may_come_in_a_header(app, clients):
    admin = clients["admin"]
    response = admin.post("/admin/users/nobody/disable", headers={"X-CSRF-Token": csrf(admin)})
    assert response.status_code == 400  # past the CSRF check: refused for the unknown account


def test_every_response_carries_the_security_headers(app, clients):
    responses = [TestClient(app).get("/login"), TestClient(app).get("/no/such/page"), TestClient(app).get("/static/style.css")]
    responses += [request(clients["admin"], method, filled(route.path)) for route, method in endpoints(app) if not unsafe(method)]
    for response in responses:
        for header in SECURITY_HEADERS:
            assert header in response.headers, f"{response.url}: {header}"
        assert "'unsafe-inline'" not in response.headers["content-security-policy"]
        assert response.headers["x-frame-options"] == "DENY"
    pages = [r for r in responses if not r.url.path.startswith("/static/")]
    assert all(r.headers["cache-control"] == "no-store" for r in pages)


def test_no_page_has_inline_script(app, clients):
    for route, method in endpoints(app):
        if not unsafe(method):
            body = request(clients["admin"], method, filled(route.path)).text
            assert not re.search(r"<script(?![^>]*\bsrc=)[^>]*>", body), route.path
            assert not re.search(r"\son[a-z]+\s*=", body), route.path


def test_errors_are_the_apps_own_pages_without_a_traceback(app, out: Path):
    from starlette.routing import Route as StarletteRoute

    async def broken(request):
        raise RuntimeError("secret internals")

    app.router.routes.append(StarletteRoute("/__broken", broken))
    try:
        client = TestClient(app, raise_server_exceptions=False)
        failed = client.get("/__broken")
        assert failed.status_code == 500 and "secret internals" not in failed.text and "Traceback" not in failed.text
        assert "content-security-policy" in failed.headers
    finally:
        app.router.routes.pop()
    missing = TestClient(app).get("/no/such/page")
    assert missing.status_code == 404 and "There is no page at this address" in missing.text
    wrong_method = TestClient(app).delete("/login", headers={"X-CSRF-Token": "x"})
    assert wrong_method.status_code in (403, 405)
    anyone = TestClient(app)
    assert anyone.patch("/audit", headers={"X-CSRF-Token": csrf(anyone)}).status_code == 405


def test_a_body_too_large_is_refused_before_it_is_read_whole(app, clients):
    response = clients["admin"].post(
        "/admin/users", content=b"x" * (2 << 20), headers={"content-type": "application/x-www-form-urlencoded"}
    )
    assert response.status_code == 413


# fuzz: whatever the parameters, never a server error

texts = st.text(st.characters(exclude_categories=("Cs",)), max_size=40)
FIELDS = ["name", "role", "password", "code", "next", "page", "new_password", "current_password", "repeat_password", "q", "sort"]
forms = st.dictionaries(st.sampled_from(FIELDS) | texts.filter(bool), texts, max_size=5)
queries = st.dictionaries(
    st.sampled_from(["page", "next", "q", "sort", "status", "filter", "a", "b"]) | texts.filter(bool), texts, max_size=4
)


def fuzz_route(client: TestClient, token: str, route: Route, method: str):
    """A property over one route: any path parameters, query and form fields (with a valid CSRF token)."""
    names = [m.group(1) for m in PARAM.finditer(route.path)]

    @settings(max_examples=15, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(path=st.fixed_dictionaries({n: texts.filter(bool) for n in names}), params=queries, data=forms)
    def fuzz(path, params, data):
        url = filled(route.path, path)
        response = request(client, method, url, {**data, "csrf_token": token}, params)
        assert response.status_code < 500, f"{method} {url} {params} {data}: {response.status_code}"

    return fuzz


@pytest.mark.slow
def test_no_parameter_of_any_route_makes_the_server_fail(app, out: Path):
    client = signed_in(app, out, "admin", "fuzzer")
    token = csrf(client)
    for route, method in sorted(endpoints(app), key=lambda pair: pair[0].path == "/logout"):  # signing out last
        fuzz_route(client, token, route, method)()
