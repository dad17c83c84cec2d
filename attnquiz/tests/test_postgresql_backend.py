"""attnquiz.postgresql: Django's health check (``SELECT 1`` before a request's first query)
is skipped for a connection that ended a request or task without a connection error within
``DATABASE_PROVEN_SECONDS``; an idle one is checked, and a dropped one replaced, as before."""

import pytest
from django.db import close_old_connections, connection, connections
from django.db.utils import OperationalError, ProgrammingError

pytestmark = [
    pytest.mark.skipif(connection.vendor != "postgresql", reason="the PostgreSQL backend"),
    pytest.mark.usefixtures("transactional_db"),  # no test transaction: the connection lives as in production
]


@pytest.fixture
def health_checks(monkeypatch):
    """Each health check the connection runs (``is_usable``: one ``SELECT 1`` round trip)."""
    checks = []
    wrapper = type(connections["default"])
    real = wrapper.is_usable

    def counted(self):
        checks.append(self.alias)
        return real(self)

    monkeypatch.setattr(wrapper, "is_usable", counted)
    a_request()  # a connection in use, as between two requests of a running server
    checks.clear()
    return checks


def a_request(sql: str = "SELECT pg_backend_pid()"):
    """What Django does around a request (and attnquiz.celery around a task): the
    connection's first query between two ``close_old_connections``."""
    close_old_connections()
    try:
        with connection.cursor() as cursor:
            cursor.execute(sql)
            return cursor.fetchone()[0]
    finally:
        close_old_connections()


def server_drops(pid: int) -> None:
    other = connections.create_connection("default")
    try:
        with other.cursor() as cursor:
            cursor.execute("SELECT pg_terminate_backend(%s)", [pid])
    finally:
        other.close()


def test_the_backend_is_djangos_postgresql_backend_underneath():
    assert connection.settings_dict["ENGINE"] == "attnquiz.postgresql"
    assert connection.vendor == "postgresql"


def test_a_connection_a_request_used_a_moment_ago_is_not_checked_again(health_checks):
    first = a_request()
    assert [a_request() for _ in range(3)] == [first] * 3  # the same connection
    assert health_checks == []


def test_a_connection_idle_longer_than_the_window_is_checked_before_each_request(health_checks, settings):
    settings.DATABASE_PROVEN_SECONDS = 0
    first = a_request()
    assert [a_request() for _ in range(2)] == [first] * 2
    assert health_checks == ["default"] * 3


def test_a_request_whose_query_failed_does_not_vouch_for_its_connection(health_checks):
    with pytest.raises(ProgrammingError):
        a_request("SELECT no_such_column FROM no_such_table")
    # The failed request's end checks the connection (Django's own rule after an error)...
    assert health_checks == ["default"]
    a_request()
    assert health_checks == ["default"]  # ...and that check vouches for the next request


def test_a_connection_the_server_dropped_while_idle_is_replaced_without_an_error(health_checks, settings):
    settings.DATABASE_PROVEN_SECONDS = 0
    dropped = a_request()
    server_drops(dropped)
    assert a_request() != dropped  # checked, found dead, replaced: the request never saw it


def test_a_connection_dropped_within_the_window_fails_one_request_then_is_replaced(health_checks):
    dropped = a_request()
    server_drops(dropped)
    with pytest.raises(OperationalError):
        a_request()  # the trade-off: the 503 a drop in the middle of a request always gave
    assert connection.connection is None  # closed when that request ended
    assert a_request() != dropped


def a_prepared_read():
    """A request whose first query is a prepared read (the exercise page's are all)."""
    from accounts.backends import _USER_BY_ID

    close_old_connections()
    try:
        _USER_BY_ID.first(user_id=1)
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            return cursor.fetchone()[0]
    finally:
        close_old_connections()


def test_a_prepared_read_on_a_connection_dropped_while_idle_gets_a_new_one(health_checks, settings):
    settings.DATABASE_PROVEN_SECONDS = 0
    dropped = a_prepared_read()
    server_drops(dropped)
    assert a_prepared_read() != dropped
    assert health_checks == ["default", "default"]


def test_a_prepared_read_on_a_busy_connection_is_not_checked(health_checks):
    first = a_prepared_read()
    assert [a_prepared_read() for _ in range(3)] == [first] * 3
    assert health_checks == []
