"""The cassette file: its reader checks a cassette whole when it is opened, so a damaged, foreign or edited
one is a one-line error naming the file, the key and the fix, never a KeyError mid-replay; its writer joins
what a recording adds with what the file holds, under a lock, so two recordings into one `--cassettes`
(another configuration, another process) both keep everything they recorded."""

from __future__ import annotations

import fcntl
import json
import os
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from harness.atomic import write_atomic
from harness.errors import InputError
from harness.validate import encoded, read_json_file

CASSETTE_VERSION = 1
FIX = "re-record it with --record-mode all"


def check_cassette(path: Path, case_id: str) -> list[dict[str, Any]]:
    """The interactions of the cassette at `path`, which must be this version's and this case's."""
    where = str(path)
    try:
        data = read_json_file(path, "the cassette", "cannot read it")
    except InputError as exc:
        raise InputError(where, exc.line, None, f"not a readable cassette ({exc.problem}); {FIX}") from None
    if not isinstance(data, dict):
        raise InputError(where, None, None, f"not a cassette (a JSON object with interactions); {FIX}")
    if data.get("version") != CASSETTE_VERSION:
        raise InputError(where, None, "version", f"{data.get('version')!r}, this harness reads {CASSETTE_VERSION}; "
                                                 f"{FIX}")
    if case_id != "?" and data.get("case") != case_id:
        raise InputError(where, None, "case", f"{data.get('case')!r} is another case's cassette (expected "
                                              f"{case_id!r}); {FIX}")
    interactions = data.get("interactions")
    if not isinstance(interactions, list):
        raise InputError(where, None, "interactions", f"must be a list; {FIX}")
    for number, interaction in enumerate(interactions):
        _check_interaction(interaction, where, f"interactions[{number}]")
    return interactions


def _check_interaction(interaction: Any, where: str, key: str) -> None:
    if not isinstance(interaction, dict) or not isinstance(interaction.get("hash"), str):
        raise InputError(where, None, key, f"must be an object with a hash; {FIX}")
    response = interaction.get("response")
    if not isinstance(response, dict) or "body" not in response:
        raise InputError(where, None, f"{key}.response", f"must be an object with status and body; {FIX}")
    status = response.get("status")
    if isinstance(status, bool) or not isinstance(status, int) or not 100 <= status <= 599:
        raise InputError(where, None, f"{key}.response.status", f"must be an HTTP status; {FIX}")
    elapsed = interaction.get("elapsed_s", 0.0)
    if isinstance(elapsed, bool) or not isinstance(elapsed, (int, float)):
        raise InputError(where, None, f"{key}.elapsed_s", f"must be a number of seconds; {FIX}")


def entry_key(interaction: dict[str, Any]) -> tuple[Any, ...]:
    """One recorded exchange, told apart from an identical request recorded at another time."""
    return interaction["hash"], interaction.get("recorded_at"), interaction.get("elapsed_s")


@contextmanager
def folder_lock(folder: Path) -> Iterator[None]:
    """An exclusive lock on the cassette's folder (no lock file is left behind; the kernel drops it when
    the process ends, even on SIGKILL), so two recordings never read-merge-write one file at once."""
    folder.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        yield
    finally:
        os.close(descriptor)


def save_cassette(path: Path, case_id: str, recorded: list[dict[str, Any]], replaced: frozenset[tuple[Any, ...]],
                  *, rerecording: bool) -> None:
    """Write this writer's `recorded` exchanges into the cassette at `path`, joined with what the file holds
    now (another run may have recorded into it meanwhile), less the `replaced` entries (the file's contents
    when a `--record-mode all` writer opened it). A damaged file is overwritten only when re-recording."""
    with folder_lock(path.parent):
        try:
            on_disk = check_cassette(path, case_id) if path.exists() else []
        except InputError:
            if not rerecording:  # never overwrite what cannot be read
                raise
            on_disk = []
        kept = [i for i in on_disk if entry_key(i) not in replaced]
        known = {entry_key(i) for i in kept}
        interactions = kept + [i for i in recorded if entry_key(i) not in known]
        document = {"version": CASSETTE_VERSION, "case": case_id, "interactions": interactions}
        # written as built: keys were removed where they entered (requests field by field, replies on arrival)
        text = json.dumps(document, indent=2, ensure_ascii=False, sort_keys=False) + "\n"
        write_atomic(path, encoded(text))  # an interrupted run never leaves half a cassette
