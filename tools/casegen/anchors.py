"""The referent words of the generated probes whose question does not use the words the session says beside the
fact (`anchor` in case.toml: a summary retains the fact only in a statement that also names one of them)."""

ANCHORS: dict[str, dict[str, list[str]]] = {
    "auto-flaky-scheduler": {
        "verify": ["race", "verif*", "go test", "clean"],
    },
    "auto-test-triage": {
        "next": ["outbox", "test_outbox_ordering", "ordering", "need*", "next"],
    },
    "desktop-cli-dry-run": {
        "goal": ["flag", "add*", "command", "load", "goal", "task"],
        "plan-file": ["mergeplan", "plan", "file", "path", "new", "created", "wrote"],
        "next": ["next", "remain*", "left", "todo", "pending", "still", "not done", "not yet", "open", "test"],
        "left": ["next", "remain*", "left", "todo", "pending", "still", "not done", "not yet", "open"],
    },
    "desktop-go-env-config": {
        "next": ["next", "remain*", "left", "todo", "pending", "still", "not done", "not yet", "open", "readme"],
    },
    "desktop-ratelimit-headers": {
        "next": ["next", "remain*", "left", "todo", "pending", "still", "not done", "not yet", "open", "spec", "docs"],
    },
    "edge-32k-window": {
        "goal": ["add*", "feature", "route", "upstream", "goal", "task"],
        "deps": ["no new", "new", "depend*", "rule", "constraint"],
    },
    "edge-giant-step": {
        "goal": ["investigat*", "under load", "orders", "tollgate", "returns", "goal", "backend"],
        "file": ["error handling", "tidy", "tidied", "edit*", "file", "path"],
        "ns": ["namespace", "ns", "kubectl", "logs"],
    },
    "edge-parallel-tools": {
        "pm": ["package manager", "manager", "install*", "must", "lockfile"],
    },
    "long-billing-migration": {
        "next": ["next", "backfill", "staging", "first", "flag"],
    },
    "long-editor-sync": {
        "fix-file": ["reconnect", "fix*", "edit*", "file", "flushofflinequeue"],
    },
    "long-gateway-ratelimit": {
        "goal": ["goal", "task", "asked", "request*", "implement*", "want*", "session", "objective", "primary", "replace", "rate limit*", "limiter"],
    },
    "long-pipeline-backfill": {
        "goal": ["goal", "task", "asked", "request*", "implement*", "want*", "session", "objective", "primary", "make", "ingest", "checkpoint*", "then"],
        "ckpt-table": ["checkpoint_table", "table", "checkpoint*"],
    },
}
