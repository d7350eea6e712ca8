"""What a report says about provider compaction: who answered the probes on its items, where `retained` is
not applicable (opaque items), and the calls that returned no compaction."""

from __future__ import annotations

from typing import Any

COMPACT_PREFIXES = ("openai-compact:", "anthropic-compact:")


def provider_note(run: dict[str, Any]) -> str | None:
    """One sentence for a run whose summarizer is the provider's compaction; None otherwise."""
    config = run["configuration"]
    spec = config["summarizer_spec"]
    if not spec.startswith(COMPACT_PREFIXES):
        return None
    summaries = [s for case in run.get("cases", {}).values() for s in case.get("summaries") or ()]
    opaque = sum(1 for s in summaries if s.get("opaque"))
    missing = sum(1 for s in summaries if s.get("not_compacted"))
    parts = [f"provider compaction {spec}: every probe is answered by {config['answerer']}, the only model that "
             "can read its items"]
    if opaque:
        parts.append(f"retained is not applicable on the compacted context ({opaque} opaque item(s): the facts may "
                     "be inside, unreadable to the harness); answered is the measure")
    else:
        parts.append("retained is measured on the readable content of its blocks")
    if missing:
        parts.append(f"{missing} compaction call(s) returned no compaction item: not compacted, never a success")
    return "; ".join(parts) + "."
