"""Peer policies: how other agent runtimes compact, for side-by-side comparison with the policy under test.

Every number and rule here comes from POLICY.md's peer table ("facts gathered from their public source");
the code is our own. Each class says what it models and what it leaves out. All are pure: they read token
counts and the turn/step structure from the `ContextView`, never a model or a file.

One file per peer; the tail helpers they share (and their conventions) are in `tails`.
"""

from harness.policy.peers.claude_code import ClaudeCodePolicy
from harness.policy.peers.codex import CodexPolicy
from harness.policy.peers.gemini_cli import GeminiCliPolicy
from harness.policy.peers.opencode import OpencodePolicy
from harness.policy.peers.pi import PiPolicy
from harness.policy.peers.ratio import Ratio20Policy
from harness.policy.peers.truncate import TruncatePolicy

__all__ = ["ClaudeCodePolicy", "CodexPolicy", "GeminiCliPolicy", "OpencodePolicy", "PiPolicy", "Ratio20Policy",
           "TruncatePolicy"]
