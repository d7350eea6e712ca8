"""The compaction path: the send loop (compactor), the pure fold decision (fold), the live context and its
snapshots (context), what a replay reports (events), and the summarizer's request shapes (summarizer)."""

from harness.compaction.compactor import Compactor, replay
from harness.compaction.context import PRUNED_MARKER, ContextSnapshot, LiveContext, Replay
from harness.compaction.events import RISK_KINDS, CompactionEvent, PruneEvent, Risk, SummaryCall
from harness.compaction.fold import Fold, prepare

__all__ = ["PRUNED_MARKER", "RISK_KINDS", "CompactionEvent", "Compactor", "ContextSnapshot", "Fold", "LiveContext",
           "PruneEvent", "Replay", "Risk", "SummaryCall", "prepare", "replay"]
