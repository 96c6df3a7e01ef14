"""Training corpus: files in any format, one-per-line text, stored collections, filters, counts."""

from __future__ import annotations

import numpy as np
import pytest

from engine.errors import InputError
from trainer.corpus import ALL_INDEXED, CorpusFilter, CorpusSource, CorpusTooSmallError, load_corpus

LOOSE = CorpusFilter(min_chars=5, max_chars=200, min_words=2, max_words=30)


def _load(source, filt=LOOSE, seed=1, **kwargs):
    return load_corpus(source, filt, seed, **kwargs)


def test_documents_are_split_into_sentences_and_counted(tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.md").write_text("# Bees\n\nBees make honey. Bees make honey. They live in hives!\n",
                                 encoding="utf-8")
    (folder / "b.html").write_text("<html><body><p>Der Hund schläft. Ok.</p>"
                                   "<p>" + "word " * 40 + "end.</p></body></html>", encoding="utf-8")
    (folder / "broken.pdf").write_bytes(b"%PDF-1.4 not really a pdf")
    (folder / "image.png").write_bytes(b"\x89PNG")  # not a format we read: not even counted
    corpus = _load(CorpusSource(paths=(str(folder),)))
    s = corpus.stats
    assert sorted(corpus.sentences) == ["Bees make honey.", "Der Hund schläft.", "They live in hives!"]
    assert (s.files, s.files_failed) == (3, 1) and "broken.pdf" in s.failures[0]
    # "# Bees" and "Ok." are too short, the 41-word line too long, one duplicate
    assert (s.duplicates, s.too_short, s.too_long, s.kept) == (1, 2, 1, 3)
    assert s.read == s.duplicates + s.too_short + s.too_long + s.kept


def test_one_sentence_per_line_file_is_read_by_lines(tmp_path):
    lines = [f"sentence number {i} without a full stop" for i in range(30)]
    path = tmp_path / "wiki.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    guessed = _load(CorpusSource(paths=(str(path),)))
    assert sorted(guessed.sentences) == sorted(lines)
    # told it is prose, the splitter finds no sentence end: the lines run together (cut
    # only at the splitter's 400-character limit)
    prose = _load(CorpusSource(paths=(str(path),), one_per_line=False),
                  CorpusFilter(max_words=1000, max_chars=10**5))
    assert prose.stats.kept < 5 and all(len(s) > 300 for s in prose.sentences[:-1])


def test_shuffle_is_seeded(tmp_path):
    path = tmp_path / "lines.txt"
    path.write_text("\n".join(f"line {i} of the file" for i in range(200)), encoding="utf-8")
    source = CorpusSource(paths=(str(path),))
    first, again, other = _load(source, seed=5), _load(source, seed=5), _load(source, seed=6)
    assert first.sentences == again.sentences
    assert first.sentences != other.sentences and sorted(first.sentences) == sorted(other.sentences)


def test_whitespace_is_normalised_before_deduplication(tmp_path):
    path = tmp_path / "lines.txt"
    path.write_text("the  cat sat\nthe cat\tsat \nthe cat sat\n", encoding="utf-8")
    corpus = _load(CorpusSource(paths=(str(path),)))
    assert corpus.sentences == ("the cat sat",) and corpus.stats.duplicates == 2


def test_too_few_sentences_is_a_clear_typed_error(tmp_path):
    path = tmp_path / "few.txt"
    path.write_text("one short line here\nanother line of text\n", encoding="utf-8")
    with pytest.raises(CorpusTooSmallError, match="2 usable sentences but training needs at least 128"):
        _load(CorpusSource(paths=(str(path),)), min_sentences=128)


def test_bad_sources_are_clear_errors(tmp_path):
    with pytest.raises(InputError, match="does not exist"):
        _load(CorpusSource(paths=(str(tmp_path / "missing"),)))
    with pytest.raises(InputError, match="choose the training sentences"):
        _load(CorpusSource())


def _index_collection(home, root, texts):
    from engine.store import DocumentWrite, NewPassage, Store

    store = Store.open(f"sqlite:///{home / 'babelfind.db'}")
    try:
        root_id = store.ensure_root(str(root))
        generation = store.create_generation("m", 2, "active")
        writes = []
        for i, passages in enumerate(texts):
            new = tuple(NewPassage(t, 0, len(t), None, "en") for t in passages)
            writes.append(DocumentWrite(str(root / f"d{i}.txt"), 1, 1.0, f"h{i}", "txt", "txt", "en",
                                        new, np.zeros((len(new), 2), np.float32)))
        store.write_documents(root_id, generation.id, writes)
    finally:
        store.close()


def test_collection_gives_its_passages_sentences(tmp_path, babelfind_home):
    root = tmp_path / "notes"
    # overlapping passages repeat a sentence: it counts as a duplicate
    _index_collection(babelfind_home, root, [["Cats purr loudly. Dogs bark at night.",
                                              "Dogs bark at night. Birds sing early."],
                                             ["Fish swim in schools."]])
    _index_collection(babelfind_home, tmp_path / "other", [["Not this collection at all."]])
    for name in ("notes", str(root)):
        corpus = _load(CorpusSource(collection=name))
        assert sorted(corpus.sentences) == ["Birds sing early.", "Cats purr loudly.",
                                            "Dogs bark at night.", "Fish swim in schools."]
        assert corpus.stats.duplicates == 1
    with pytest.raises(InputError, match="no indexed collection 'missing'"):
        _load(CorpusSource(collection="missing"))
    every = _load(CorpusSource(collection=ALL_INDEXED))
    assert "Not this collection at all." in every.sentences and len(every.sentences) == 5


def test_hostile_files_are_counted_as_failed_not_raised(tmp_path, monkeypatch):
    import os

    import trainer.corpus as corpus_module
    from hostile_docs import epub_members, zip_bytes

    folder = tmp_path / "hostile"
    folder.mkdir()
    (folder / "no-manifest.epub").write_bytes(zip_bytes(epub_members(with_manifest=False)))
    (folder / "good.txt").write_text("Bees make honey in summer.\nThey live in wooden hives.\n", encoding="utf-8")
    (folder / "swapped.txt").write_text("Soon a link to a device.\nIt must not be read.\n", encoding="utf-8")
    real_is_one_per_line = corpus_module._is_one_per_line

    def swap_then_read(path, one_per_line):  # the file becomes /dev/zero after the listing
        if path.name == "swapped.txt" and os.path.exists("/dev/zero"):
            path.unlink()
            os.symlink("/dev/zero", path)
        return real_is_one_per_line(path, one_per_line)

    monkeypatch.setattr(corpus_module, "_is_one_per_line", swap_then_read)
    corpus = _load(CorpusSource(paths=(str(folder),)))
    assert sorted(corpus.sentences) == ["Bees make honey in summer.", "They live in wooden hives."]
    failures = " ".join(corpus.stats.failures)
    assert corpus.stats.files_failed == 2 and "no-manifest.epub" in failures and "not a regular file" in failures
