"""The weight-to-colour ramp, its shipped stylesheet, and the heatmap include."""

import math
from pathlib import Path

from django.conf import settings

from explorations.heatmap import (
    DARK_TEXT,
    HEAT_LEVELS,
    LIGHT_TEXT,
    contrast_ratio,
    heat_level,
    heat_stylesheet,
    level_colour,
    text_colour_on,
    weight_colour,
)

STYLESHEET = Path(settings.BASE_DIR) / "static" / "attnquiz" / "css" / "heatmap.css"


def test_heat_level_rounds_to_twentieths_and_clamps():
    assert [heat_level(w) for w in (0.0, 0.024, 0.026, 0.5, 0.5344, 1.0)] == [0, 0, 1, 10, 11, 20]
    assert heat_level(-0.3) == 0
    assert heat_level(1.7) == 20
    assert heat_level(math.nan) == 0


def test_colour_ramp_runs_from_near_white_to_dark_blue():
    assert level_colour(0) == "#f7fbff"
    assert level_colour(10) == "#8096b5"
    assert level_colour(HEAT_LEVELS) == "#08306b"
    assert weight_colour(0.3875) == level_colour(8)


def test_text_on_every_step_meets_wcag_aa_contrast():
    ratios = [contrast_ratio(level_colour(level), text_colour_on(level_colour(level)))
              for level in range(HEAT_LEVELS + 1)]
    assert min(ratios) >= 4.5
    assert text_colour_on(level_colour(0)) == DARK_TEXT
    assert text_colour_on(level_colour(HEAT_LEVELS)) == LIGHT_TEXT


def test_shipped_stylesheet_is_the_generated_one():
    assert STYLESHEET.read_text() == heat_stylesheet()
