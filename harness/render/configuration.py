"""A run's configuration in one line, the same in the terminal, report.md, report.html and gate: what compacted,
with which models, and the summary instruction by name when it is not the shipped one (runs that differ only
in their instruction must be told apart)."""

from __future__ import annotations

from typing import Any, Callable


def configuration_line(config: dict[str, Any], code: Callable[[str], str] = str) -> str:
    """`policy default, model builtin, summarizer builtin, answerer builtin, cache on, instruction terse`;
    `code` marks each name (backticks in Markdown)."""
    line = (f"policy {code(config['policy'])}, model {code(config['model'])}, summarizer "
            f"{code(config['summarizer_spec'])}, answerer {code(config['answerer'])}, "
            f"cache {'on' if config['cache'] else 'off'}")
    return line + (f", {instruction_phrase(config, code)}" if config.get("instruction_sha256") else "")


def instruction_phrase(config: dict[str, Any], code: Callable[[str], str] = str) -> str:
    """`instruction terse (its text: instruction.md in the run folder)`, for a run given its own instruction."""
    name = config.get("instruction_name") or config.get("instruction_file") or config["instruction_sha256"]
    return f"instruction {code(name)} (its text: instruction.md in the run folder)"
