"""engine.resources: the one lookup for the files Babelfind ships (sample corpus first)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from engine.errors import ResourceNotFoundError
from engine.resources import SAMPLE_QUERY, resource_candidates, resources_dir, sample_corpus

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def no_resources_override(monkeypatch):
    monkeypatch.delenv("BABELFIND_RESOURCES", raising=False)


def test_a_checkout_finds_its_own_sample_corpus():
    assert resources_dir() == REPO / "resources"
    assert sample_corpus() == REPO / "resources" / "sample"
    assert "beekeeping_en.md" in {p.name for p in sample_corpus().iterdir()}


def test_the_suggested_query_is_one_the_readme_table_promises_an_answer_for():
    table = (REPO / "resources" / "README.md").read_text(encoding="utf-8")
    queries = re.findall(r"^\| `[^`]+` \|.*\| ([^|]+?) \|$", table, re.M)
    assert SAMPLE_QUERY in queries


def test_the_environment_variable_is_the_only_place_looked(monkeypatch, tmp_path):
    monkeypatch.setenv("BABELFIND_RESOURCES", str(tmp_path / "elsewhere"))
    assert resource_candidates() == [tmp_path / "elsewhere"]
    with pytest.raises(ResourceNotFoundError) as caught:
        sample_corpus()
    assert caught.value.looked == [tmp_path / "elsewhere" / "sample"]
    assert str(tmp_path / "elsewhere" / "sample") in str(caught.value)
    assert "BABELFIND_RESOURCES" in str(caught.value)
    with pytest.raises(ResourceNotFoundError):
        resources_dir()


def test_a_pyinstaller_bundle_looks_inside_itself_first(monkeypatch, tmp_path):
    internal = tmp_path / "babelfind" / "_internal"
    (internal / "resources" / "sample").mkdir(parents=True)
    (internal / "resources" / "sample" / "notes.txt").write_text("bundled", encoding="utf-8")
    monkeypatch.setattr(sys, "_MEIPASS", str(internal), raising=False)
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "executable", str(tmp_path / "babelfind" / "babelfind-gui"))
    candidates = resource_candidates()
    assert candidates[:2] == [internal / "resources", tmp_path / "babelfind" / "resources"]
    assert sample_corpus() == internal / "resources" / "sample"


def test_an_empty_sample_folder_does_not_hide_a_complete_one(monkeypatch, tmp_path):
    internal = tmp_path / "_internal"
    (internal / "resources" / "sample").mkdir(parents=True)  # icons were copied, documents not
    monkeypatch.setattr(sys, "_MEIPASS", str(internal), raising=False)
    assert resources_dir() == internal / "resources"
    assert sample_corpus() == REPO / "resources" / "sample"
