"""The exercise engine: exercise specs, variants, reference answers, prompts, grading.

Pure Python (NumPy, PyYAML, grading.core); no Django import, so it runs the same in a
web process, a Celery worker, a sandbox or a command-line validator.
"""

from .errors import (
    CountedDrawProblem,
    DrawFailed,
    DrawProblem,
    ExpressionError,
    SpecError,
    SpecIssue,
    VariantError,
    count_draw_problems,
)
from .expressions import MAX_DRAW_WORK, compile_expression, evaluate, work_budget
from .figures import figure_problems, render_figures
from .grading import grade_part, part_options
from .reference import reference_answers
from .rendering import (
    part_points,
    points_text,
    render_hints,
    render_part_prompt,
    render_prompt,
    render_prompt_sections,
    render_solution,
)
from .spec import ANSWER_TYPES, ExerciseSpec, load_spec, spec_from_json, spec_to_json, with_source_lines
from .variants import DrawCheck, VariantDraw, check_draws, draw_variant, pool_pick, practice_seed, shuffled_slots, variant_seed

__all__ = [
    "ANSWER_TYPES",
    "MAX_DRAW_WORK",
    "CountedDrawProblem",
    "DrawCheck",
    "DrawFailed",
    "DrawProblem",
    "ExerciseSpec",
    "ExpressionError",
    "SpecError",
    "SpecIssue",
    "VariantDraw",
    "VariantError",
    "check_draws",
    "compile_expression",
    "count_draw_problems",
    "draw_variant",
    "evaluate",
    "figure_problems",
    "grade_part",
    "load_spec",
    "part_options",
    "part_points",
    "points_text",
    "pool_pick",
    "practice_seed",
    "reference_answers",
    "render_figures",
    "render_hints",
    "render_part_prompt",
    "render_prompt",
    "render_prompt_sections",
    "render_solution",
    "shuffled_slots",
    "spec_from_json",
    "spec_to_json",
    "variant_seed",
    "with_source_lines",
    "work_budget",
]
