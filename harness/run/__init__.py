"""A run: configurations x cases through the compaction path, probes graded under each control."""
