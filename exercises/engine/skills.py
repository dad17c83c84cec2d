"""The skills an exercise part can exercise: one vocabulary, and the skill each known
misconception reveals.

Skill slugs are what parts declare (``skills: [scaling, softmax]``), what mastery is
tracked per, and what the student's skill map and the instructor's grid show. They are
defined here once so an exercise, the misconception catalogue and the mastery model
cannot drift apart. Pure Python: no Django.
"""

from __future__ import annotations

from dataclasses import dataclass

from grading.core.misconceptions import MISCONCEPTIONS


@dataclass(frozen=True)
class Skill:
    slug: str
    label: str  # as shown to students: "variance derivation"
    description: str


_SKILLS = (
    Skill("dot-product-scores", "dot-product scores", "Scores as query–key dot products, Q Kᵀ, one row per query."),
    Skill("scaling", "scaling by √d_k", "Dividing the scores by √d_k before the softmax, and why."),
    Skill("softmax", "softmax", "Softmax over each query's row: weights that are positive and sum to 1."),
    Skill("softmax-saturation", "softmax saturation", "How large scores saturate the softmax and shrink its gradient."),
    Skill("weighted-values", "weighting the values", "The output as the attention weights times V."),
    Skill("variance-derivation", "variance derivation", "Why a dot product of d_k terms has variance d_k σ_q² σ_k²."),
    Skill("projections", "Q, K, V projections", "Queries, keys and values as learned projections of one input."),
    Skill("matrix-shapes", "matrix shapes", "The shape of every matrix in one head, and the order of the factors."),
    Skill("multi-head-shapes", "multi-head shapes", "Splitting d_model into h heads of width d_k = d_model / h."),
)

SKILLS: dict[str, Skill] = {skill.slug: skill for skill in _SKILLS}
SKILL_SLUGS: tuple[str, ...] = tuple(SKILLS)

# The skill a diagnosed mistake shows to be missing. Every misconception code of
# grading.core.misconceptions has exactly one entry (a test keeps it so).
MISCONCEPTION_SKILLS: dict[str, str] = {
    "no_scaling": "scaling",
    "divided_by_d_k": "scaling",
    "raw_weights_used": "scaling",
    "scale_after_softmax": "scaling",
    "softmax_wrong_axis": "softmax",
    "k_not_transposed": "dot-product-scores",
    "keys_queries_swapped": "dot-product-scores",
    "d_model_scale": "multi-head-shapes",
    "values_on_left": "weighted-values",
    "weights_transposed": "weighted-values",
    "transposed_result": "matrix-shapes",
    "matrix_transposed": "matrix-shapes",
    "dimension_as_number": "matrix-shapes",
    "forgot_sigma": "variance-derivation",
    "forgot_squares": "variance-derivation",
    "sigmas_added": "variance-derivation",
    "projections_swapped": "projections",
    "product_of_variances": "variance-derivation",
    "sum_of_variances": "variance-derivation",
    "count_squared": "variance-derivation",
    "square_of_mean": "variance-derivation",
    "dropped_mean_square": "variance-derivation",
    # A causal mask decides which scores take part in each row's softmax.
    "no_mask": "softmax",
    "mask_transposed": "softmax",
    "mask_hides_self": "softmax",
    "mask_one_extra": "softmax",
    "masked_scores_zeroed": "softmax",
    "mask_after_softmax": "softmax",
}


def unknown_skills(skills) -> list[str]:
    """The entries of ``skills`` that are not known skill slugs, in order."""
    return [skill for skill in skills if skill not in SKILLS]


def skill_for_misconception(code: str | None) -> str | None:
    """The skill a misconception code reveals; None for no code or an unknown one."""
    return MISCONCEPTION_SKILLS.get(code or "")


def skill_label(slug: str) -> str:
    skill = SKILLS.get(slug)
    return skill.label if skill else slug


def part_skills(data: dict, part_key: str) -> tuple[str, ...]:
    """The skills of one part, read from a spec's stored (already validated) JSON: the
    part's own ``skills``, else the exercise's default ``skills``; () when neither is set
    or the part does not exist. Cheap: it does not re-validate the spec."""
    if not isinstance(data, dict):
        return ()
    for part in data.get("parts") or ():
        if isinstance(part, dict) and part.get("key") == part_key:
            declared = part.get("skills", data.get("skills", ()))
            return tuple(skill for skill in declared or () if skill in SKILLS)
    return ()


def misconceptions_without_skill() -> list[str]:
    """Codes of the misconception catalogue that have no skill here (a test keeps it empty)."""
    return sorted(set(MISCONCEPTIONS) - set(MISCONCEPTION_SKILLS))
