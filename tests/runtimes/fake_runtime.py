"""A stand-in runtime for the failure paths no real runtime takes on cue: one that exits before its first
request, one killed by a signal after it, one that hangs with a child that left its process group. It is a
standard-library script (the harness's own interpreter, which the sandbox shows) behind an adapter file of its
own, driven by the real driver, sandbox and `run` like any runtime."""

from __future__ import annotations

import sys
from pathlib import Path

KEY = "sk-fakeruntime0123456789abcdefKEY"  # key-shaped: redaction must keep it out of every file

SCRIPT = r'''#!{python} -I
import json, os, signal, subprocess, sys, time, urllib.request

VERSION = "{version}"
KEY = "{key}"
if sys.argv[1:] == ["--version"]:  # its version only with nothing of the user's in view: no key, not their home
    open(os.path.join(os.environ.get("HOME", "."), "fake-runtime-was-here"), "w").close()
    leaked = [k for k in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY") if k in os.environ]
    if leaked or os.environ.get("HOME") == "{user_home}":
        print(f"leaked: {{leaked}} HOME={{os.environ.get('HOME')}}")
    else:
        print(f"fake-runtime {{VERSION}}")
    sys.exit(0)
mode, base_url, prompt = sys.argv[1], sys.argv[2], sys.argv[3]
print(f"starting with {{KEY}}", flush=True)
print(f"stderr says Authorization: Bearer {{KEY}}", file=sys.stderr, flush=True)
if mode == "exit-before-request":
    sys.exit(0)
if mode == "rpc-killed":  # pi's protocol: killed by a signal when its first prompt comes, before any request
    sys.stdin.readline()
    os.kill(os.getpid(), signal.SIGKILL)
if mode == "kill-after-request":
    tools = [{{"type": "function", "function": {{"name": "bash", "description": "run a command", "parameters": {{
        "type": "object", "properties": {{"command": {{"type": "string"}}}}, "required": ["command"]}}}}}}]
    body = {{"model": "harness-model", "messages": [{{"role": "user", "content": prompt}}], "tools": tools}}
    request = urllib.request.Request(base_url + "/chat/completions", json.dumps(body).encode(),
                                     {{"Content-Type": "application/json"}})
    urllib.request.urlopen(request, timeout=60).read()
    os.kill(os.getpid(), signal.SIGKILL)
if mode == "hang":
    subprocess.Popen(["sleep", "{sleep}"], start_new_session=True)  # out of the runtime's process group
    open("started", "w").close()
    time.sleep(600)
'''
ADAPTER = '''
name = "{name}"
version = "{pinned}"
wire = "openai-chat"
[install]
bin = "{script}"
version_args = ["--version"]
[session]
mode = "{session}"
{commands}
turn_timeout_s = 120
[env]
HOME = "${{home}}"
[compaction]
on = ""
off = ""
[tools]
shell = ["bash"]
[signatures]
compaction.system = ["You are a fake summarizer"]
'''


def write_fake(folder: Path, mode: str, *, name: str = "fake", version: str = "1.0.0", pinned: str | None = None,
               sleep: str = "617.25") -> Path:
    """The adapter file of a fake runtime that reports `version` and behaves as `mode` (`rpc-killed` speaks
    pi's protocol; the others are exec runtimes); the adapter pins `pinned` (default: the same version). A
    hanging one's child sleeps `sleep` seconds: how a test finds it."""
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / f"{name}-runtime.py"
    script.write_text(SCRIPT.format(python=Path(sys.executable).resolve(), version=version, key=KEY, sleep=sleep,
                                    user_home=Path.home()))
    script.chmod(0o755)
    argv = f'["${{bin}}", "{mode}", "${{base_url}}", "${{prompt}}"]'
    commands = (f"command = {argv.replace('${prompt}', 'rpc')}" if mode == "rpc-killed"
                else f"first = {argv}\nnext = {argv}")
    adapter = folder / f"{name}.toml"
    adapter.write_text(ADAPTER.format(name=name, pinned=pinned or version, script=script, commands=commands,
                                      session="rpc" if mode == "rpc-killed" else "exec"))
    return adapter
