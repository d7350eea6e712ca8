"""Rendering: terminal tables, markdown, JUnit and plots, read from results (run.json dicts) and study
results only; nothing below the CLI imports it.

console (the rich consoles), format (the one copy of number formatting), run (progress, summary,
report.md), points (per compaction point tables), compare, gate (+ JUnit), cost, shapes (the cost shapes'
names), verdict, simulate, cases, plots; html (report.html) with html_case and markup, lost (lost probes),
risks, definitions (what every figure means), view (open or serve report.html)."""
