"""The exercise format: validation of parsed YAML into an ``ExerciseSpec``.

Every problem is collected (not just the first) with its line and dotted path, so an
author fixes a file in one pass. Expressions are compiled here, which means unknown
names and anything outside the expression whitelist are refused at load time, never
when a student opens the exercise.
"""

from __future__ import annotations

import copy
import dataclasses
import difflib
import functools
import hashlib
import json
import math
import re
from dataclasses import dataclass, field

from .errors import ExpressionError, SpecError, SpecIssue
from .expressions import CONSTANTS, FUNCTIONS, Expression, compile_expression
from .skills import SKILL_SLUGS, unknown_skills
from .source import Path, SourceMap, read_yaml, render_path
from .storable import unstorable_values

ANSWER_TYPES = ("numeric", "matrix", "symbolic", "matrix_expression", "derivation", "choice", "free_text")
NUMERIC_TYPES = ("numeric", "matrix")
TEXT_ANSWER_TYPES = ("symbolic", "matrix_expression", "derivation", "free_text")
GENERATORS = ("int_matrix", "int_range", "choice", "derived", "fixed")
DIFFICULTIES = ("easy", "medium", "hard")
GATE_KINDS = ("max_weight", "unique_max", "entry_range", "not_constant", "require")
DIAGNOSE_QUANTITIES = ("weights", "output", "scores", "scaled_scores")
DIAGNOSE_MASKS = ("causal",)  # query i attends to keys 0..i (grading.core.misconceptions.MASKS)

TOP_LEVEL_FIELDS = {
    "slug": True, "title": True, "version": True, "topics": False, "difficulty": False,
    "parameters": True, "prompt": True, "parts": True, "gates": False, "variants": False,
    "skills": False, "figures": False,
}
PART_FIELDS = {
    "key": True, "type": True, "prompt": False, "answer": False, "answer_index": False,
    "points": False, "decimals": False, "tolerance": False, "hints": False, "solution": True,
    "diagnose": False, "symbols": False, "choices": False, "options": False, "skills": False,
}
GENERATOR_FIELDS = {
    "int_matrix": {"generator", "shape", "min", "max"},
    "int_range": {"generator", "min", "max"},
    "choice": {"generator", "from"},
    "derived": {"generator", "expr"},
    "fixed": {"generator", "value"},
}
# A figure names its kind by its first key (``heatmap: W``); heatmaps are the only kind.
FIGURE_FIELDS = {
    "heatmap": True, "title": False, "decimals": False, "row_label": False, "col_label": False, "range": False,
}
SLUG_PATTERN = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
NAME_PATTERN = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
PLACEHOLDER_PATTERN = re.compile(r"\{\{(.*?)\}\}", re.DOTALL)
RESERVED_NAMES = set(FUNCTIONS) | set(CONSTANTS)
DEFAULT_DECIMALS = 4
DEFAULT_ROUNDING_MARGIN = 0.05
DEFAULT_MAX_ATTEMPTS = 100
DEFAULT_MAX_WEIGHT = 0.95

# Hard caps on everything an author controls that sets how much work a draw, a preview or
# a self-test does; checked when the source is read, with the line of the offending field.
MAX_GATE_ATTEMPTS = 1000
MAX_MATRIX_SIDE = 12
MAX_PARAMETERS = 40
MAX_PARTS = 20
MAX_GATES = 40
MAX_HINTS = 20
MAX_CHOICES = 26
MAX_NAMED_VARIANTS = 20
MAX_LITERAL_ELEMENTS = 1000  # entries of a fixed value or of a choice generator's list
MAX_INT_BOUND = 10**9  # literal min/max of integer generators
MAX_FIGURES = 4
MAX_FIGURE_DECIMALS = 6
DEFAULT_FIGURE_DECIMALS = 2
DEFAULT_FIGURE_RANGE = (0.0, 1.0)  # attention weights: the colours of the graded results' heatmaps
MAX_FIGURE_TITLE_LENGTH = 120
MAX_FIGURE_LABEL_LENGTH = 30
# A parameter space this small (sets of parameter values, before gates) has the feedback
# templates of its options filled in on every variant when the file is read, not on a sample,
# when that takes at most this many syntax-tree nodes evaluated in all (about half a second).
MAX_VARIANTS_CHECKED_EVERY = 2000
MAX_EVERY_VARIANT_WORK = 1_000_000

# Bounds of a part's fields and of the checker options an author sets, so that every part
# can be drawn, shown and graded (docs/exercise-format.md, Limits). Added after versions were
# stored: a file being read is held to them, a stored version still opens (``limit``).
MAX_DECIMALS = 12  # a float holds 15-17 significant digits; also a placeholder's "| d"
MAX_SIGNIFICANT_FIGURES = 15
MAX_RELATIVE_TOLERANCE = 0.5  # rel: 1 would accept 0 for every answer
MAX_PART_POINTS = 100  # a part's weight within its exercise
MAX_HINT_TRIES = 100  # a hint's ``after``
MAX_MIN_STEPS = 10  # a derivation's min_steps
MIN_TIME_LIMIT = 0.5  # seconds a symbolic decision may take; less fails right answers
MAX_TIME_LIMIT = 2.0  # grading.core.symbolic.DEFAULT_TIME_LIMIT: the sandbox stops a check at 2 s of CPU
MAX_FORM_CREDIT = 0.99  # grading.core.symbolic caps it there: an answer in the wrong form never scores 1
MAX_TEXT_CHARS = 10_000  # grading.core.free_text.MAX_TEXT_CHARS
MAX_EXPRESSION_SIZE = 64  # grading.core.matrix_expression.MAX_SIZE: a side of a declared matrix
MAX_FORBIDDEN_SYMBOLS = 20
# Markdown is turned into HTML while a student's request waits (their variant's page), and
# Python-Markdown's time grows with a text's elements (about 1 s per 100,000 characters of
# headings or table cells, more for one long paragraph of emphasis). The bank's longest text
# is under 500 characters, its longest exercise under 8,000.
MAX_MARKDOWN_CHARS = 10_000  # one prompt, hint, solution, choice or feedback
MAX_EXERCISE_MARKDOWN_CHARS = 20_000  # all of them together: a page shows them at once

# Fields copied into length-limited database columns. The engine imports no Django, so the
# limits are written here; exercises/tests/test_engine_storable.py checks they equal the
# columns' max_length.
MAX_SLUG_LENGTH = 50  # exercises.Exercise.slug
MAX_TITLE_LENGTH = 200  # exercises.Exercise.title
MAX_VERSION = 1_000_000  # an author's own counter: large enough for any history, small enough to show
MAX_PART_KEY_LENGTH = 64  # the part of grading.Submission, instructor.Rubric, review.ReviewCard


@dataclass(frozen=True)
class Placeholder:
    expression: Expression
    decimals: int | None
    source: str  # the text between the braces, as written


@dataclass(frozen=True)
class Parameter:
    name: str
    generator: str
    settings: dict  # field -> literal value or compiled Expression


@dataclass(frozen=True)
class Hint:
    after_tries: int
    text: str


@dataclass(frozen=True)
class Part:
    key: str
    type: str
    prompt: str
    solution: str
    points: float
    decimals: int
    tolerance: dict | None  # {"atol", "rtol"} when declared; otherwise ``decimals`` decides
    answer_expression: Expression | None  # numeric / matrix
    answer_text: object  # text answer types: string (may contain placeholders) or rubric data
    answer_index: Expression | None  # choice chosen per variant
    choice_keys: tuple[str, ...]
    hints: tuple[Hint, ...]
    diagnose: dict  # field -> Expression or literal
    symbols: dict
    choices: tuple[dict, ...]
    options: dict
    skills: tuple[str, ...] = ()  # its own, or else the exercise's default
    index: int = field(default=0, compare=False)  # its place in ``parts``, for its path in the file


@dataclass(frozen=True)
class Gate:
    kind: str
    expression: Expression
    limit: float | None
    reason: str
    index: int = field(default=0, compare=False)  # its place in ``gates.checks``


@dataclass(frozen=True)
class Figure:
    """A heatmap shown after the prompt: one cell per entry of the matrix ``expression``
    gives on a variant, coloured on the scale ``low`` (lightest) .. ``high`` (darkest) and
    printing its number at ``decimals``. Rows are labelled "``row_label`` 0", "… 1", …
    (no labels when empty); columns likewise."""

    expression: Expression
    title: str
    decimals: int
    row_label: str
    col_label: str
    low: float
    high: float
    index: int = field(default=0, compare=False)  # its place in ``figures``


@dataclass(frozen=True)
class ExerciseSpec:
    slug: str
    title: str
    version: int
    topics: tuple[str, ...]
    difficulty: str
    parameters: tuple[Parameter, ...]
    prompt: str
    parts: tuple[Part, ...]
    gates: tuple[Gate, ...]
    rounding_margin: float
    max_attempts: int
    variants: dict  # name -> {parameter: fixed value}
    data: dict = field(repr=False)  # the validated source data, stored as JSON
    skills: tuple[str, ...] = ()  # the default for parts that declare none
    figures: tuple[Figure, ...] = ()  # shown after the prompt, in this order
    # Where each field was written, when the spec was read from YAML (empty when it was
    # rebuilt from stored JSON; see ``with_source_lines``).
    source_map: SourceMap = field(default_factory=SourceMap, repr=False, compare=False)

    def line_of(self, path: Path) -> int | None:
        return self.source_map.line(path) if self.source_map.lines else None

    def part(self, key: str) -> Part:
        for part in self.parts:
            if part.key == key:
                return part
        raise KeyError(f"exercise '{self.slug}' has no part '{key}'; parts: {', '.join(p.key for p in self.parts)}")


def load_spec(yaml_text: str) -> ExerciseSpec:
    """Parse and validate exercise YAML; raises SpecError listing every problem with its line."""
    data, source_map = read_yaml(yaml_text)
    spec = _validate(data, source_map, source=True)
    issues = _issues_on_every_variant(spec, yaml_text)
    if issues:
        raise SpecError(list(issues))
    return spec


# The same source gives the same issues: the bank's files are read again and again (every
# load of the bank), and filling the options of every variant is most of their reading.
_EVERY_VARIANT_ISSUES: dict[str, tuple[SpecIssue, ...]] = {}
MAX_REMEMBERED_SOURCES = 256


def _issues_on_every_variant(spec: ExerciseSpec, yaml_text: str) -> tuple[SpecIssue, ...]:
    """``selftest.options_on_every_variant`` of the valid ``spec`` read from ``yaml_text``."""
    from .selftest import options_on_every_variant  # late: the self-test draws variants of a valid spec

    key = hashlib.sha256(yaml_text.encode()).hexdigest()
    if key not in _EVERY_VARIANT_ISSUES:
        if len(_EVERY_VARIANT_ISSUES) >= MAX_REMEMBERED_SOURCES:
            _EVERY_VARIANT_ISSUES.clear()
        _EVERY_VARIANT_ISSUES[key] = tuple(options_on_every_variant(spec))
    return _EVERY_VARIANT_ISSUES[key]


def with_source_lines(spec: ExerciseSpec, yaml_text: str) -> ExerciseSpec:
    """``spec`` (e.g. rebuilt from stored JSON) knowing the lines of ``yaml_text``, the
    source it was read from, so problems found when drawing can name their line."""
    try:
        _, source_map = read_yaml(yaml_text)
    except SpecError:
        return spec
    return dataclasses.replace(spec, source_map=source_map)


# Parameter order is meaningful (each may use only earlier ones, and it fixes the draw
# order), but a JSON object's key order is not kept by every store (PostgreSQL jsonb
# sorts keys), so the stored form carries the order explicitly.
PARAMETER_ORDER_KEY = "_parameter_order"


def spec_to_json(spec: ExerciseSpec) -> dict:
    data = copy.deepcopy(spec.data)
    if isinstance(data.get("parameters"), dict):
        data[PARAMETER_ORDER_KEY] = list(data["parameters"])
    return data


def spec_from_json(data: dict) -> ExerciseSpec:
    data = copy.deepcopy(data)
    order = data.pop(PARAMETER_ORDER_KEY, None)
    if order is not None and isinstance(data.get("parameters"), dict):
        data["parameters"] = {name: data["parameters"][name] for name in order}
    # Stored JSON was storable when it was saved, and is not refused for a length limit
    # added since (an old version with a long part key must still open).
    return _validate(data, SourceMap(), source=False)


def placeholders_in(text: str) -> list[str]:
    return [match.group(1) for match in PLACEHOLDER_PATTERN.finditer(text)]


# ---------------------------------------------------------------------------


class _Validator:
    def __init__(self, source_map: SourceMap, *, source: bool):
        self.source_map = source_map
        self.source = source  # read from a file (not rebuilt from stored JSON)
        self.issues: list[SpecIssue] = []
        self.unstorable: set[Path] = set()  # fields already reported as unstorable
        self.markdown_chars = 0  # of the texts read so far (``markdown_length``)

    def error(self, path: Path, message: str, *, line: int | None = None) -> None:
        if self.unstorable and any(path[:end] in self.unstorable for end in range(1, len(path) + 1)):
            return  # "is not a finite number (.nan)" says more than "must be a number >= 0"
        self.issues.append(
            SpecIssue(line if line is not None else self.source_map.line(path), render_path(path), message)
        )

    def storable(self, data) -> None:
        """Report every value JSON or PostgreSQL cannot store (see ``storable``); later
        checks of the same fields stay quiet."""
        for value in unstorable_values(data):
            if value.key_of is None:
                self.error(value.path, value.message)
            else:  # the key cannot be shown in a path; report it on its mapping, at its line
                self.error(value.key_of, value.message, line=self.source_map.line(value.path))
            self.unstorable.add(value.path)

    def unstorable_within(self, path: Path) -> bool:
        """Whether a value at or under ``path`` was reported as unstorable (its other checks stay quiet)."""
        return any(value_path[:len(path)] == path for value_path in self.unstorable)

    def limit(self, bound):
        """``bound`` for a file being read; None (no bound) for a stored version, which was
        saved before the bound existed and must still open."""
        return bound if self.source else None

    def length(self, path: Path, value: str, limit: int) -> None:
        """A field copied into a database column of ``limit`` characters."""
        if self.source and len(value) > limit:
            self.error(path, f"must be at most {limit} characters long, got {len(value)}")

    def expression(self, value, path: Path, known: set[str]) -> Expression | None:
        try:
            return compile_expression(value, known_names=known)
        except ExpressionError as exc:
            self.error(path, str(exc))
            return None

    def fields(self, data, path: Path, allowed: dict[str, bool], what: str) -> bool:
        if not isinstance(data, dict):
            self.error(path, f"{what} must be a mapping")
            return False
        for name in data:
            if name not in allowed:
                self.error(path + (name,), f"unknown field '{name}'; known: {', '.join(allowed)}")
        for name, required in allowed.items():
            if required and name not in data:
                self.error(path, f"missing required field '{name}'")
        return True

    def text(self, data: dict, name: str, path: Path, known: set[str], *, required: bool) -> str:
        value = data.get(name)
        if value is None:
            return ""
        if not isinstance(value, str) or (required and not value.strip()):
            self.error(path + (name,), "must be non-empty text")
            return ""
        self.markdown_length(path + (name,), value)
        self.placeholders(value, path + (name,), known)
        return value

    def markdown_length(self, path: Path, text: str) -> None:
        """A text of a file being read within MAX_MARKDOWN_CHARS, and the file's texts
        within MAX_EXERCISE_MARKDOWN_CHARS together (said once, on the text that passes it)."""
        if not self.source:
            return
        if len(text) > MAX_MARKDOWN_CHARS:
            self.error(path, f"must be at most {MAX_MARKDOWN_CHARS} characters long, got {len(text)} "
                             "(longer Markdown takes too long to show)")
            return
        before, self.markdown_chars = self.markdown_chars, self.markdown_chars + len(text)
        if before <= MAX_EXERCISE_MARKDOWN_CHARS < self.markdown_chars:
            self.error(path, f"the exercise's texts (prompts, hints, solutions, choices, feedback) reach "
                             f"{self.markdown_chars} characters with this one; at most "
                             f"{MAX_EXERCISE_MARKDOWN_CHARS} are allowed together, as a page shows them at once")

    def placeholders(self, text: str, path: Path, known: set[str]) -> None:
        for match in PLACEHOLDER_PATTERN.finditer(text):
            line = self.source_map.line_within(path, text, match.start())
            try:
                placeholder = parse_placeholder(match.group(1), known)
            except ExpressionError as exc:
                self.error(path, f"placeholder {{{{{match.group(1).strip()}}}}}: {exc}", line=line)
                continue
            limit = self.limit(MAX_DECIMALS)
            if placeholder.decimals is not None and limit is not None and placeholder.decimals > limit:
                self.error(path, f"placeholder {{{{{match.group(1).strip()}}}}}: {PLACEHOLDER_DECIMALS}, got "
                           f"{_shown_number(placeholder.decimals)}", line=line)


PLACEHOLDER_DECIMALS = f"decimals after '|' must be a whole number from 0 to {MAX_DECIMALS}"


def parse_placeholder(source: str, known: set[str] | None) -> Placeholder:
    """The placeholder written ``source`` between its braces; with ``known``, its names
    must be among them. Without, as every variant fills the text it was checked in, it is
    parsed once per process (a compiled expression is never changed)."""
    if known is None:
        return _parsed_placeholder(source)
    return _parse_placeholder(source, known)


@functools.lru_cache(maxsize=4096)
def _parsed_placeholder(source: str) -> Placeholder:
    return _parse_placeholder(source, None)


def _parse_placeholder(source: str, known: set[str] | None) -> Placeholder:
    expression_text, _, decimals_text = source.partition("|")
    decimals = None
    if decimals_text.strip():
        if not decimals_text.strip().isdigit():
            raise ExpressionError(f"{PLACEHOLDER_DECIMALS}, got '{decimals_text.strip()}'")
        decimals = int(decimals_text)
    return Placeholder(compile_expression(expression_text, known_names=known), decimals, source)


def _validate(data, source_map: SourceMap, *, source: bool) -> ExerciseSpec:
    """``source``: ``data`` was just read from a file, so it must also fit the database
    (storable values, column lengths) before anything stores it."""
    check = _Validator(source_map, source=source)
    if source:
        check.storable(data)
    if not check.fields(data, (), TOP_LEVEL_FIELDS, "an exercise"):
        raise SpecError(check.issues)
    slug = _slug(check, data)
    title = data.get("title") if isinstance(data.get("title"), str) else ""
    if "title" in data and not title.strip():
        check.error(("title",), "must be non-empty text")
    check.length(("title",), title, MAX_TITLE_LENGTH)
    version = data.get("version", 1)
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        check.error(("version",), "must be a whole number >= 1")
        version = 1
    elif version > MAX_VERSION:
        check.error(("version",), f"must be at most {MAX_VERSION}, got a number of {len(str(version))} digits")
        version = 1
    topics = _topics(check, data)
    difficulty = data.get("difficulty", "medium")
    if difficulty not in DIFFICULTIES:
        check.error(("difficulty",), f"must be one of {', '.join(DIFFICULTIES)}")
    parameters, known = _parameters(check, data.get("parameters"))
    prompt = check.text(data, "prompt", (), known, required=True)
    figures = _figures(check, data.get("figures", []), known)
    skills = _skills(check, data.get("skills", []), ("skills",))
    parts = _parts(check, data.get("parts"), known, default_skills=skills)
    gates, rounding_margin, max_attempts = _gates(check, data.get("gates", {}), known)
    variants = _variants(check, data.get("variants", {}), known)
    if check.issues:
        raise SpecError(check.issues)
    return ExerciseSpec(
        slug=slug, title=title, version=version, topics=topics, difficulty=difficulty,
        parameters=tuple(parameters), prompt=prompt, parts=tuple(parts), gates=tuple(gates),
        rounding_margin=rounding_margin, max_attempts=max_attempts, variants=variants, data=data,
        skills=skills, figures=tuple(figures), source_map=source_map,
    )


def _slug(check: _Validator, data: dict) -> str:
    slug = data.get("slug")
    if "slug" in data and (not isinstance(slug, str) or not SLUG_PATTERN.match(slug)):
        check.error(("slug",), "must be lowercase letters, digits and single hyphens, e.g. 'attention-weights'")
        return ""
    check.length(("slug",), slug or "", MAX_SLUG_LENGTH)
    return slug or ""


def _topics(check: _Validator, data: dict) -> tuple[str, ...]:
    topics = data.get("topics", [])
    if not isinstance(topics, list) or not all(isinstance(t, str) for t in topics):
        check.error(("topics",), "must be a list of topic names")
        return ()
    return tuple(topics)


def _parameters(check: _Validator, raw) -> tuple[list[Parameter], set[str]]:
    """The valid parameters, and every declared name (so one bad parameter does not
    cascade into "unknown name" errors wherever it is used)."""
    path: Path = ("parameters",)
    if not isinstance(raw, dict):
        if raw is not None:
            check.error(path, "must be a mapping of parameter name to generator")
        return [], set()
    parameters: list[Parameter] = []
    declared: set[str] = set()
    if len(raw) > MAX_PARAMETERS:
        check.error(path, f"at most {MAX_PARAMETERS} parameters are allowed, found {len(raw)}")
        return [], set(raw)
    for name, definition in raw.items():
        here = path + (name,)
        if not NAME_PATTERN.match(name) or name in RESERVED_NAMES:
            check.error(here, f"'{name}' cannot be a parameter name (use letters, digits and _, not a function name)")
            continue
        parameter = _parameter(check, name, definition, here, set(declared))
        declared.add(name)
        if parameter is not None:
            parameters.append(parameter)
    return parameters, declared


def _parameter(check: _Validator, name: str, definition, path: Path, known: set[str]) -> Parameter | None:
    if not isinstance(definition, dict):
        check.error(path, "must be a mapping with a 'generator' field")
        return None
    generator = definition.get("generator")
    if generator not in GENERATORS:
        check.error(
            path + ("generator",),
            f"unknown generator '{generator}'; known: {', '.join(GENERATORS)}"
            if generator is not None
            else f"missing 'generator'; known: {', '.join(GENERATORS)}",
        )
        return None
    allowed = GENERATOR_FIELDS[generator]
    before = len(check.issues)
    for field_name in definition:
        if field_name not in allowed:
            check.error(path + (field_name,), f"unknown field '{field_name}' for generator '{generator}'; known: {', '.join(sorted(allowed))}")
    for field_name in sorted(allowed - {"generator"}):
        if field_name not in definition:
            check.error(path, f"generator '{generator}' needs field '{field_name}'")
    if len(check.issues) > before:
        return None
    settings: dict = {}
    if generator == "int_matrix":
        shape = definition["shape"]
        if not isinstance(shape, list) or not 1 <= len(shape) <= 2:
            check.error(path + ("shape",), "must be a list of one or two sizes, e.g. [n, d_model]")
            return None
        for i, size in enumerate(shape):
            if _is_number(size) and not 1 <= size <= MAX_MATRIX_SIDE:
                check.error(path + ("shape", i),
                            f"a matrix side must be between 1 and {MAX_MATRIX_SIDE}, got {_shown_number(size)}")
            elif _is_number(size) and size != int(size):
                check.error(path + ("shape", i), f"a matrix side must be a whole number, got {size}")
    if generator in ("int_matrix", "int_range"):
        _integer_bounds(check, definition, path)
    if len(check.issues) > before:
        return None  # a literal already refused is not compiled too (a second message for it)
    if generator == "int_matrix":
        shape = definition["shape"]
        settings["shape"] = [check.expression(size, path + ("shape", i), known) for i, size in enumerate(shape)]
    if generator in ("int_matrix", "int_range"):
        settings["min"] = check.expression(definition["min"], path + ("min",), known)
        settings["max"] = check.expression(definition["max"], path + ("max",), known)
    if generator == "choice":
        options = definition["from"]
        if not isinstance(options, list) or not options or not all(_is_numeric_literal(o) for o in options):
            check.error(path + ("from",), "must be a non-empty list of numbers or number lists")
            return None
        if _literal_size(options) > MAX_LITERAL_ELEMENTS:
            check.error(path + ("from",), f"at most {MAX_LITERAL_ELEMENTS} numbers in all are allowed")
            return None
        settings["from"] = options
    if generator == "derived":
        settings["expr"] = check.expression(definition["expr"], path + ("expr",), known)
    if generator == "fixed":
        if not _is_numeric_literal(definition["value"]):
            check.error(path + ("value",), "must be a number or a (nested) list of numbers")
            return None
        if _literal_size(definition["value"]) > MAX_LITERAL_ELEMENTS:
            check.error(path + ("value",), f"at most {MAX_LITERAL_ELEMENTS} numbers are allowed")
            return None
        settings["value"] = definition["value"]
    if len(check.issues) > before:
        return None
    return Parameter(name=name, generator=generator, settings=settings)


def _integer_bounds(check: _Validator, definition: dict, path: Path) -> None:
    """Literal ``min`` and ``max`` of an integer generator: whole numbers within
    ±MAX_INT_BOUND, min not above max (expressions are checked on every draw)."""
    literal = {}
    for bound in ("min", "max"):
        value = definition[bound]
        if not _is_number(value) or (isinstance(value, float) and not math.isfinite(value)):
            continue  # an expression, or a value reported as unstorable
        if abs(value) > MAX_INT_BOUND:
            check.error(path + (bound,),
                        f"must be between -{MAX_INT_BOUND} and {MAX_INT_BOUND}, got {_shown_number(value)}")
        elif value != int(value):
            check.error(path + (bound,), f"must be a whole number, got {value}")
        else:
            literal[bound] = value
    if len(literal) == 2 and literal["min"] > literal["max"]:
        check.error(path + ("min",), f"must not be above max ({literal['max']}): nothing could be drawn")


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _shown_number(value):
    """``value`` for a message; a whole number too long to read is named by its length."""
    if _is_number(value) and isinstance(value, int) and abs(value) >= 10**20:
        return f"a {len(str(abs(value)))}-digit number"
    return value


def _literal_size(value) -> int:
    return sum(_literal_size(v) for v in value) if isinstance(value, list) else 1


def _too_many(check: _Validator, raw, path: Path, limit: int, what: str) -> bool:
    if isinstance(raw, (list, dict)) and len(raw) > limit:
        check.error(path, f"at most {limit} {what} are allowed, found {len(raw)}")
        return True
    return False


def _is_numeric_literal(value) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, float):
        return True  # .nan and .inf are reported as unstorable, with their own path
    if isinstance(value, int):
        return _is_float_sized(value)  # a 400-digit whole number would overflow when drawn
    return isinstance(value, list) and bool(value) and all(_is_numeric_literal(v) for v in value)


def _skills(check: _Validator, raw, path: Path) -> tuple[str, ...]:
    if not isinstance(raw, list) or not all(isinstance(skill, str) for skill in raw):
        check.error(path, "must be a list of skill names, e.g. [scaling, softmax]")
        return ()
    for skill in unknown_skills(raw):
        check.error(path, f"unknown skill '{skill}'; known: {', '.join(SKILL_SLUGS)}")
    if len(set(raw)) != len(raw):
        check.error(path, "lists a skill twice")
    return tuple(dict.fromkeys(skill for skill in raw if skill in SKILL_SLUGS))


def _parts(check: _Validator, raw, known: set[str], *, default_skills: tuple[str, ...] = ()) -> list[Part]:
    if not isinstance(raw, list) or not raw:
        if raw is not None:
            check.error(("parts",), "must be a non-empty list of parts")
        return []
    if _too_many(check, raw, ("parts",), MAX_PARTS, "parts"):
        return []
    parts, seen = [], set()
    for index, definition in enumerate(raw):
        part = _part(check, definition, ("parts", index), known, default_skills)
        if part is None:
            continue
        if part.key in seen:
            check.error(("parts", index, "key"), f"duplicate part key '{part.key}'")
        seen.add(part.key)
        parts.append(part)
    return parts


def _part(check: _Validator, data, path: Path, known: set[str], default_skills: tuple[str, ...] = ()) -> Part | None:
    before = len(check.issues)
    if not check.fields(data, path, PART_FIELDS, "a part"):
        return None
    key, answer_type = data.get("key"), data.get("type")
    if "key" in data and (not isinstance(key, str) or not NAME_PATTERN.match(key)):
        check.error(path + ("key",), "must be a name of letters, digits and _")
    elif isinstance(key, str):
        check.length(path + ("key",), key, MAX_PART_KEY_LENGTH)
    if "type" in data and answer_type not in ANSWER_TYPES:
        check.error(path + ("type",), f"unknown answer type '{answer_type}'; known: {', '.join(ANSWER_TYPES)}")
    if len(check.issues) > before:
        return None
    prompt = check.text(data, "prompt", path, known, required=False)
    solution = check.text(data, "solution", path, known, required=True)
    points = _number(check, data, "points", path, default=1, minimum=0, maximum=check.limit(MAX_PART_POINTS))
    decimals = int(_number(check, data, "decimals", path, default=DEFAULT_DECIMALS, minimum=0,
                           maximum=check.limit(MAX_DECIMALS), whole=True))
    tolerance = _tolerance(check, data.get("tolerance"), path + ("tolerance",))
    answer_expression = answer_text = answer_index = None
    choices, choice_keys = (), ()
    if answer_type in NUMERIC_TYPES:
        if "answer" not in data:
            check.error(path, "missing required field 'answer'")
        else:
            answer_expression = check.expression(data["answer"], path + ("answer",), known)
    elif answer_type == "choice":
        choices, choice_keys = _choices(check, data.get("choices"), path + ("choices",), known)
        answer_text, answer_index = _choice_answer(check, data, path, choice_keys, known)
    else:
        if "answer" not in data:
            check.error(path, "missing required field 'answer'")
        else:
            answer_text = data["answer"]
            if isinstance(answer_text, str):
                check.placeholders(answer_text, path + ("answer",), known)
    hints = _hints(check, data.get("hints", []), path + ("hints",), known)
    diagnose = _diagnose(check, data.get("diagnose"), path + ("diagnose",), known)
    symbols = _symbols(check, data.get("symbols", {}), path + ("symbols",))
    options = data.get("options", {})
    if not isinstance(options, dict):
        check.error(path + ("options",), "must be a mapping")
        options = {}
    if answer_type == "derivation":
        _derivation_options(check, options, path)
    if check.source:  # checked when a file is read, as the bounds are (``_Validator.limit``)
        _checker_options(check, options, path, key=key, answer_type=answer_type, symbols=symbols,
                         known=known)
    # Checked when a file is read; a version stored before this check still opens (and grading
    # leaves out a known wrong value it cannot read).
    if answer_type == "numeric" and "value_feedback" in options and check.source:
        _value_feedback(check, options["value_feedback"], path + ("options", "value_feedback"), known, key)
    if "expression_feedback" in options and check.source:
        _expression_feedback(check, options["expression_feedback"], path + ("options", "expression_feedback"), known,
                             answer_type=answer_type, symbols=symbols, options=options, answer=data.get("answer"))
    skills = _skills(check, data["skills"], path + ("skills",)) if "skills" in data else default_skills
    if answer_type in REFERENCE_GRADED_TYPES and check.source and len(check.issues) == before \
            and not check.unstorable_within(path):
        checker_options = {"symbols": symbols, **options} if symbols else options  # as part_options builds them
        problem = _reference_problem(answer_type, data["answer"], checker_options)
        if problem:
            field_path, why = problem
            check.error(path + field_path, why)
    if len(check.issues) > before:
        return None
    return Part(
        key=key, type=answer_type, prompt=prompt, solution=solution, points=float(points),
        decimals=decimals, tolerance=tolerance,
        answer_expression=answer_expression, answer_text=answer_text, answer_index=answer_index,
        choice_keys=choice_keys, hints=hints, diagnose=diagnose, symbols=symbols,
        choices=choices, options=options, skills=skills, index=path[1],
    )


MAX_BIG_STEP_CREDIT = 0.5  # grading.core.derivation.MAX_BIG_STEP_CREDIT: the checker caps it too


def _derivation_options(check: _Validator, options: dict, path: Path) -> None:
    """A derivation starts from a stated expression, and its options must not let an
    answer that skips the reasoning score (see docs/exercise-format.md, Derivations)."""
    where = path + ("options",)  # the options' line, or the part's when it has none
    start = options.get("start")
    if (not isinstance(start, str) or not start.strip()) and not check.unstorable_within(where + ("start",)):
        check.error(where, "a derivation part needs options.start, the expression the derivation starts from "
                    "(e.g. \"Var(dot(q, k))\"): without it a derivation of another quantity with the same value "
                    "would be accepted")
    # A null option reads as its default when grading; a file being read says what it means.
    credit = options.get("big_step_credit")
    if _given(check, options, "big_step_credit") and not _bounded(credit, 0, MAX_BIG_STEP_CREDIT, whole=False):
        check.error(path + ("options", "big_step_credit"),
                    f"must be a number from 0 to {MAX_BIG_STEP_CREDIT}: the credit per rule of a step that skips "
                    "rules may not reach that of a step shown")
    limit = options.get("max_rules_per_step")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or not 0 <= limit <= 4):
        check.error(path + ("options", "max_rules_per_step"), "must be a whole number from 0 (no limit) to 4")
    most_steps = check.limit(MAX_MIN_STEPS)
    if _given(check, options, "min_steps") and not _bounded(options["min_steps"], 1, most_steps, whole=True):
        check.error(path + ("options", "min_steps"), _bound_words(1, most_steps, whole=True))


def _given(check: _Validator, options: dict, name: str) -> bool:
    """Whether option ``name`` is given: written with a value, or (in a file being read) as null."""
    return options.get(name) is not None or (check.source and name in options)


# The checker options of docs/exercise-format.md that are plain values, whatever the part's type
# (``exercises.engine.grading.part_options`` passes every option to the part's checker): a number
# option as (low, high or None for no upper bound, whole), then the true/false ones.
OPTION_NUMBERS = {
    "decimals": (0, MAX_DECIMALS, True),
    "sigfigs": (1, MAX_SIGNIFICANT_FIGURES, True),
    "atol": (0, None, False),
    "rtol": (0, MAX_RELATIVE_TOLERANCE, False),
    "time_limit": (MIN_TIME_LIMIT, MAX_TIME_LIMIT, False),
    "form_credit": (0, MAX_FORM_CREDIT, False),
    "max_chars": (1, MAX_TEXT_CHARS, True),
}
OPTION_FLAGS = ("partial_credit", "shape", "multiple", "allow_any_symbols", "product_of_powers", "require_simplified")
# The options each part type's checker reads (grading.core.<type>, and for numeric and matrix
# parts the diagnosis's tolerances in grading.core.misconceptions); a file that names any other
# is refused, so a misspelt option (``sigfig``) is not silently ignored. Stored versions are
# not checked again.
CHECKER_OPTIONS = {
    "numeric": ("decimals", "sigfigs", "atol", "rtol", "value_feedback"),
    "matrix": ("decimals", "sigfigs", "atol", "rtol", "partial_credit", "shape"),
    "symbolic": ("symbols", "allow_any_symbols", "forbid_symbols", "require_simplified", "product_of_powers",
                 "form_credit", "time_limit", "expression_feedback"),
    "matrix_expression": ("matrices", "scalars"),
    "derivation": ("start", "symbols", "random_variables", "dimension", "min_steps", "max_rules_per_step",
                   "big_step_credit", "partial_credit", "time_limit", "examples"),
    "choice": ("multiple", "partial_credit"),
    "free_text": ("max_chars",),
}
# Options that part_options builds from the part's own fields: written under options they would
# replace the checked field with an unchecked copy.
OPTIONS_FROM_FIELDS = {"choices": "choices", "choice_feedback": "choices", "diagnose": "diagnose"}
# Options whose placeholders their own validators read (``_value_feedback``, ``_expression_feedback``).
OPTIONS_WITH_OWN_PLACEHOLDER_CHECK = ("value_feedback", "expression_feedback")
SYMBOL_KINDS = "positive, real, integer, nonnegative or complex"
RANDOM_VARIABLE_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9]*$")  # grading.core.derivation.RandomModel
RANDOM_VARIABLE_FIELDS = {"mean", "variance", "distribution"}
DERIVATION_EXAMPLE_KINDS = {"right", "wrong", "hollow"}


def _checker_options(check: _Validator, options: dict, path: Path, *, key: str, answer_type: str, symbols: dict,
                     known: set[str]) -> None:
    """Every option a checker reads is of the kind, and within the bounds, that checker can
    grade with, so no option makes every answer to the part unreadable or the checker fail;
    a name the part's checker does not read is refused."""
    where = path + ("options",)
    for name, value in options.items():
        here = where + (name,)
        if _unread_option(check, name, here, answer_type=answer_type, key=key):
            continue
        if name in OPTION_NUMBERS:
            low, high, whole = OPTION_NUMBERS[name]
            if not _bounded(value, low, high, whole=whole):
                check.error(here, _bound_words(low, high, whole=whole))
        elif name in OPTION_FLAGS and not isinstance(value, bool):
            check.error(here, "must be true or false")
        elif name in OPTIONS_FROM_FIELDS:
            check.error(here, f"is not an option: write the part's `{OPTIONS_FROM_FIELDS[name]}` field instead")
        elif name == "symbols":
            _symbols(check, value, here)
        elif name == "forbid_symbols":
            _forbidden_symbols(check, value, here)
        if name not in OPTIONS_WITH_OWN_PLACEHOLDER_CHECK:
            _option_placeholders(check, value, here, known)
    if answer_type == "derivation":
        declared = options["symbols"] if isinstance(options.get("symbols"), dict) else symbols
        _derivation_model(check, options, where, declared)
    elif answer_type == "matrix_expression":
        _declared_matrices(check, options, where)


def _unread_option(check: _Validator, name, path: Path, *, answer_type: str, key: str) -> bool:
    """Whether option ``name`` is one the part's checker does not read (then reported). An
    option built from a field of the part, and a known wrong expression on a part of another
    type, are refused with their own message instead."""
    readable = CHECKER_OPTIONS[answer_type]
    if name in readable or name in OPTIONS_FROM_FIELDS or name == "expression_feedback":
        return False
    check.error(path, f"part `{key}`: {_why_unread(name, answer_type, readable)}; a {answer_type} part's "
                f"checker reads the options {', '.join(readable)}")
    return True


def _why_unread(name, answer_type: str, readable: tuple[str, ...]) -> str:
    """Why option ``name`` is not read: another part type's option, or a name no checker reads,
    with the nearest option of this part's checker or else the nearest field of a part."""
    readers = [kind for kind, names in CHECKER_OPTIONS.items() if name in names]
    if readers:
        return f"option '{name}' is read only by {_listed(readers)} parts"
    fields = [field_name for field_name in PART_FIELDS if field_name != "options"]
    if name in fields:
        return f"'{name}' is a field of the part, not an option: write it beside options, not under it"
    written = str(name)
    option = difflib.get_close_matches(written, readable, n=1)
    if option:
        return f"unknown option '{name}' (did you mean '{option[0]}'?)"
    part_field = difflib.get_close_matches(written, fields, n=1)
    if part_field:
        return (f"unknown option '{name}' (did you mean the part's field '{part_field[0]}'? it is written beside "
                "options, not under it)")
    return f"unknown option '{name}'"


def _listed(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def _option_placeholders(check: _Validator, value, path: Path, known: set[str]) -> None:
    """The {{ placeholders }} in an option's text (at any depth) name known parameters."""
    if isinstance(value, str):
        check.placeholders(value, path, known)
    elif isinstance(value, list):
        for item in value:
            _option_placeholders(check, item, path, known)
    elif isinstance(value, dict):
        for item in value.values():
            _option_placeholders(check, item, path, known)


def _symbols(check: _Validator, raw, path: Path) -> dict:
    """A part's ``symbols`` (or ``options.symbols``): name -> assumptions, each read as the
    symbolic checker reads it."""
    if not isinstance(raw, dict):
        check.error(path, "must be a mapping of symbol name to assumptions")
        return {}
    if check.source:
        for name, assumptions in raw.items():
            problem = _symbol_problem(name, assumptions)
            if problem:
                check.error(path + (name,), problem)
    return raw


def _symbol_problem(name, assumptions) -> str | None:
    from grading.core import symbolic  # late, as the engine's other uses of the checkers
    from grading.core.grades import InvalidRequest

    try:
        symbolic.symbols_key({"symbols": {name: assumptions}})
    except InvalidRequest as problem:
        return f"{problem}; a symbol is {SYMBOL_KINDS}"
    return None


def _forbidden_symbols(check: _Validator, raw, path: Path) -> None:
    if (not isinstance(raw, list) or len(raw) > MAX_FORBIDDEN_SYMBOLS
            or not all(isinstance(name, str) and NAME_PATTERN.match(name) for name in raw)):
        check.error(path, f"must be a list of at most {MAX_FORBIDDEN_SYMBOLS} symbol names, e.g. [d_model]")


def _derivation_model(check: _Validator, options: dict, path: Path, symbols: dict) -> None:
    """A derivation's random variables, the symbol its sums run to, and its examples."""
    declared = options.get("random_variables", {})
    if not isinstance(declared, dict):
        check.error(path + ("random_variables",),
                    "must map each random variable to its {mean, variance}, e.g. {q: {mean: 0, variance: 1}}")
    else:
        for base, moments in declared.items():
            _random_variable(check, base, moments, path + ("random_variables", base))
    dimension = options.get("dimension")
    if "dimension" in options and (not isinstance(dimension, str) or dimension not in symbols):
        check.error(path + ("dimension",), "must be one of the part's symbols: the number of terms of dot(q, k), "
                    "e.g. d_k")
    examples = options.get("examples", {})
    if (not isinstance(examples, dict) or set(examples) - DERIVATION_EXAMPLE_KINDS
            or not all(map(_is_derivation_list, examples.values()))):
        check.error(path + ("examples",), f"must map right, wrong and hollow to lists of at most {MAX_HINTS} "
                    "derivations, each a text or a list of lines")


def _random_variable(check: _Validator, base, moments, path: Path) -> None:
    if (not isinstance(base, str) or not RANDOM_VARIABLE_NAME.match(base) or not isinstance(moments, dict)
            or set(moments) - RANDOM_VARIABLE_FIELDS):
        check.error(path, "a random variable has a plain name (letters and digits) and {mean, variance}, "
                    "and may have distribution: normal")
        return
    for name in ("mean", "variance"):
        value = moments.get(name, 0)
        low = 0 if name == "variance" else -math.inf
        if not (_is_float_sized(value) and value >= low) and not (isinstance(value, str) and value.strip()):
            check.error(path + (name,), f"must be a number{' >= 0' if low == 0 else ''} or an expression in the "
                        "part's symbols")
    if "distribution" in moments and moments["distribution"] != "normal":
        check.error(path + ("distribution",), "must be normal (leave it out otherwise)")


def _is_derivation_list(value) -> bool:
    def is_derivation(entry) -> bool:
        return isinstance(entry, str) or (isinstance(entry, list) and all(isinstance(line, str) for line in entry))

    return isinstance(value, list) and len(value) <= MAX_HINTS and all(map(is_derivation, value))


def _declared_matrices(check: _Validator, options: dict, path: Path) -> None:
    """A matrix expression's ``matrices`` ({name: [rows, cols]}) and the ``scalars`` its sizes name."""
    scalars = options.get("scalars", {})
    if not isinstance(scalars, dict):
        check.error(path + ("scalars",), "must map names to numbers, e.g. {n: 4, d_k: \"{{d_k}}\"}")
        return
    for name, value in scalars.items():
        if not _is_float_sized(value) and not _is_template(value):
            check.error(path + ("scalars", name), "must be a number or a {{ }} template that fills to one")
    matrices = options.get("matrices")
    if not isinstance(matrices, dict) or not matrices:
        check.error(path + ("matrices",) if "matrices" in options else path,
                    "a matrix_expression part needs options.matrices, each matrix's name with its [rows, cols], "
                    "e.g. {Q: [n, d_k]}")
        return
    sized_scalars = set()  # each scalar that is no size is named once, on its own line
    for name, shape in matrices.items():
        if not isinstance(shape, list) or len(shape) != 2:
            check.error(path + ("matrices", name), "must be [rows, cols]: two sizes, each a whole number or the "
                        "name of a scalar")
            continue
        for axis, size in enumerate(shape):
            if isinstance(size, str) and size in scalars:
                sized_scalars.add(size)
            elif isinstance(size, str):
                check.error(path + ("matrices", name, axis),
                            f"'{size}' is not one of the scalars ({', '.join(map(str, scalars)) or 'none declared'})")
            elif not _is_matrix_size(size):
                check.error(path + ("matrices", name, axis), f"{MATRIX_SIZE}, or the name of a scalar")
    for name in sorted(sized_scalars):
        value = scalars[name]  # a template's value is known on a drawn variant (the variant self-test grades it)
        if _is_float_sized(value) and not _is_matrix_size(value):
            check.error(path + ("scalars", name), f"is the size of a matrix: {MATRIX_SIZE}")


MATRIX_SIZE = f"must be a whole number from 1 to {MAX_EXPRESSION_SIZE}"


def _is_matrix_size(size) -> bool:
    return _is_float_sized(size) and size == int(size) and 1 <= size <= MAX_EXPRESSION_SIZE


def _is_template(value) -> bool:
    return isinstance(value, str) and PLACEHOLDER_PATTERN.fullmatch(value.strip()) is not None


def _has_placeholder(value) -> bool:
    if isinstance(value, str):
        return PLACEHOLDER_PATTERN.search(value) is not None
    if isinstance(value, list):
        return any(map(_has_placeholder, value))
    if isinstance(value, dict):
        return any(map(_has_placeholder, value.values()))
    return False


# Parts whose answer is text the checker reads (with the part's options) when the file is read.
REFERENCE_GRADED_TYPES = ("symbolic", "matrix_expression", "derivation")


def _reference_problem(answer_type: str, answer, options: dict) -> tuple[Path, str] | None:
    """(field of the part, why) the part's checker, with the part's options, does not mark the
    part's own answer right (for a derivation: the derivation from options.start, one rule per
    line, that its self-test builds); None when it does, or when the answer or an option has
    {{ placeholders }}, filled only on a drawn variant (the variant self-test grades those)."""
    if _has_placeholder(answer) or _has_placeholder(options):
        return None
    from grading.core import answers  # late, as the engine's other uses of the checkers

    cannot = "the part cannot be graded as written"
    try:
        right_answer = _shown_derivation(options) if answer_type == "derivation" else _as_text(answer)
    except answers.InvalidRequest as problem:
        return ("options",), f"{cannot}: {problem}"
    except answers.AnswerFormatError as problem:
        return ("options", "start"), f"cannot be read: {problem}"
    except (ArithmeticError, RecursionError, LookupError, TypeError, ValueError) as problem:
        return ("options",), f"{cannot}: the checker failed on it ({type(problem).__name__}: {problem})"
    try:
        grade = answers.check(answer_type, answer, right_answer, options)
    except answers.InvalidRequest as problem:
        return ("answer",), f"{cannot}: {problem}"
    if grade.correct:
        return None
    what = "a derivation from options.start, one rule per line," if answer_type == "derivation" else "this answer"
    return ("answer",), f"graded with the part's options, {what} is not right: {grade.feedback}"


def _shown_derivation(options: dict) -> list[str]:
    from grading.core import derivation

    return derivation.rule_by_rule(derivation.Canonicaliser(options), options["start"])


def _as_text(answer):
    """The answer as a student would type it (a number as its digits)."""
    return repr(answer) if _is_number(answer) else answer


VALUE_FEEDBACK_SHAPE = "must be a list of {value, feedback}: a known wrong value and why it is wrong"
VALUE_FEEDBACK_VALUE = "a value must be a number or a {{ }} template that fills to a number"


def _value_feedback(check: _Validator, raw, path: Path, known: set[str], key: str) -> None:
    """A numeric part's known wrong values (see docs/exercise-format.md): each value a number,
    or text with {{ placeholders }} that fills to one on every variant (checked on drawn
    variants: ``rendering.text_problems``). A value written as an expression without braces
    (``d_k`` for ``{{d_k}}``) would otherwise stay text, and no answer could be compared with it."""
    if not isinstance(raw, list):
        check.error(path, VALUE_FEEDBACK_SHAPE)
        return
    if _too_many(check, raw, path, MAX_HINTS, "known wrong values"):
        return
    for here, entry in _feedback_entries(check, raw, path, known, "value"):
        value = entry["value"]
        if isinstance(value, str) and PLACEHOLDER_PATTERN.search(value):
            check.placeholders(value, here + ("value",), known)
        elif not _is_number(value) and not _reads_as_number(value):
            check.error(here + ("value",), _not_a_value(value, key, known))


def _feedback_entries(check: _Validator, raw: list, path: Path, known: set[str], field: str, *,
                      coded: bool = False):
    """The entries of a known-wrong list (``value_feedback``, ``expression_feedback``) that
    have exactly ``field`` and ``feedback`` (and, when ``coded``, may name their slip with
    ``misconception``), as (path, entry), their feedback text and code checked; an entry of
    another shape is named and skipped."""
    required = {field, "feedback"}
    allowed = (required | {"misconception"}) if coded else required
    shape = f"each known wrong {field} needs exactly '{field}' (the wrong {field}) and 'feedback' (why it is wrong)"
    if coded:
        shape += ", and may name its slip with 'misconception' (a misconception code, e.g. no_scaling)"
    for index, entry in enumerate(raw):
        here = path + (index,)
        if not isinstance(entry, dict) or not required <= set(entry) <= allowed:
            check.error(here, shape)
            continue
        if entry["feedback"] is None:
            check.error(here + ("feedback",), "must be non-empty text")
        else:
            check.text(entry, "feedback", here, known, required=True)
        if "misconception" in entry:
            _misconception_code(check, entry["misconception"], here + ("misconception",))
        yield here, entry


def _misconception_code(check: _Validator, code, path: Path) -> None:
    """A code of the misconception catalogue, as a built-in diagnosis gives (it names the skill
    a matching answer counts against, ``skills.MISCONCEPTION_SKILLS``)."""
    from grading.core.misconceptions import MISCONCEPTIONS  # late, as the engine's other uses of the checkers

    if isinstance(code, str) and code in MISCONCEPTIONS:
        return
    known = f"known: {', '.join(MISCONCEPTIONS)}"
    if not isinstance(code, str):
        check.error(path, f"must be a misconception code; {known}")
        return
    closest = difflib.get_close_matches(code, MISCONCEPTIONS, n=1)
    suggestion = f" (did you mean '{closest[0]}'?)" if closest else ""
    check.error(path, f"unknown misconception '{code}'{suggestion}; {known}")


def _reads_as_number(value) -> bool:
    """Text a student could type for a number (``1/4``, ``2.5e-3``), read by the numeric checker."""
    if not isinstance(value, str):
        return False
    from grading.core.grades import AnswerFormatError  # late, as the engine's other uses of the checkers
    from grading.core.numeric import parse_number

    try:
        parse_number(value)
    except AnswerFormatError:
        return False
    return True


def _not_a_value(value, key: str, known: set[str]) -> str:
    """Why ``value`` is no known wrong value of part ``key``; for an expression written
    without braces, how to write it."""
    suggestion = ""
    if isinstance(value, str) and value.strip():
        try:
            expression = compile_expression(value, known_names=known)
        except ExpressionError:
            pass
        else:
            if expression.names:  # reads a parameter: meant as one of its values (not "0,25")
                suggestion = f"; to use the value of {value.strip()}, write \"{{{{{value.strip()}}}}}\""
    shown = repr(value) if isinstance(value, str) else json.dumps(value)  # true, not True: as in YAML
    return f"part `{key}`: {shown} is not a number: {VALUE_FEEDBACK_VALUE}{suggestion}"


MAX_EXPRESSION_FEEDBACK = 20  # grading.core.symbolic.MAX_EXPRESSION_FEEDBACK
EXPRESSION_FEEDBACK_SHAPE = "must be a list of {expression, feedback}: a known wrong expression and why it is wrong"


def _expression_feedback(check: _Validator, raw, path: Path, known: set[str], *, answer_type, symbols: dict,
                         options: dict, answer) -> None:
    """A symbolic part's known wrong expressions (see docs/exercise-format.md): each read with
    the part's symbols by the reader grading uses for its expected answer, and none the right
    answer (a student who gives it is right, and is never told a slip). An expression with
    {{ placeholders }} is read on drawn variants instead (the variant self-test reads it
    as grading fills it)."""
    if answer_type != "symbolic":
        check.error(path, "only a symbolic part names known wrong expressions; "
                    "a numeric part names known wrong values with value_feedback")
        return
    if not isinstance(raw, list):
        check.error(path, EXPRESSION_FEEDBACK_SHAPE)
        return
    if _too_many(check, raw, path, MAX_EXPRESSION_FEEDBACK, "known wrong expressions"):
        return
    checker_options = {"symbols": symbols, **options}  # as exercises.engine.grading.part_options builds them
    for here, entry in _feedback_entries(check, raw, path, known, "expression", coded=True):
        expression = entry["expression"]
        if isinstance(expression, str) and PLACEHOLDER_PATTERN.search(expression):
            check.placeholders(expression, here + ("expression",), known)
            continue
        problem = _known_expression_problem(expression, checker_options, answer)
        if problem:
            check.error(here + ("expression",), problem)


def _known_expression_problem(expression, options: dict, answer) -> str | None:
    """Why ``expression`` is no known wrong expression of a symbolic part whose checker takes
    ``options`` and whose right answer is ``answer``; None when it is one, or when the part's
    symbols or answer cannot be read (the variant self-test names those)."""
    from grading.core import symbolic  # late, as the engine's other uses of the checkers
    from grading.core.grades import AnswerFormatError, InvalidRequest

    if isinstance(expression, bool) or not isinstance(expression, (str, int, float)):
        shown = json.dumps(expression) if expression is None or isinstance(expression, bool) else repr(expression)
        return f"{shown} is not an expression: write one in the part's symbols, e.g. \"1/sqrt(d_model)\""
    text = expression if isinstance(expression, str) else repr(expression)
    try:
        key = symbolic.symbols_key(options)
    except InvalidRequest:
        return None
    try:
        wrong_expression = symbolic.read_known_wrong_expression(text, options, key)
    except AnswerFormatError as problem:
        return f"cannot be read with the part's symbols: {problem}"
    if isinstance(answer, (int, float)) and not isinstance(answer, bool):
        answer = repr(answer)
    if not isinstance(answer, str) or PLACEHOLDER_PATTERN.search(answer):
        return None  # a right answer that depends on the variant is compared on each drawn variant
    try:
        _, right_expression = symbolic.read_expected(answer, options, key)
    except InvalidRequest:
        return None
    # The equality grading uses to pass an entry over (``symbolic.known_wrong_match``).
    if symbolic.screen_equal(wrong_expression, right_expression):
        return "is equivalent to the right answer"
    return None


def _number(check, data: dict, name: str, path: Path, *, default, minimum, maximum=None, whole=False):
    """A field that is a number from ``minimum`` to ``maximum`` (None: no upper bound); a whole
    number written as a float (``2.0``) is one."""
    value = data.get(name, default)
    if (
        not _is_float_sized(value)  # a 400-digit whole number would overflow float() below
        or value < minimum
        or (maximum is not None and value > maximum)
        or (whole and value != int(value))
    ):
        check.error(path + (name,), _bound_words(minimum, maximum, whole=whole))
        return default
    return value


def _bounded(value, low, high, *, whole: bool) -> bool:
    """``value`` is a number from ``low`` to ``high`` (None: no upper bound); when ``whole``, an
    int, as the checkers read whole-number options (``grading.core.grades.option_int``)."""
    if whole and (isinstance(value, bool) or not isinstance(value, int)):
        return False
    return _is_float_sized(value) and low <= value and (high is None or value <= high)


def _bound_words(low, high, *, whole: bool, unit: str = "") -> str:
    kind = f"a whole number{unit}" if whole else f"a number{unit}"
    return f"must be {kind} from {low:g} to {high:g}" if high is not None else f"must be {kind} >= {low:g}"


def _tolerance(check: _Validator, raw, path: Path) -> dict | None:
    # Without a declared tolerance the checker accepts anything that rounds correctly
    # at ``decimals`` (half a unit in the last place); the rounding gate keeps every
    # reference value clear of the half-unit boundary so that rule is never ambiguous.
    if raw is None:
        return None
    if not isinstance(raw, dict) or not raw or set(raw) - {"abs", "rel"}:
        check.error(path, "must be a mapping with 'abs' and/or 'rel'")
        return None
    tolerance = {}
    for name, option, high in (("abs", "atol", None), ("rel", "rtol", check.limit(MAX_RELATIVE_TOLERANCE))):
        value = raw.get(name, 0.0)
        if not _bounded(value, 0, high, whole=False):
            check.error(path + (name,), _bound_words(0, high, whole=False))
            continue
        tolerance[option] = float(value)
    return tolerance


def _choices(check: _Validator, raw, path: Path, known: set[str]):
    if not isinstance(raw, list) or len(raw) < 2:
        check.error(path, "a choice part needs a list of at least two choices")
        return (), ()
    if _too_many(check, raw, path, MAX_CHOICES, "choices"):
        return (), ()
    choices, keys = [], []
    for index, choice in enumerate(raw):
        here = path + (index,)
        if not isinstance(choice, dict) or not {"key", "text"} <= set(choice) or set(choice) - {"key", "text", "feedback"}:
            check.error(here, "each choice needs 'key' and 'text', and may have 'feedback' (why it is wrong)")
            continue
        if not isinstance(choice["key"], str) or not choice["key"]:
            check.error(here + ("key",), "must be a short text key")
            continue
        if choice["key"] in keys:
            check.error(here + ("key",), f"duplicate choice key '{choice['key']}'")
        check.text(choice, "text", here, known, required=True)
        entry = {"key": choice["key"], "text": choice["text"]}
        if "feedback" in choice:
            check.text(choice, "feedback", here, known, required=True)
            entry["feedback"] = choice["feedback"]
        choices.append(entry)
        keys.append(choice["key"])
    return tuple(choices), tuple(keys)


def _choice_answer(check: _Validator, data: dict, path: Path, keys: tuple[str, ...], known: set[str]):
    if ("answer" in data) == ("answer_index" in data):
        check.error(path, "a choice part needs exactly one of 'answer' (choice key or keys) or 'answer_index' (expression)")
        return None, None
    if "answer_index" in data:
        return None, check.expression(data["answer_index"], path + ("answer_index",), known)
    answer = data["answer"]
    chosen = answer if isinstance(answer, list) else [answer]
    for key in chosen:
        if key not in keys:
            check.error(path + ("answer",), f"'{_shown_number(key)}' is not one of the choice keys {', '.join(keys)}")
    options = data.get("options") if isinstance(data.get("options"), dict) else {}
    if not chosen:
        check.error(path + ("answer",), "must be a choice key or a non-empty list of keys")
    elif len(chosen) > 1 and options.get("multiple") is not True:
        check.error(path + ("answer",), "several right keys need options.multiple: true")
    return answer, None


def _hints(check: _Validator, raw, path: Path, known: set[str]) -> tuple[Hint, ...]:
    if not isinstance(raw, list):
        check.error(path, "must be a list of {after, text}")
        return ()
    if _too_many(check, raw, path, MAX_HINTS, "hints"):
        return ()
    hints = []
    for index, hint in enumerate(raw):
        here = path + (index,)
        if not isinstance(hint, dict) or set(hint) != {"after", "text"}:
            check.error(here, "each hint needs exactly 'after' (tries) and 'text'")
            continue
        after = hint["after"]
        if not _bounded(after, 0, check.limit(MAX_HINT_TRIES), whole=True):
            check.error(here + ("after",), _bound_words(0, check.limit(MAX_HINT_TRIES), whole=True, unit=" of tries"))
            continue
        hints.append(Hint(after, check.text(hint, "text", here, known, required=True)))
    return tuple(hints)


def _diagnose(check: _Validator, raw, path: Path, known: set[str]) -> dict:
    if raw is None:
        return {}
    required = {"kind", "Q", "K", "V", "query_index", "quantity"}
    optional = {"mask"}
    if not isinstance(raw, dict) or not required <= set(raw) <= required | optional:
        check.error(path, f"must have exactly the fields {', '.join(sorted(required))} (and optionally mask)")
        return {}
    if raw["kind"] != "attention":
        check.error(path + ("kind",), "only 'attention' diagnosis is supported")
    if raw["quantity"] not in DIAGNOSE_QUANTITIES:
        check.error(path + ("quantity",), f"must be one of {', '.join(DIAGNOSE_QUANTITIES)}")
    compiled = {"kind": raw["kind"], "quantity": raw["quantity"]}
    if "mask" in raw:
        if raw["mask"] not in DIAGNOSE_MASKS:
            check.error(path + ("mask",), f"must be one of {', '.join(DIAGNOSE_MASKS)} (leave it out for no mask)")
        compiled["mask"] = raw["mask"]
    for name in ("Q", "K", "V", "query_index"):
        compiled[name] = check.expression(raw[name], path + (name,), known)
    return compiled


def _gates(check: _Validator, raw, known: set[str]):
    path: Path = ("gates",)
    allowed = {"rounding_margin": False, "max_attempts": False, "checks": False}
    if not check.fields(raw, path, allowed, "gates"):
        return [], DEFAULT_ROUNDING_MARGIN, DEFAULT_MAX_ATTEMPTS
    margin = _number(check, raw, "rounding_margin", path, default=DEFAULT_ROUNDING_MARGIN, minimum=0)
    if margin >= 0.5:
        check.error(path + ("rounding_margin",), "must be below 0.5 (it is a fraction of one last-digit unit)")
    attempts = int(_number(check, raw, "max_attempts", path, default=DEFAULT_MAX_ATTEMPTS, minimum=1, whole=True))
    if attempts > MAX_GATE_ATTEMPTS:
        check.error(
            path + ("max_attempts",),
            f"at most {MAX_GATE_ATTEMPTS} redraws are allowed, got {attempts}; if the gates "
            "reject that many draws, loosen them or change the generators",
        )
        attempts = DEFAULT_MAX_ATTEMPTS
    gates = []
    checks = raw.get("checks", [])
    if not isinstance(checks, list):
        check.error(path + ("checks",), "must be a list of gate checks")
        checks = []
    if _too_many(check, checks, path + ("checks",), MAX_GATES, "gate checks"):
        checks = []
    for index, gate in enumerate(checks):
        compiled = _gate(check, gate, path + ("checks", index), known)
        if compiled is not None:
            gates.append(compiled)
    return gates, float(margin), attempts


def _gate(check: _Validator, raw, path: Path, known: set[str]) -> Gate | None:
    if not isinstance(raw, dict) or raw.get("kind") not in GATE_KINDS:
        check.error(path + ("kind",), f"must be one of {', '.join(GATE_KINDS)}")
        return None
    kind = raw["kind"]
    allowed = {"kind", "expr", "reason", "limit"}
    for name in raw:
        if name not in allowed:
            check.error(path + (name,), f"unknown field '{name}'; known: {', '.join(sorted(allowed))}")
    if "expr" not in raw:
        check.error(path, "missing required field 'expr'")
        return None
    if kind == "require" and not isinstance(raw.get("reason"), str):
        check.error(path, "a 'require' gate needs a 'reason' saying what it rules out")
        return None
    expression = check.expression(raw["expr"], path + ("expr",), known)
    limit = raw.get("limit", DEFAULT_MAX_WEIGHT if kind == "max_weight" else None)
    if kind == "entry_range":
        if isinstance(limit, list) and any(isinstance(v, float) and not math.isfinite(v) for v in limit):
            return None  # reported as unstorable, with the entry's own path
        if not (isinstance(limit, list) and len(limit) == 2 and all(map(_is_float_sized, limit))
                and limit[0] <= limit[1]):
            check.error(path + ("limit",), "an entry_range gate needs limit: [low, high], low not above high")
            return None
    elif limit is not None and not _is_float_sized(limit):
        check.error(path + ("limit",), "must be a number")
        return None
    if expression is None:
        return None
    return Gate(kind=kind, expression=expression, limit=limit, reason=raw.get("reason") or kind, index=path[2])


def _variants(check: _Validator, raw, known: set[str]) -> dict:
    path: Path = ("variants",)
    if not isinstance(raw, dict):
        check.error(path, "must be a mapping of variant name to fixed parameter values")
        return {}
    if _too_many(check, raw, path, MAX_NAMED_VARIANTS, "named variants"):
        return {}
    variants = {}
    for name, values in raw.items():
        here = path + (name,)
        if not NAME_PATTERN.match(name) or not isinstance(values, dict):
            check.error(here, "a named variant maps parameter names to fixed values")
            continue
        for parameter, value in values.items():
            if parameter not in known:
                check.error(here + (parameter,), f"unknown parameter '{parameter}'")
            elif not _is_numeric_literal(value):
                check.error(here + (parameter,), "must be a number or a (nested) list of numbers")
        variants[name] = dict(values)
    return variants


def _figures(check: _Validator, raw, known: set[str]) -> list[Figure]:
    path: Path = ("figures",)
    if not isinstance(raw, list):
        check.error(path, "must be a list of figures, e.g. - heatmap: W")
        return []
    if _too_many(check, raw, path, MAX_FIGURES, "figures"):
        return []
    figures = []
    for index, definition in enumerate(raw):
        figure = _figure(check, definition, path + (index,), known)
        if figure is not None:
            figures.append(figure)
    return figures


def _figure(check: _Validator, data, path: Path, known: set[str]) -> Figure | None:
    """What can be known before drawing; that the matrix is one a heatmap can show is
    checked on every draw (``exercises.engine.figures``)."""
    before = len(check.issues)
    if not check.fields(data, path, FIGURE_FIELDS, "a figure"):
        return None
    expression = check.expression(data["heatmap"], path + ("heatmap",), known) if "heatmap" in data else None
    title = _figure_text(check, data, "title", path, MAX_FIGURE_TITLE_LENGTH)
    row_label = _figure_text(check, data, "row_label", path, MAX_FIGURE_LABEL_LENGTH)
    col_label = _figure_text(check, data, "col_label", path, MAX_FIGURE_LABEL_LENGTH)
    decimals = data.get("decimals", DEFAULT_FIGURE_DECIMALS)
    if isinstance(decimals, bool) or not isinstance(decimals, int) or not 0 <= decimals <= MAX_FIGURE_DECIMALS:
        check.error(path + ("decimals",), f"must be a whole number from 0 to {MAX_FIGURE_DECIMALS}")
    low, high = _figure_range(check, data.get("range"), path + ("range",))
    if len(check.issues) > before or expression is None:
        return None
    return Figure(
        expression=expression, title=title, decimals=decimals, row_label=row_label, col_label=col_label,
        low=low, high=high, index=path[1],
    )


def _figure_text(check: _Validator, data: dict, name: str, path: Path, limit: int) -> str:
    """A title or label: one line of plain text (escaped on the page, never Markdown)."""
    if name not in data:
        return ""
    value = data[name]
    here = path + (name,)
    if not isinstance(value, str) or not value.strip():
        check.error(here, "must be non-empty text")
        return ""
    value = value.strip()
    if "\n" in value:
        check.error(here, "must be one line of text")
    elif PLACEHOLDER_PATTERN.search(value):
        check.error(here, "is shown as written: {{ placeholders }} are not filled in here")
    elif check.source and len(value) > limit:
        check.error(here, f"must be at most {limit} characters long, got {len(value)}")
    return value


def _figure_range(check: _Validator, raw, path: Path) -> tuple[float, float]:
    if raw is None:
        return DEFAULT_FIGURE_RANGE
    if isinstance(raw, list) and any(isinstance(value, float) and not math.isfinite(value) for value in raw):
        return DEFAULT_FIGURE_RANGE  # reported as unstorable, with the entry's own path
    if not isinstance(raw, list) or len(raw) != 2 or not all(map(_is_float_sized, raw)) or not raw[0] < raw[1]:
        check.error(path, "must be [low, high]: two numbers, low below high (the lightest and the darkest colour)")
        return DEFAULT_FIGURE_RANGE
    return float(raw[0]), float(raw[1])


def _is_float_sized(value) -> bool:
    """A finite number that converts to a float (a 400-digit whole number does not)."""
    if not _is_number(value):
        return False
    try:
        return math.isfinite(float(value))
    except OverflowError:
        return False
