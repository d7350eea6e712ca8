"""The cassette file's reader: a cassette is checked whole when it is opened, so a damaged, foreign or
edited one is a one-line error naming the file, the key and the fix, never a KeyError mid-replay."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.errors import InputError
from harness.validate import read_json_file

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
