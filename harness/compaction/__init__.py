"""The compaction path: the send loop, the fold, the summarizer request shapes and the events they emit."""
