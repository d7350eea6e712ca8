"""Rendering: terminal tables, markdown, JUnit and plots, read from results (run.json dicts) and study
results only; nothing below the CLI imports it.

console (the rich consoles), format (the one copy of number formatting), run (progress, summary,
report.md), points (per compaction point tables), compare, gate (+ JUnit), cost, shapes (the cost shapes'
names), verdict, simulate, cases, plots."""
