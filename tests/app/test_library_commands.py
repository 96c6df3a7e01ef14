"""`babelfind index | search | status | forget | reindex` end to end with the bundled model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import run_cli as run

from app.cli import main

SAMPLE = Path(__file__).resolve().parents[2] / "resources" / "sample"


@pytest.mark.slow
def test_index_search_status_forget(default_models, capsys, tmp_path):
    corpus = tmp_path / "docs"
    corpus.mkdir()
    for name in ("gletscher_de.txt", "transsib_ru.txt", "pain_au_levain_fr.pdf"):
        (corpus / name).write_bytes((SAMPLE / name).read_bytes())
    (corpus / "broken.pdf").write_bytes(b"%PDF-1.4 truncated")

    code, out, _ = run(capsys, "index", str(corpus))
    assert code == 0
    assert "indexed 3, unchanged 0, removed 0, skipped 1" in out
    assert "broken.pdf" in out

    code, out, _ = run(capsys, "search", "why are the glaciers in the Alps shrinking", "--json", "-k", "2")
    results = json.loads(out)
    assert code == 0 and Path(results[0]["path"]).name == "gletscher_de.txt"
    assert {"path", "score", "language", "snippet", "start", "end", "page"} <= set(results[0])
    assert Path(results[0]["path"]).is_absolute() and results[0]["language"] == "de"

    code, out, _ = run(capsys, "search", "baking bread in a hot oven", "--type", "pdf", "--json")
    assert json.loads(out)[0]["page"] in (2, 3)

    code, out, _ = run(capsys, "status", "--json")
    status = json.loads(out)
    assert (status["documents"], status["failed"]) == (3, 1)
    assert status["model"] == "multilingual-e5-small"

    code, out, _ = run(capsys, "index", "--priority", "normal", str(corpus))
    assert "indexed 0, unchanged 3, removed 0, skipped 1" in out  # the broken PDF counts once

    code, out, _ = run(capsys, "forget", str(corpus / "transsib_ru.txt"))
    assert code == 0 and "removed 1" in out
    code, out, _ = run(capsys, "reindex")
    assert code == 0 and "indexed 0" in out  # what was forgotten stays forgotten
    code, out, _ = run(capsys, "index", str(corpus / "transsib_ru.txt"))
    assert code == 0 and "indexed 1" in out  # until it is indexed again by name


def test_user_mistakes_are_one_line_errors(default_models, capsys, tmp_path):
    code, out, err = run(capsys, "index", str(tmp_path / "missing"))
    assert code == 2 and err.count("\n") == 1 and "no such file or folder" in err
    code, out, err = run(capsys, "forget", str(tmp_path))
    assert code == 1 and err.startswith("babelfind: error:") and "not indexed" in err
    code, out, err = run(capsys, "index", "--priority", "high", str(tmp_path))
    assert code == 2 and "invalid choice: 'high'" in err
    code, out, err = run(capsys, "--db", "postgresql+psycopg://x:y@127.0.0.1:1/none?connect_timeout=1", "status")
    assert code == 1 and "cannot open the database" in err and "Traceback" not in err


@pytest.mark.slow
def test_search_modes_syntax_and_match_kinds_with_the_bundled_model(default_models, capsys, tmp_path):
    from search_corpora import write_invoices

    from engine.config import data_paths
    from engine.library import Library

    files = write_invoices(tmp_path / "invoices")
    assert run(capsys, "index", str(tmp_path / "invoices"))[0] == 0
    numbers = list(files)[::8]  # 30 invoice numbers among 240 near-identical reminders
    library = Library.open(data_paths())  # one model load for the 90 searches
    try:
        first = {mode: sum(library.search(n, k=1, mode=mode)[0].path == str(files[n]) for n in numbers)
                 for mode in ("fused", "dense", "keyword")}
    finally:
        library.close()
    assert first["fused"] == first["keyword"] == len(numbers), first
    code, out, _ = run(capsys, "search", numbers[0], "--json", "-k", "1", "--mode", "keyword")
    assert json.loads(out)[0]["matched_by"] == "keywords"
    code, out, _ = run(capsys, "search", numbers[0], "--json", "-k", "1")
    assert json.loads(out)[0]["matched_by"] in ("keywords", "both")
    code, out, _ = run(capsys, "search", f'"{numbers[1]}" lang:de,en,fr,es', "-k", "3")
    assert code == 0 and f"[{numbers[1]}]" in out and "1 matching document" in out
    code, out, err = run(capsys, "search", "invoice after:2024-02-30")
    assert code == 2 and "is not a date" in err and err.count("\n") == 1


def test_search_help_documents_the_query_syntax(capsys):
    assert main(["search", "--help"]) == 0  # argparse's exit becomes the return code
    out = capsys.readouterr().out
    for part in ('"exact phrase"', "-word", "lang:de", "type:pdf", "path:~/Papers", "after:2024-01-01", "before:", "--mode"):
        assert part in out
