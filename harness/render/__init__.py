"""Rendering: terminal tables, markdown, JUnit and plots, read from results only."""
