"""The library face: every name it lists resolves, and an unknown name is an AttributeError."""

import pytest

import harness


def test_every_face_name_resolves_to_its_package_object():
    from harness.cases import discover
    from harness.run import run_cases

    assert harness.discover is discover and harness.run_cases is run_cases
    for name in harness.__all__:
        assert getattr(harness, name) is not None


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        harness.nothing  # noqa: B018
