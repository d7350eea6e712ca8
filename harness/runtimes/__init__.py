"""Real agent runtimes under test (pi, Codex, opencode, or your own): each described by one TOML adapter
(adapter.py), installed pinned into a cache the project owns (install.py), configured in a scratch home
(home.py), and sent a case's user prompts through its own headless continuation (session.py) in its own
process group (process.py)."""
