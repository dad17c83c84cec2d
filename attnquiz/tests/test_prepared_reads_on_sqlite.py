"""Every prepared read compiles on SQLite too, the embedded default of `make run`: the suite
runs on PostgreSQL, where a lookup such as ``iexact`` passes its value through untouched,
while SQLite's escapes it into a LIKE pattern, which a prepared read refuses (a 500 on every
page that runs it)."""

from __future__ import annotations

import importlib
import pkgutil

import pytest
from django.apps import apps
from django.db.backends.sqlite3.base import DatabaseWrapper

from attnquiz import prepared_reads
from attnquiz.prepared_reads import PreparedRead, _CompiledRead


def project_prepared_reads() -> list[tuple[str, PreparedRead]]:
    found = []
    for config in apps.get_app_configs():
        if "site-packages" in config.path:
            continue  # a library's app
        for module_info in pkgutil.walk_packages([config.path], prefix=f"{config.name}."):
            if ".tests" in module_info.name or ".migrations" in module_info.name or "management" in module_info.name:
                continue
            module = importlib.import_module(module_info.name)
            found += [(f"{module_info.name}.{name}", value) for name, value in vars(module).items()
                      if isinstance(value, PreparedRead)]
    return found


def sqlite_connection() -> DatabaseWrapper:
    return DatabaseWrapper({
        "NAME": ":memory:", "USER": "", "PASSWORD": "", "HOST": "", "PORT": "", "OPTIONS": {},
        "TIME_ZONE": None, "CONN_MAX_AGE": 0, "CONN_HEALTH_CHECKS": False, "AUTOCOMMIT": True,
        "ATOMIC_REQUESTS": False, "TEST": {},
    }, alias="sqlite-check")


READS = project_prepared_reads()


def test_the_project_has_prepared_reads_to_check():
    names = [name for name, _ in READS]
    assert "courses.middleware._TIME_ZONE_AND_ASSIGNMENT" in names
    assert len(names) >= 10


@pytest.mark.parametrize("name, read", READS, ids=[name for name, _ in READS])
def test_the_read_compiles_on_sqlite_with_its_values_passed_untouched(name, read):
    placeholders = prepared_reads._placeholders(read._kinds)
    queryset = read._build(**placeholders)
    sql, params = queryset.query.get_compiler(connection=sqlite_connection()).as_sql()
    by_placeholder = {(type(value), value): key for key, value in placeholders.items()}
    slots = [_CompiledRead._slot(param, by_placeholder, placeholders) for param in params]
    assert {key for kind, key in slots if kind == "value"} == set(read._kinds), sql
