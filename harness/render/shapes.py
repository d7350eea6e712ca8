"""The cost study's request shapes as tables and plots name them."""

from __future__ import annotations

from harness.models.pricing import bare

SHAPE_TITLES = {"cache-on": "same model, cache on", "cache-off": "same model, cache off",
                "tools-dropped": "same model, tools dropped (prefix broken)",
                "fresh": "fresh prompt (prefix broken)",
                "openai-compact": "provider compaction (/responses/compact)",
                "anthropic-compact": "provider compaction (explicit compaction request)"}


def shape_title(shape: str) -> str:
    return "cheaper model (no shared cache)" if shape.startswith("alt:") else SHAPE_TITLES.get(shape, shape)


def shape_label(shape: str) -> str:
    """The title for a plot's row, its parenthesis on a second line; a cheaper model is named."""
    if shape.startswith("alt:"):
        return f"cheaper model\n({bare(shape[4:])})"
    return shape_title(shape).replace(" (", "\n(")
