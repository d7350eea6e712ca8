"""What was asked -> a plan: the configuration of a run, resolved once before any case starts.

`RunConfig` is what the user asked for (strings, as given). `plan_run` turns it into a `RunPlan`: the
configuration checked (`validate`, once), every model spec parsed once into a ModelSpec, the price table
loaded and the summarizer's price resolved once, and each needed key checked once. Cases then read the plan
and parse nothing. `settings_for` is the one builder of policy settings, used by `run` and `simulate` alike.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from harness.cases.schema import Case
from harness.compaction.controls import CONTROLS
from harness.compaction.summarizer import SECTIONS, SUMMARY_INSTRUCTION
from harness.errors import HarnessError
from harness.models import ModelSpec, check_spec, require_key
from harness.models.base import DEFAULT_REQUEST_TIMEOUT_S, DEFAULT_RETRIES
from harness.policy import PolicyConfig
from harness.results.schema import Configuration

if TYPE_CHECKING:
    from harness.run.ceiling import AnswererWindow

DEFAULT_MAX_OUTPUT_TOKENS = 16384  # a session with no case behind it: the common provider default


def compacts(spec: str) -> bool:
    """A provider-compaction spec (checked by `validate`; a malformed one is not one)."""
    try:
        return check_spec(spec).compacts
    except HarnessError:
        return False


@dataclass(frozen=True)
class RunConfig:
    """One configuration of the matrix. `summarizer="same"` is the session's own model (`model`)."""

    policy: str = "default"
    model: str = "builtin"
    summarizer: str = "same"
    answerer: str | None = None  # default: the model continuing the session (`model`)
    judge: str | None = None
    cache: bool = True
    settings: tuple[tuple[str, Any], ...] = ()
    record_mode: str = "none"
    cassettes: str = "goldens/cassettes"
    at_recorded_points: bool = False  # compact exactly where the session's own compaction lines are (issue 9)
    recorded_tail: str = "recorded"  # at recorded points: keep the recorded tail, or "policy": the policy's own
    summary_tokens: int | None = None  # at recorded points: the budget (default: the recorded summary's size)
    prices: str | None = None  # a price file over the shipped table (--prices)
    sections: tuple[str, ...] = SECTIONS  # the sections the summary instruction asks for
    control: str | None = None  # a reference control summary instead (compaction.controls), sized by the summarizer
    # The summary instruction's text (--instruction; None: not given, the case's [summary] or the shipped one)
    # and the file it came from, as given.
    instruction: str | None = None
    instruction_file: str | None = None
    instruction_name: str | None = None  # what the reports call it: the file's stem, or --label
    # How a request to a provider is made; never part of the configuration's record (results do not depend on it).
    request_timeout: float = DEFAULT_REQUEST_TIMEOUT_S
    retries: int = DEFAULT_RETRIES
    record_errors: bool = False  # recording keeps 4xx replies too, replayed as that failure (--record-errors)
    answerer_window: int | None = None  # the answerer's window (default: its model's; the builtin: the case's)
    rpm: int | None = None  # caps per model for providers that send no rate-limit headers (not in the key)
    tpm: int | None = None
    runtime: str | None = None  # a real runtime (harness.runtimes) drives the case; policy is then `recorded`
    runtime_compaction: bool = True  # False: the runtime's control (its compaction off)
    runtime_settings: tuple[tuple[str, str], ...] = ()  # --runtime-set NAME=VALUE over the adapter's [settings]
    allow_version_drift: bool = False  # run a runtime whose installed version is not its adapter's pin
    runtime_version: str | None = None  # the version found when it is not the pin (set by plan_run; recorded)
    runtime_sandbox: bool = True  # False (--sandbox off): the runtime runs unconfined (harness.runtimes.sandbox)
    runtime_fault: Any = None  # harness.scripted.faults.SummaryFault on the runtime's summarization calls
    runtime_canary: bool = False  # a canary secret planted in a tool output (harness.scripted.canary)
    # also drive each case with the runtime's compaction off, to tell its own cuts' losses from its compaction's
    # (outcome.runtime.control); grades of the run itself do not depend on it, so not in the configuration record
    runtime_control: bool = False
    # `--window recorded`: each case's window set so the runtime's own trigger fires where the recorded session
    # compacted (harness.runtimes.window); named in `system`, kept per case in outcome.runtime.window
    runtime_window_recorded: bool = False

    @property
    def summarizer_spec(self) -> str:
        return self.model if self.summarizer == "same" else self.summarizer

    @property
    def answerer_spec(self) -> str:
        """Probes on a provider's compaction item are answered by that provider and model, the only one
        that can read it; so the compaction spec answers every condition, for a like-for-like comparison."""
        if self.answerer is None and compacts(self.summarizer_spec):
            return self.summarizer_spec
        return self.answerer or self.model

    @property
    def model_specs(self) -> tuple[str, ...]:
        """Every distinct model spec the run uses, in a stable order."""
        named = (self.model, self.summarizer_spec, self.answerer_spec, self.judge)
        return tuple(dict.fromkeys(s for s in named if s is not None))

    def validate(self) -> dict[str, ModelSpec]:
        """Check the configuration; returns each spec parsed (the only place a run parses its specs)."""
        parsed = {spec: check_spec(spec) for spec in self.model_specs}
        if compacts(self.summarizer_spec) and self.answerer_spec != self.summarizer_spec:
            raise HarnessError(f"--answerer {self.answerer_spec}: probes on a {self.summarizer_spec} compaction are "
                               "answered by the same provider and model (the only one that can read its item); "
                               "leave --answerer out")
        if self.judge and self.judge in (self.model, self.summarizer_spec):
            raise HarnessError(f"the judge {self.judge} is a model under test; pick another judge model")
        if self.recorded_tail not in ("recorded", "policy"):
            raise HarnessError(f"--at-recorded-points={self.recorded_tail}: choose recorded-tail or policy-tail")
        if self.control is not None and self.control not in CONTROLS:
            raise HarnessError(f"--control {self.control}: choose one of {', '.join(CONTROLS)}")
        return parsed

    @property
    def at_points(self) -> bool:
        """Another policy compacting at the recorded points (the `recorded` policy is there already)."""
        return self.at_recorded_points and self.policy != "recorded"

    def configuration(self) -> Configuration:
        """The run.json record of this configuration."""
        return Configuration(
            self.policy, self.model, self.summarizer, self.summarizer_spec, self.answerer_spec, self.judge,
            self.cache, self.settings, None if self.sections == SECTIONS else self.sections,
            self.recorded_tail if self.at_points else None, self.summary_tokens if self.at_points else None,
            self.record_mode, self.cassettes if self.record_mode else None, self.control, self.answerer_window,
            *self._instruction_record(), self.runtime_pin, self.runtime_compaction, self.runtime_settings,
            self.shown_instruction)

    @property
    def own_instruction(self) -> bool:
        """An instruction other than the shipped one was given (--instruction FILE)."""
        return self.instruction is not None and self.instruction != SUMMARY_INSTRUCTION

    @property
    def shown_instruction(self) -> str | None:
        """The name the reports give an instruction other than the shipped one: as given, else its file's stem."""
        if not self.own_instruction:
            return None
        return self.instruction_name or (Path(self.instruction_file).stem if self.instruction_file else "own")

    def instruction_warning(self) -> str | None:
        """Why the summarizer under test cannot follow the --instruction given, or None: the builtin model
        (bare or behind the emulator) reads only the sections an instruction names, never its prose."""
        if not self.own_instruction or self.control or self.runtime:
            return None
        if not check_spec(self.summarizer_spec).deterministic:
            return None
        from harness.compaction.summarizer import instruction
        from harness.models.builtin.sections import DEFAULT_SECTIONS, read_format

        found = read_format(instruction(1000, self.sections, self.instruction))
        reads = (f"the builtin summarizer ({self.summarizer_spec}) follows only an instruction's sections (`## ` "
                 f"headings, an XML skeleton, or a bulleted list after a colon), never its wording")
        if found is None:
            return (f"warning: instruction {self.shown_instruction} names no sections, and {reads}: it writes its "
                    f"default sections ({', '.join(DEFAULT_SECTIONS)}), so this run's summaries are the shipped "
                    f"instruction's; name sections (`## Goal` lines or {{sections}}) or try the wording with a model "
                    f"that reads it")
        return (f"warning: {reads}; from instruction {self.shown_instruction} it takes "
                f"{', '.join(title for _, title in found.sections)}")

    def _instruction_record(self) -> tuple[str | None, str | None]:
        """(digest, file) of an instruction other than the shipped one; the shipped one, even named, is none."""
        if self.instruction is None or not self.own_instruction:
            return None, None
        return hashlib.sha256(self.instruction.encode()).hexdigest()[:16], self.instruction_file

    def instruction_for(self, case: Case) -> str | None:
        """The instruction template a case's summarizer sends: --instruction, else the case's [summary]
        instruction, else None (the shipped one)."""
        return self.instruction if self.instruction is not None else case.summary_instruction

    @property
    def system(self) -> str:
        """What compacts: the policy's name, or the runtime's (`runtime-pi`, `runtime-pi-off` for its control)."""
        if self.runtime is None:
            return self.policy
        from harness.runtimes.adapter import load

        found = load(self.runtime)  # named after the adapter's `name`, not its file; another release by its version
        name = found.name if found.lockfile_shipped else found.pin
        fault = f"-fault-{self.runtime_fault.spec.replace(':', 'x')}" if self.runtime_fault else ""
        return (f"runtime-{name}" + ("" if self.runtime_compaction else "-off") + fault
                + ("-canary" if self.runtime_canary else "") + ("-window-recorded" if self.runtime_window_recorded else ""))

    @property
    def runtime_pin(self) -> str | None:
        """NAME@VERSION of the runtime (its adapter's pin; the version found, naming the pin, when it drifted),
        or None. The configuration records it, so `gate` names a drifted runtime as a configuration change."""
        if self.runtime is None:
            return None
        from harness.runtimes.adapter import load

        adapter = load(self.runtime)
        if self.runtime_version and self.runtime_version != adapter.version:
            return f"{adapter.name}@{self.runtime_version} (drifted from the pin {adapter.version})"
        return adapter.pin

    def describe(self) -> dict[str, Any]:
        return self.configuration().describe()

    def key(self) -> str:
        return hashlib.sha256(json.dumps(self.describe(), sort_keys=True).encode()).hexdigest()[:10]


@dataclass(frozen=True)
class RunPlan:
    """A configuration resolved once: parsed specs, the price table (None when the summarizer runs on a
    custom server, which has no price) and the keys checked."""

    config: RunConfig
    specs: tuple[tuple[str, ModelSpec], ...]
    prices: Mapping[str, Any] | None
    cassette_root: Path | None = None  # RUN_CASSETTES resolved against the run's folder
    answerer_window_tokens: int | None = None  # None: the case's window (the builtin, a custom server)
    # Shared per spec across the run's cases: a transport (e.g. one rate-limited emulator) and a rate limiter.
    transports: tuple[tuple[str, Any], ...] = ()
    limiters: tuple[tuple[str, Any], ...] = ()
    runtime: Any = None  # harness.runtimes.Installed: the adapter, its binary and the version found
    runtime_logs: Path | None = None  # where each case's request log goes (the run folder's runtime-logs/)

    @property
    def cassettes(self) -> Path:
        return self.cassette_root or Path(self.config.cassettes)

    def in_folder(self, folder: Path) -> RunPlan:
        """The plan of a run writing to `folder`: the run's own cassettes and runtime request logs live there."""
        plan = replace(self, runtime_logs=folder / "runtime-logs") if self.runtime is not None else self
        if self.config.cassettes != RUN_CASSETTES:
            return plan
        return replace(plan, cassette_root=folder / "cassettes")

    def spec(self, text: str) -> ModelSpec:
        return dict(self.specs)[text]

    @property
    def summarizer(self) -> ModelSpec:
        return self.spec(self.config.summarizer_spec)

    @property
    def answerer(self) -> ModelSpec:
        return self.spec(self.config.answerer_spec)

    @property
    def judge(self) -> ModelSpec | None:
        return self.spec(self.config.judge) if self.config.judge else None

    def policy_config(self, case: Case) -> PolicyConfig:
        return policy_config(case, self.config)

    def answerer_window(self, case: Case) -> AnswererWindow:
        """The answerer's window: its model's (pricing.toml), or for the builtin, which stands in for the
        session's model, the case's window, so offline runs meet the ceiling a live one would."""
        from harness.probes import ANSWER_TOKENS
        from harness.run.ceiling import AnswererWindow, margin_for

        window = (self.config.answerer_window or self.answerer_window_tokens
                  or self.policy_config(case).context_window)
        return AnswererWindow(window, ANSWER_TOKENS, margin_for(self.answerer.model))

    def transport(self, spec: str) -> Any:
        return dict(self.transports).get(spec)

    def limiter(self, spec: str) -> Any:
        return dict(self.limiters).get(spec)


COMMITTED_CASSETTES = "goldens/cassettes"  # where an explicit --record-mode reads and writes by default
RUN_CASSETTES = "<run folder>/cassettes"  # the default otherwise: the run's own folder, resolved by `in_folder`


def record_defaults(specs: Sequence[str], record_mode: str | None, cassettes: str | None) -> tuple[str, str]:
    """The record mode and cassette folder a run gets when not told: the builtin model needs no cassette;
    the emulator and custom servers record what is missing (`new`) and a real provider records once (`once`,
    vcrpy's meaning), both into the run's own folder so that trying a model never rewrites the committed
    cassettes. An explicit mode (`none` is the CI replay) keeps the committed folder as its default."""
    if record_mode is not None:
        return record_mode, cassettes or COMMITTED_CASSETTES
    parsed = [check_spec(spec) for spec in specs]
    if all(spec.provider == "builtin" for spec in parsed):
        return "none", cassettes or COMMITTED_CASSETTES
    live = any(spec.provider != "builtin" and not spec.base_url for spec in parsed)
    return ("once" if live else "new"), cassettes or RUN_CASSETTES


def plan_run(config: RunConfig | RunPlan, *, keys: bool = True) -> RunPlan:
    """The plan of a run: `validate` once, then prices and keys (`keys=False` for an estimate, which sends
    nothing: pricing a run is what one does before getting a key). A plan passed in is returned as it is."""
    if isinstance(config, RunPlan):
        return config
    parsed = config.validate()
    prices = _check_price(config, parsed[config.summarizer_spec])
    for spec in parsed if keys else ():
        _check_key(spec, config)
    runtime = _runtime(config)
    if runtime is not None and runtime.version != runtime.adapter.version:  # drifted (allowed): recorded
        config = replace(config, runtime_version=runtime.version)
    return RunPlan(config, tuple(parsed.items()), prices,
                   answerer_window_tokens=_model_window(config, parsed[config.answerer_spec]),
                   limiters=_limiters(config, parsed), runtime=runtime)


def _runtime(config: RunConfig) -> Any:
    """A runtime found installed at its pinned version, before any case starts (else one line, exit 2)."""
    if config.runtime is None:
        return None
    from harness.runtimes.adapter import with_settings
    from harness.runtimes.install import installed

    found = installed(config.runtime, config.allow_version_drift, config.runtime_sandbox)
    with_settings(found.adapter, config.runtime_settings)  # an undeclared setting is named before any case
    return found


def _limiters(config: RunConfig, parsed: Mapping[str, ModelSpec]) -> tuple[tuple[str, Any], ...]:
    """One rate limiter per model the run reaches over HTTP, shared by all its cases: it reads the
    provider's rate-limit headers always, and applies --rpm / --tpm when given. The builtin needs none."""
    from harness.models.ratelimit import RateLimiter

    return tuple((spec, RateLimiter(config.rpm, config.tpm)) for spec, model in parsed.items()
                 if model.provider != "builtin")


def settings_for(context_window: int | None, max_output_tokens: int | None, case_settings: Mapping[str, Any],
                 overrides: Mapping[str, Any], *, where: str) -> PolicyConfig:
    """The policy settings of one session, for `run` and `simulate` alike: the case's window and max output,
    then its [policy] table, then the settings given explicitly (None: not given)."""
    values: dict[str, Any] = {"context_window": context_window,
                              "max_output_tokens": max_output_tokens or DEFAULT_MAX_OUTPUT_TOKENS,
                              **case_settings, **{k: v for k, v in overrides.items() if v is not None}}
    if values["context_window"] is None:
        raise HarnessError(f"{where}: a bare session has no window; pass --window N")
    try:
        return PolicyConfig(**values)
    except TypeError as exc:
        raise HarnessError(f"unknown policy setting: {exc}") from None


def policy_config(case: Case, config: RunConfig) -> PolicyConfig:
    return settings_for(case.context_window, case.max_output_tokens, case.settings, dict(config.settings),
                        where=case.id)


def _check_price(config: RunConfig, spec: ModelSpec) -> Mapping[str, Any] | None:
    """An unknown summarizer price fails before any work, saying how to add it. Returns the table."""
    from harness.models.pricing import load_prices, resolve

    if spec.base_url and not spec.emulated and config.prices is None:
        return None  # a custom server has no shipped price; --prices gives it one
    prices = load_prices(config.prices)
    resolve(str(spec), prices)
    return prices


def _model_window(config: RunConfig, spec: ModelSpec) -> int | None:
    """A named model's window from the price table; None for the builtin, a custom server or an unknown row."""
    from harness.models.pricing import load_prices, resolve

    if spec.provider == "builtin" or (spec.base_url and not spec.emulated):
        return None
    try:
        return resolve(str(spec), load_prices(config.prices)).window
    except HarnessError:
        return None


def _check_key(spec: str, config: RunConfig) -> None:
    """Fail before any work when a key is needed and missing, without opening a client."""
    require_key(spec, config.record_mode)
