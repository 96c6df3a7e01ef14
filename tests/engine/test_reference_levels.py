"""The answer levels kept beside the FAISS file: read back under their stamp only, and
never a reason for a search to fail."""

from __future__ import annotations

import json

from engine.index.reference_levels import keep_level, levels_file_for, read_levels


def test_levels_round_trip_per_language_under_their_stamp(tmp_path):
    path = levels_file_for(tmp_path, 3)
    keep_level(path, "stamp-a", "en", (27626, 0.517))
    keep_level(path, "stamp-a", "", (27626, None))  # pooled; nothing to measure
    assert read_levels(path, "stamp-a") == {"en": (27626, 0.517), "": (27626, None)}
    assert read_levels(path, "stamp-b") == {}
    keep_level(path, "stamp-b", "de", (30000, 0.5))  # another stamp's levels are not carried over
    assert read_levels(path, "stamp-b") == {"de": (30000, 0.5)}


def test_damaged_files_and_entries_read_as_nothing_kept(tmp_path):
    path = levels_file_for(tmp_path, 1)
    assert read_levels(path, "s") == {}  # none yet
    for damaged in (b"{not json", b"\xff\xfe", b"[1, 2]", b'{"format": 1, "stamp": "s", "levels": 7}'):
        path.write_bytes(damaged)
        assert read_levels(path, "s") == {}
    path.write_text(json.dumps({"format": 1, "stamp": "s", "levels": {
        "en": [100, 0.5], "fr": ["100", 0.5], "de": [100], "it": [100, "high"]}}), encoding="utf-8")
    assert read_levels(path, "s") == {"en": (100, 0.5)}


def test_a_folder_that_cannot_be_written_costs_only_the_keeping(tmp_path):
    blocked = tmp_path / "a-file"
    blocked.write_text("", encoding="utf-8")
    keep_level(levels_file_for(blocked, 1), "s", "en", (10, 0.4))  # its folder is a file: nothing raised
    assert read_levels(levels_file_for(blocked, 1), "s") == {}
