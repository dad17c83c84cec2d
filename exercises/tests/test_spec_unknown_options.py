"""A part's checker options are only the names its checker reads: any other (a misspelt
``sigfig``, a field written under ``options``, another type's option) is refused when the file
is read, naming the option, the part, its line, the options the part takes and the nearest
of them. Every option a checker reads still loads, and a version stored before the check
still opens and grades."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.urls import reverse

from exercises.engine import SpecError, draw_variant, grade_part, load_spec, spec_from_json, spec_to_json
from exercises.engine.spec import ANSWER_TYPES, CHECKER_OPTIONS, OPTIONS_FROM_FIELDS

from .test_spec_hostile_options import CHOICE, DERIVATION, FREE_TEXT, MATRIX, MATRIX_EXPRESSION, NUMERIC, SYMBOLIC

CORE = Path(__file__).resolve().parents[2] / "grading" / "core"
EMPTY = "    options: {}"
DERIVATION_START = '      start: "Var(dot(q, k))"'
NUMERIC_TAKES = "a numeric part's checker reads the options decimals, sigfigs, atol, rtol, value_feedback"
MATRIX_TAKES = "a matrix part's checker reads the options decimals, sigfigs, atol, rtol, partial_credit, shape"
SYMBOLIC_TAKES = ("a symbolic part's checker reads the options symbols, allow_any_symbols, forbid_symbols, "
                  "require_simplified, product_of_powers, form_credit, time_limit, expression_feedback")
DERIVATION_TAKES = ("a derivation part's checker reads the options start, symbols, random_variables, dimension, "
                    "min_steps, max_rules_per_step, big_step_credit, partial_credit, time_limit, examples")
CHOICE_TAKES = "a choice part's checker reads the options multiple, partial_credit"
FREE_TEXT_TAKES = "a free_text part's checker reads the options max_chars"


def with_options(base: str, options: str) -> str:
    """``base`` with its part's one-line ``options`` replaced (a derivation's options extended)."""
    if base is DERIVATION:
        return base.replace(DERIVATION_START, f"{DERIVATION_START}\n      {options}")
    text, replaced = re.subn(r"^    options: .*$", f"    options: {options}", base, flags=re.M)
    assert replaced == 1
    return text


def issues(source: str) -> list[str]:
    with pytest.raises(SpecError) as caught:
        load_spec(source)
    return [str(issue) for issue in caught.value.errors]


# --------------------------------------------------------------------------- what loads

# (base, option as written): one for every name in CHECKER_OPTIONS, with a value its checker grades with.
READ_OPTIONS = [
    (NUMERIC, "{decimals: 3}"),
    (NUMERIC, "{sigfigs: 3}"),
    (NUMERIC, "{atol: 0.01}"),
    (NUMERIC, "{rtol: 0.01}"),
    (NUMERIC, "{value_feedback: [{value: 99, feedback: far off.}]}"),
    (MATRIX, "{decimals: 3}"),
    (MATRIX, "{sigfigs: 3}"),
    (MATRIX, "{atol: 0.01}"),
    (MATRIX, "{rtol: 0.01}"),
    (MATRIX, "{partial_credit: true}"),
    (MATRIX, "{shape: false}"),
    (SYMBOLIC, "{symbols: {d_k: positive, sigma: positive}}"),
    (SYMBOLIC, "{allow_any_symbols: true}"),
    (SYMBOLIC, "{forbid_symbols: [d_model]}"),
    (SYMBOLIC, "{require_simplified: true}"),
    (SYMBOLIC, "{product_of_powers: true}"),
    (SYMBOLIC, "{form_credit: 0.25}"),
    (SYMBOLIC, "{time_limit: 1.5}"),
    (SYMBOLIC, '{expression_feedback: [{expression: "d_k * sigma", feedback: the root is missing.}]}'),
    (MATRIX_EXPRESSION, "{matrices: {Q: [n, d_k], K: [n, d_k], V: [n, d_v]}, scalars: {n: 4, d_k: 3, d_v: 2}}"),
    (DERIVATION, "symbols: {d_k: positive}"),
    (DERIVATION, "dimension: d_k"),
    (DERIVATION, "min_steps: 2"),
    (DERIVATION, "max_rules_per_step: 2"),
    (DERIVATION, "big_step_credit: 0.25"),
    (DERIVATION, "partial_credit: true"),
    (DERIVATION, "time_limit: 1.5"),
    (DERIVATION, "examples: {right: []}"),
    (CHOICE, "{multiple: false}"),
    (CHOICE, "{partial_credit: true}"),
    (FREE_TEXT, "{max_chars: 500}"),
]


@pytest.mark.parametrize(("base", "options"), READ_OPTIONS, ids=[options[:40] for _, options in READ_OPTIONS])
def test_every_option_a_checker_reads_loads(base, options):
    spec = load_spec(with_options(base, options))
    written = re.match(r"\{?(\w+):", options).group(1)
    assert written in spec.parts[0].options


def test_the_table_names_every_option_of_every_part_type():
    written = {(load_spec(base).parts[0].type, re.match(r"\{?(\w+):", options).group(1))
               for base, options in READ_OPTIONS}
    written |= {("matrix_expression", "scalars"), ("derivation", "random_variables"), ("derivation", "start")}
    assert set(CHECKER_OPTIONS) == set(ANSWER_TYPES)
    assert written == {(kind, name) for kind, names in CHECKER_OPTIONS.items() for name in names}


# How a checker module reads an option: options.get("x"), options["x"], "x" in options,
# option_float(options, "x", ...) / option_int(options, "x", ...).
OPTION_READS = re.compile(
    r'options\.get\("(\w+)"|options\["(\w+)"\]|"(\w+)" in options|option_(?:float|int)\(options, "(\w+)"'
)
# The modules whose reads of the options a part's grade goes through, beside grading.core.<type>.
ALSO_READ_BY = {"numeric": ("misconceptions",), "matrix": ("misconceptions",)}


@pytest.mark.parametrize("answer_type", ANSWER_TYPES)
def test_no_option_a_checker_module_reads_is_refused(answer_type):
    read = set()
    for module in (answer_type, *ALSO_READ_BY.get(answer_type, ())):
        for match in OPTION_READS.finditer((CORE / f"{module}.py").read_text()):
            read.add(next(group for group in match.groups() if group))
    assert read, answer_type
    assert read - set(CHECKER_OPTIONS[answer_type]) - set(OPTIONS_FROM_FIELDS) == set()


# --------------------------------------------------------------------------- what is refused

# (base, options as written, every issue exactly)
UNREAD = [
    (NUMERIC, "{sigfig: 3}",
     f"line 18: parts[0].options.sigfig: part `p`: unknown option 'sigfig' (did you mean 'sigfigs'?); {NUMERIC_TAKES}"),
    (NUMERIC, "{tolerence: 0.01}",
     "line 18: parts[0].options.tolerence: part `p`: unknown option 'tolerence' (did you mean the part's field "
     f"'tolerance'? it is written beside options, not under it); {NUMERIC_TAKES}"),
    (NUMERIC, "{tolerance: {abs: 0.01}}",
     "line 18: parts[0].options.tolerance: part `p`: 'tolerance' is a field of the part, not an option: write it "
     f"beside options, not under it; {NUMERIC_TAKES}"),
    (NUMERIC, "{hint: divide.}",
     "line 18: parts[0].options.hint: part `p`: unknown option 'hint' (did you mean the part's field 'hints'? it is "
     f"written beside options, not under it); {NUMERIC_TAKES}"),
    (NUMERIC, "{abs: 0.01}", f"line 18: parts[0].options.abs: part `p`: unknown option 'abs'; {NUMERIC_TAKES}"),
    (NUMERIC, "{partial_credit: true}",
     "line 18: parts[0].options.partial_credit: part `p`: option 'partial_credit' is read only by matrix, derivation "
     f"and choice parts; {NUMERIC_TAKES}"),
    # only the option's name is told: its value (out of any bound) is not checked as well
    (NUMERIC, "{time_limit: 99}",
     "line 18: parts[0].options.time_limit: part `p`: option 'time_limit' is read only by symbolic and derivation "
     f"parts; {NUMERIC_TAKES}"),
    (MATRIX, "{value_feedback: [{value: 1, feedback: x}]}",
     f"line 19: parts[0].options.value_feedback: part `w`: option 'value_feedback' is read only by numeric parts; "
     f"{MATRIX_TAKES}"),
    (MATRIX, "{partial: true}",
     f"line 19: parts[0].options.partial: part `w`: unknown option 'partial' (did you mean 'partial_credit'?); "
     f"{MATRIX_TAKES}"),
    (SYMBOLIC, "{forbid_symbol: [d_model]}",
     "line 11: parts[0].options.forbid_symbol: part `s`: unknown option 'forbid_symbol' (did you mean "
     f"'forbid_symbols'?); {SYMBOLIC_TAKES}"),
    (SYMBOLIC, "{decimals: 2}",
     f"line 11: parts[0].options.decimals: part `s`: option 'decimals' is read only by numeric and matrix parts; "
     f"{SYMBOLIC_TAKES}"),
    (SYMBOLIC, "{simplified: true}",
     "line 11: parts[0].options.simplified: part `s`: unknown option 'simplified' (did you mean "
     f"'require_simplified'?); {SYMBOLIC_TAKES}"),
    (DERIVATION, "min_step: 2",
     f"line 14: parts[0].options.min_step: part `v`: unknown option 'min_step' (did you mean 'min_steps'?); "
     f"{DERIVATION_TAKES}"),
    (DERIVATION, "rtol: 0.01",
     f"line 14: parts[0].options.rtol: part `v`: option 'rtol' is read only by numeric and matrix parts; "
     f"{DERIVATION_TAKES}"),
    (CHOICE, "{multi: true}",
     f"line 13: parts[0].options.multi: part `c`: unknown option 'multi' (did you mean 'multiple'?); {CHOICE_TAKES}"),
    (FREE_TEXT, "{max_char: 100}",
     "line 10: parts[0].options.max_char: part `t`: unknown option 'max_char' (did you mean 'max_chars'?); "
     f"{FREE_TEXT_TAKES}"),
    (FREE_TEXT, "{1: 2}", f"line 10: parts[0].options.1: part `t`: unknown option '1'; {FREE_TEXT_TAKES}"),
    # the options built from the part's own fields keep their own message
    (CHOICE, "{choices: [A, B]}", "line 13: parts[0].options.choices: is not an option: write the part's `choices` "
                                  "field instead"),
]


@pytest.mark.parametrize(("base", "options", "issue"), UNREAD, ids=[options[:40] for _, options, _ in UNREAD])
def test_an_option_the_checker_does_not_read_is_refused_with_its_line(base, options, issue):
    assert issues(with_options(base, options)) == [issue]


def test_a_misspelt_matrix_expression_option_is_named_with_the_sizes_it_leaves_undeclared():
    text = MATRIX_EXPRESSION.replace("scalars:", "scalar:")
    assert issues(text) == [
        *(f"line 10: parts[0].options.matrices.{name}[{axis}]: '{size}' is not one of the scalars (none declared)"
          for name, sizes in (("K", ("n", "d_k")), ("Q", ("n", "d_k")), ("V", ("n", "d_v")))
          for axis, size in enumerate(sizes)),
        "line 10: parts[0].options.scalar: part `e`: unknown option 'scalar' (did you mean 'scalars'?); "
        "a matrix_expression part's checker reads the options matrices, scalars",
    ]


def test_every_unread_option_of_every_part_is_reported_in_one_pass():
    choice_part = ("  - key: q\n    type: choice\n    answer: A\n    choices: [{key: A, text: a}, {key: B, text: b}]\n"
                   "    options: {multi: true}\n    solution: A.\n")
    text = NUMERIC.replace(EMPTY, "    options:\n      sigfig: 3\n      decimals: 2\n      rtoll: 0.1").replace(
        "gates:\n", choice_part + "gates:\n")
    assert issues(text) == [
        f"line 19: parts[0].options.sigfig: part `p`: unknown option 'sigfig' (did you mean 'sigfigs'?); "
        f"{NUMERIC_TAKES}",
        f"line 21: parts[0].options.rtoll: part `p`: unknown option 'rtoll' (did you mean 'rtol'?); {NUMERIC_TAKES}",
        f"line 27: parts[1].options.multi: part `q`: unknown option 'multi' (did you mean 'multiple'?); {CHOICE_TAKES}",
    ]


def test_every_bank_part_names_only_options_its_checker_reads():
    bank = Path(__file__).resolve().parents[1] / "bank"
    for path in sorted(bank.glob("*.yaml")):
        for part in load_spec(path.read_text()).parts:
            assert set(part.options) <= set(CHECKER_OPTIONS[part.type]), (path.name, part.key)


# --------------------------------------------------------------------------- stored versions


def test_a_stored_version_with_an_unread_option_still_opens_and_grades():
    data = spec_to_json(load_spec(NUMERIC))
    data["parts"][0]["options"] = {"sigfig": 3, "tolerence": 0.5}
    spec = spec_from_json(data)
    assert spec.part("p").options == {"sigfig": 3, "tolerence": 0.5}
    params = draw_variant(spec, 0).params
    right = grade_part(spec, params, "p", f"{params['a'] / 3:.4f}")
    wrong = grade_part(spec, params, "p", f"{params['a'] / 3 + 0.5:.4f}")
    assert (right.correct, wrong.correct) == (True, False)  # the unread names change nothing
    assert issues(with_options(NUMERIC, "{sigfig: 3}")) == [
        "line 18: parts[0].options.sigfig: part `p`: unknown option 'sigfig' (did you mean 'sigfigs'?); "
        f"{NUMERIC_TAKES}"
    ]


# --------------------------------------------------------------------------- the editor


@pytest.fixture
def instructor(client, db):
    from authoring.tests.factories import PASSWORD, people_create

    people_create()
    assert client.login(username="ines", password=PASSWORD)
    return client


def test_the_editors_check_names_the_option_and_its_line(instructor):
    response = instructor.post(reverse("authoring:check", args=["attn"]),
                               {"source": with_options(NUMERIC, "{sigfig: 3}"), "seed": "0"})
    html = response.content.decode()
    assert response.status_code == 200
    assert "The file is valid" not in html
    assert ('<li data-line="18">line 18: parts[0].options.sigfig: part `p`: unknown option &#x27;sigfig&#x27; '
            "(did you mean &#x27;sigfigs&#x27;?); a numeric part&#x27;s checker reads the options decimals, sigfigs, "
            "atol, rtol, value_feedback</li>") in html


def test_saving_a_file_with_an_unread_option_is_refused_and_stores_nothing(instructor):
    from exercises.models import Exercise

    response = instructor.post(reverse("authoring:new", args=["attn"]),
                               {"source": with_options(NUMERIC, "{sigfig: 3}")})
    assert response.status_code == 422
    assert "parts[0].options.sigfig" in response.content.decode()
    assert not Exercise.objects.filter(slug="hostile").exists()
