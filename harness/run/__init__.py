"""A run: configurations x cases through the compaction path, probes graded under each control.

config (what was asked -> a plan), case (evaluate one case), matrix (configurations x cases, shards,
concurrency, resume).
"""

from harness.run.case import case_record, evaluate_case
from harness.run.config import RunConfig, RunPlan, plan_run, policy_config, settings_for
from harness.run.matrix import default_run_id, matrix, parse_shard, results_path, run_cases

__all__ = ["RunConfig", "RunPlan", "case_record", "default_run_id", "evaluate_case", "matrix", "parse_shard",
           "plan_run", "policy_config", "results_path", "run_cases", "settings_for"]
