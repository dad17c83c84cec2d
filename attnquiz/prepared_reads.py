"""Reads compiled to SQL once per process, then run with new values.

Django builds and compiles a queryset's SQL every time it is evaluated. For the reads that
every exam-hour request makes (the exercise page's variant and role, the submit's
variant) that costs more CPU than PostgreSQL spends answering them: measured, 6.8 ms of
Python for a read whose SQL, run by hand, costs 0.9 ms, and 1.7 ms when compiled once.

``PreparedRead(build, **kinds)`` takes a function that builds the queryset from one value
per name (``kinds`` says each name's type: ``int`` or ``str``). It builds it once with
placeholder values, compiles it, and remembers which SQL parameters are which names. Each
run substitutes the caller's values and turns the rows into what the queryset itself would
give: model instances with their ``select_related`` rows and annotations, or the tuples (or,
flat, the values) of a ``values_list``.

What the queryset's *shape* depends on cannot change between runs: a value must not decide
which joins or conditions exist (``None``, a list for ``__in``, a model instance) and must
not be transformed on its way into the SQL (``__contains`` wraps it in ``%``). Both are
refused when the read is compiled (``ImproperlyConfigured``), never silently run wrong.
A read matches its values (``=``): an int no 64-bit column can hold matches no row.

On PostgreSQL a prepared read is also planned once per connection: it runs on a cursor that
binds its values on the server, and psycopg prepares it as a named statement when the
connection allows prepared statements (``OPTIONS["prepare_threshold"]`` not None; the
settings turn it on unless ``DATABASE_PREPARED_STATEMENTS=0``, as a PgBouncer in
transaction mode without ``max_prepared_statements`` needs). Planning the exercise page's
eight-table read cost PostgreSQL 2.3 ms against 0.23 ms to run it. The ORM's own queries
keep Django's client-side binding, which never prepares.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from django.core.exceptions import EmptyResultSet, FullResultSet, ImproperlyConfigured
from django.db import connections
from django.db.backends.utils import CursorDebugWrapper, CursorWrapper
from django.db.models import Model, QuerySet
from django.db.models.query import (
    FlatValuesListIterable,
    ModelIterable,
    ValuesListIterable,
    get_related_populators,
)

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_INT_PLACEHOLDER_BASE = 2_087_654_321  # within every integer column (Django refuses a 32-bit id past 2**31 - 1), far from any id a test makes
# LIKE's wildcards and escape in it: a lookup that escapes a value changes it visibly.
_STR_MARKER = "\u27e8prepared:"
_STR_PLACEHOLDER = _STR_MARKER + "{name}%_\\\u27e9"


class PreparedRead:
    def __init__(self, build: Callable[..., QuerySet], **kinds: type):
        if not kinds or any(kind not in (int, str) for kind in kinds.values()):
            raise ImproperlyConfigured("A prepared read takes int or str values, one or more.")
        self._build = build
        self._kinds = kinds
        self._compiled = threading.local()  # a compiler is bound to its thread's connection

    def first(self, **values):
        """The first row the read gives with these values, or None (the queryset should
        end in ``[:1]`` so the database stops there)."""
        rows = self.all(**values)
        return rows[0] if rows else None

    def all(self, **values) -> list:
        values = self._checked(values)
        if any(type(value) is int and not _INT64_MIN <= value <= _INT64_MAX for value in values.values()):
            return []  # no column holds it (an id typed into a URL): Django's lookups match nothing too
        compiled = self._compiled_read()
        params = compiled.params_for(values)
        with _cursor_planned_once(connections[compiled.alias]) as cursor:
            cursor.execute(compiled.sql, params)
            rows = cursor.fetchall()
        return compiled.results(rows)

    def _checked(self, values: dict) -> dict:
        if values.keys() != self._kinds.keys():
            raise TypeError(f"a prepared read takes exactly {sorted(self._kinds)}, got {sorted(values)}")
        return {name: _plain(value, self._kinds[name], name) for name, value in values.items()}

    def _compiled_read(self) -> _CompiledRead:
        compiled = getattr(self._compiled, "read", None)
        if compiled is None:
            compiled = _CompiledRead.of(self._build, self._kinds)
            self._compiled.read = compiled
        return compiled


def prepared_execute(sql: str, params: tuple | list, *, using: str = "default") -> int:
    """Run one statement written by hand (an UPDATE the grading worker makes for every
    answer) on the cursor a prepared read uses: on PostgreSQL it is planned once per
    connection and its values are bound on the server. Returns the rows it changed."""
    with _cursor_planned_once(connections[using]) as cursor:
        cursor.execute(sql, params)
        return cursor.rowcount


def _cursor_planned_once(connection):
    """Django's cursor (its query log and execute wrappers included) around one that binds
    values on the server, where the server can keep a prepared statement; else Django's own."""
    if connection.vendor != "postgresql":
        return connection.cursor()
    # As Django's own cursor does: a connection the server dropped while it sat idle is
    # replaced here, not failed on (attnquiz.postgresql skips this for a busy connection).
    connection.close_if_health_check_failed()
    connection.ensure_connection()
    if getattr(connection.connection, "prepare_threshold", None) is None:
        return connection.cursor()  # prepared statements off (a transaction pooler), or psycopg 2
    from django.db.backends.postgresql.base import ServerBindingCursor

    connection.validate_thread_sharing()
    with connection.wrap_database_errors:
        cursor = ServerBindingCursor(connection.connection)
    if connection.queries_logged:
        return _DebugCursorLoggingValues(cursor, connection)
    return connection.make_cursor(cursor)


class _DebugCursorLoggingValues(CursorDebugWrapper):
    """The query log (tests, DEBUG) gets the SQL with its values, as for Django's own
    cursor: psycopg keeps no query text after running a prepared statement."""

    def execute(self, sql, params=None):
        with self.debug_sql(self.db.ops.compose_sql(sql, params)):
            return CursorWrapper.execute(self, sql, params)


def _plain(value, kind: type, name: str) -> int | str:
    """``value`` as a plain int or str: a choices member (``Role.STUDENT``) is its value; a
    bool is not an int here, nor is None any kind."""
    if not isinstance(value, kind) or isinstance(value, bool):
        raise TypeError(f"{name} must be {kind.__name__}, got {type(value).__name__}")
    return int(value) if kind is int else str.__str__(value)


def _placeholders(kinds: dict[str, type]) -> dict[str, int | str]:
    return {
        name: _INT_PLACEHOLDER_BASE + index if kind is int else _STR_PLACEHOLDER.format(name=name)
        for index, (name, kind) in enumerate(kinds.items())
    }


class _CompiledRead:
    def __init__(self, *, queryset: QuerySet, sql: str, slots: list, compiler):
        self.alias = queryset.db
        self.sql = sql
        self._slots = slots  # per SQL parameter: ("value", name) or ("constant", value)
        self._compiler = compiler
        self._iterable = queryset._iterable_class
        if self._iterable not in (ModelIterable, ValuesListIterable, FlatValuesListIterable):
            raise ImproperlyConfigured("A prepared read gives model instances or values_list rows, not "
                                       f"{self._iterable.__name__}.")
        # What results_iter and ModelIterable work out on every run, worked out once.
        self._fields = [column[0] for column in compiler.select[: compiler.col_count]]
        self._converters = compiler.get_converters(self._fields)
        self._composite = compiler.has_composite_fields(self._fields)
        if self._iterable is ModelIterable:
            self._model_rows = _ModelRows(compiler, self.alias)

    @classmethod
    def of(cls, build, kinds: dict[str, type]) -> _CompiledRead:
        placeholders = _placeholders(kinds)
        queryset = build(**placeholders)
        if queryset._prefetch_related_lookups:
            raise ImproperlyConfigured("A prepared read cannot prefetch: it runs one query.")
        compiler = queryset.query.get_compiler(using=queryset.db)
        try:
            sql, params = compiler.as_sql()
        except (EmptyResultSet, FullResultSet) as decided:
            # Django dropped a condition for a placeholder (out of a small column's range):
            # the SQL would depend on the value.
            raise ImproperlyConfigured("The read's SQL depends on its values; it cannot be prepared.") from decided
        by_placeholder = {(type(value), value): name for name, value in placeholders.items()}
        slots = [cls._slot(param, by_placeholder, placeholders) for param in params]
        missing = set(kinds) - {name for kind, name in slots if kind == "value"}
        if missing:
            raise ImproperlyConfigured(f"The read does not use {sorted(missing)} as a value of its own.")
        return cls(queryset=queryset, sql=sql, slots=slots, compiler=compiler)

    @staticmethod
    def _slot(param, by_placeholder: dict, placeholders: dict) -> tuple[str, object]:
        name = by_placeholder.get((type(param), param))
        if name is not None:
            return "value", name
        text = str(param)
        markers = [str(value) if isinstance(value, int) else _STR_MARKER for value in placeholders.values()]
        if any(marker in text for marker in markers):
            raise ImproperlyConfigured(
                f"The read changes a value on its way into the SQL ({param!r}); pass it ready-made."
            )
        return "constant", param

    def params_for(self, values: dict) -> tuple:
        return tuple(values[item] if kind == "value" else item for kind, item in self._slots)

    def results(self, rows: list) -> list:
        compiler = self._compiler
        if compiler.has_extra_select:
            rows = [row[: compiler.col_count] for row in rows]
        if self._converters:
            rows = compiler.apply_converters(rows, self._converters)
        if self._composite:
            rows = compiler.composite_fields_to_tuples(rows, self._fields)
        if self._iterable is ValuesListIterable:
            return [tuple(row) for row in rows]
        if self._iterable is FlatValuesListIterable:
            return [row[0] for row in rows]
        return self._model_rows.instances(rows)


class _ModelRows:
    """Rows made into instances as ModelIterable makes them: the model, its select_related
    rows and its annotations."""

    def __init__(self, compiler, alias: str):
        klass_info = compiler.klass_info
        select = compiler.select
        self._alias = alias
        self._model = klass_info["model"]
        self._first, self._last = klass_info["select_fields"][0], klass_info["select_fields"][-1] + 1
        self._init_list = [column[0].target.attname for column in select[self._first : self._last]]
        self._populators = get_related_populators(klass_info, select, alias)
        self._annotations = list(compiler.annotation_col_map.items())

    def instances(self, rows) -> list[Model]:
        instances = []
        for row in rows:
            instance = self._model.from_db(self._alias, self._init_list, row[self._first : self._last])
            for populator in self._populators:
                populator.populate(row, instance)
            for name, position in self._annotations:
                setattr(instance, name, row[position])
            instances.append(instance)
        return instances
