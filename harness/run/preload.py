"""What the worker processes' fork server loads once, before it forks them (harness.run.workers): the case path
and the true-token encoding, which each worker would otherwise load again for its first case (half a second)."""

from harness.run import case  # noqa: F401  (imported for the workers)
from harness.tokens import encoding

encoding("o200k_base")
