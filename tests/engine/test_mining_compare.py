"""engine.mining.compare: mining with several models, each encoder timed."""

from __future__ import annotations

import pytest

from engine.errors import InputError
from engine.index.language_means import SENTENCES_PER_LANGUAGE
from engine.mining.bitext import MiningFinished, MiningOptions, MiningProgress
from engine.mining.compare import (ComparedFinished, ModelSpeed, TimedEncoder, iter_mine_with_models,
                                   speed_text)
from mining_fakes import ENGLISH, GERMAN, TranslationEncoder

OPTIONS = MiningOptions(lines=True, src_lang="de", tgt_lang="en")


@pytest.fixture
def documents(tmp_path):
    de, en = tmp_path / "de.txt", tmp_path / "en.txt"
    de.write_text("\n".join(GERMAN) + "\n", encoding="utf-8")
    en.write_text("\n".join(reversed(ENGLISH)) + "\n", encoding="utf-8")
    return de, en


def test_one_model_mines_as_before_and_reports_its_speed(documents):
    events = list(iter_mine_with_models(*documents, [TranslationEncoder()], OPTIONS))
    assert all(isinstance(e, MiningProgress) for e in events[:-1])
    assert not any(e.stage.startswith("fake:") for e in events[:-1])
    last = events[-1]
    assert isinstance(last, ComparedFinished) and isinstance(last.finished, MiningFinished)
    (speed,) = last.speeds
    # the documents' sentences, and the reference sentences of the two language means
    references = 2 * SENTENCES_PER_LANGUAGE
    assert speed.name == "fake" and speed.sentences == len(GERMAN) + len(ENGLISH) + references
    assert speed.seconds > 0
    assert speed.pairs == len(last.finished.result.pairs) > 0


def test_a_second_model_is_loaded_by_name_in_the_job_and_timed(documents):
    loaded = []

    def load(name):
        loaded.append(name)
        encoder = TranslationEncoder()
        encoder.name = name
        return encoder

    job = iter_mine_with_models(*documents, [TranslationEncoder(), "student"], OPTIONS, load=load)
    assert loaded == []  # nothing loads before the job runs (in the GUI's worker)
    events = list(job)
    assert loaded == ["student"]
    stages = [e.stage for e in events if isinstance(e, MiningProgress)]
    assert "load student" in stages and any(s.startswith("student: encode") for s in stages)
    assert [s.name for s in events[-1].speeds] == ["fake", "student"]


def test_no_model_is_refused(documents):
    with pytest.raises(InputError, match="at least one model"):
        list(iter_mine_with_models(*documents, [], OPTIONS))


def test_timed_encoder_passes_attributes_through():
    timed = TimedEncoder(TranslationEncoder())
    timed.encode(["a", "b"], kind="query")
    assert (timed.name, timed.sentences) == ("fake", 2) and timed.seconds > 0


def test_speed_text_puts_models_side_by_side():
    text = speed_text([ModelSpeed("e5", 100, 2.0, 10), ModelSpeed("laser", 100, 0.5, 9)])
    assert text == ("e5: 50 sentences/s (10 pairs) | laser: 200 sentences/s (9 pairs); "
                    "laser is 4.0x faster")
    assert speed_text([ModelSpeed("e5", 0, 0.0, 0)]) == "e5: 0 sentences/s (0 pairs)"
