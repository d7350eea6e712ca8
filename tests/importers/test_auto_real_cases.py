"""The two real autonomous-pool cases imported from ../shared/samples: well-formed case.toml, a loadable session,
8-20 hand-written probes whose expected facts appear literally in the session at or before planted_at."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from harness.importers import import_transcript
from harness.session import dumps_session, message_text, read_session

ROOT = Path(__file__).parents[2]
SAMPLES = ROOT.parent / "shared" / "samples"
KINDS = {"goal", "constraint", "artifact", "decision", "error", "recall", "update", "progress", "continuation"}
CASES = {
    "auto-real-django-15814": "mini-swe-agent_django__django-15814.traj.json",
    "auto-real-pydicom-1458": "swe-agent_pydicom__pydicom-1458.traj",
}


def load(case_id: str):
    folder = ROOT / "cases" / case_id
    data = tomllib.loads((folder / "case.toml").read_text(encoding="utf-8"))
    return folder, data, read_session(folder / data["case"]["session"])


@pytest.mark.parametrize("case_id", sorted(CASES))
def test_case_file_and_license(case_id):
    folder, data, session = load(case_id)
    assert data["case"]["id"] == case_id == folder.name
    assert data["case"]["pool"] == "autonomous"
    # django is evaluated on a 32K window so the policy compacts it (see its case.toml); pydicom keeps 128K
    window = 32_768 if case_id == "auto-real-django-15814" else 128_000
    assert data["model"]["context_window"] == window and data["model"]["max_output_tokens"] == 16384
    license_text = (folder / "LICENSE.md").read_text(encoding="utf-8")
    assert "MIT License" in license_text and "Permission is hereby granted" in license_text
    assert CASES[case_id] in license_text
    assert session.system and len(session.messages) > 20


@pytest.mark.parametrize("case_id", sorted(CASES))
def test_probes_are_planted_where_they_say(case_id):
    _, data, session = load(case_id)
    probes = data["probe"]
    assert 8 <= len(probes) <= 20
    assert len({p["id"] for p in probes}) == len(probes)
    texts = [message_text(m) for m in session.messages]
    for probe in probes:
        assert probe["kind"] in KINDS, probe["id"]
        assert probe["question"].strip() and probe["all"], probe["id"]
        assert "draft" not in probe
        at = probe["planted_at"]
        assert 0 <= at < len(session.messages), probe["id"]
        seen = "\n".join(texts[:at + 1])
        for item in probe["all"]:
            alternatives = item if isinstance(item, list) else [item]
            assert any(alt in seen for alt in alternatives), f"{probe['id']}: {item!r} not in messages 0..{at}"
        # `none` items are answers the grader refuses as stated (a superseded value, a hedge, a bare "yes");
        # their reject examples in the self-tests (tests/test_cases.py) are what checks them


@pytest.mark.skipif(not SAMPLES.is_dir(), reason=f"real samples not found at {SAMPLES}")
@pytest.mark.parametrize("case_id", sorted(CASES))
def test_case_session_is_the_import_of_the_sample(case_id):
    folder, _, session = load(case_id)
    imported, _, _ = import_transcript(SAMPLES / CASES[case_id], window=128_000)
    assert dumps_session(imported) == (folder / "session.jsonl").read_text(encoding="utf-8")


@pytest.mark.parametrize("case_id", sorted(CASES))
def test_case_loads_with_the_case_loader(case_id):
    cases = pytest.importorskip("harness.cases")
    case = cases.load_case(ROOT / "cases" / case_id)
    assert case.id == case_id and 8 <= len(case.probes) <= 20
    assert all(not probe.draft for probe in case.probes)
