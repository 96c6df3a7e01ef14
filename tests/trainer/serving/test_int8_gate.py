"""The int8 gate's decision (pure), its evidence records, and the shipped evidence file."""

from __future__ import annotations

import json

import pytest

from engine.errors import InputError, ModelError
from trainer.serving.int8_evidence import evidence_path, int8_decision, load_evidence
from trainer.serving.int8_gate import (
    FULL_TATOEBA_LANGUAGES, INCOMPLETE, PASSED, REFUSED, Quality, calibration_sentences,
    evidence_record, judge_int8, quality_of_record,
)
from trainer.serving.quantise import DEFAULT_SCHEMES, SCHEMES

LANGS = [f"l{i:03d}" for i in range(FULL_TATOEBA_LANGUAGES - 1)] + ["est"]


def fp32(sts: float | None = 84.0) -> Quality:
    return Quality({lang: 20.0 + i % 7 for i, lang in enumerate(LANGS)}, sts)


def shifted(by: dict[str, float], everywhere: float = 0.0, sts: float | None = 84.0) -> Quality:
    base = fp32().tatoeba
    return Quality({k: v + everywhere + by.get(k, 0.0) for k, v in base.items()}, sts)


def test_a_variant_that_hurts_one_language_is_refused_though_its_mean_is_fine():
    int8 = shifted({"est": 4.45})
    assert int8.mean_error - fp32().mean_error < 0.05  # a mean-only gate would pass it
    verdict = judge_int8(fp32(), int8)
    assert verdict.verdict == REFUSED
    assert verdict.reason == "est +4.45 points Tatoeba error (gate: <= 2 per language)"


def test_a_variant_within_every_bound_passes():
    verdict = judge_int8(fp32(), shifted({"est": 1.5}, everywhere=0.45, sts=83.6))
    assert verdict.passed, verdict.reason
    assert "worst est +1.95" in verdict.reason and "112 languages" in verdict.reason


@pytest.mark.parametrize("int8, words", [
    (shifted({}, everywhere=0.6), "mean +0.60 points Tatoeba error over 112 languages"),
    (shifted({}, sts=83.4), "STS-B Spearman -0.60 points (gate: <= 0.5)"),
    (shifted({"l000": 2.01}), "l000 +2.01 points"),
])
def test_each_bound_refuses_on_its_own(int8, words):
    verdict = judge_int8(fp32(), int8)
    assert verdict.verdict == REFUSED and words in verdict.reason


def test_better_int8_is_not_refused():
    assert judge_int8(fp32(), shifted({"est": -6.0}, sts=85.0)).passed


def test_a_pass_needs_full_evidence_but_a_refusal_does_not():
    few = {k: fp32().tatoeba[k] for k in LANGS[-15:]}
    screened = judge_int8(Quality(few, 84.0), Quality(few, 84.0))
    assert screened.verdict == INCOMPLETE and "15 Tatoeba languages" in screened.reason
    hurt = Quality(few | {"est": few["est"] + 3}, 84.0)
    assert judge_int8(Quality(few, 84.0), hurt).verdict == REFUSED
    assert judge_int8(fp32(None), shifted({}, sts=None)).verdict == INCOMPLETE
    missing = Quality({k: v for k, v in fp32().tatoeba.items() if k != "est"}, 84.0)
    verdict = judge_int8(fp32(), missing)
    assert verdict.verdict == INCOMPLETE and "est" in verdict.reason


def test_evidence_record_keeps_what_the_verdict_was_made_of():
    int8 = shifted({"est": 3.0})
    record = evidence_record(fp32(), int8, judge_int8(fp32(), int8))
    assert record["gate"] == REFUSED and record["tatoeba"]["languages"] == 112
    again = judge_int8(quality_of_record(record, "fp32"), quality_of_record(record, "int8"))
    assert (again.verdict, again.reason) == (record["gate"], record["reason"])
    with pytest.raises(InputError, match="lacks the int8"):
        quality_of_record({"tatoeba": {}}, "int8")


def _evidence(*entries) -> dict:
    return {"models": {"m": [{"weights_sha256": "abc", **e} for e in entries]}}


def test_decision_builds_only_a_scheme_that_passed_for_these_weights():
    refused = {"scheme": "dynamic-pc", "gate": REFUSED, "reason": "est +4.45 points"}
    passed = {"scheme": "dynamic-pc-rr", "gate": PASSED, "reason": "fine"}
    decision = int8_decision("m", "abc", _evidence(refused, passed))
    assert decision.scheme == "dynamic-pc-rr" and decision.record["gate"] == PASSED
    assert int8_decision("m", "other weights", _evidence(passed)).scheme is None
    none = int8_decision("m", "abc", _evidence(refused))
    assert none.scheme is None and none.record["file"] is None
    assert none.record["reason"] == "dynamic-pc: est +4.45 points"
    assert none.record["gate"] == REFUSED
    screened = {"scheme": "dynamic-pc-rr", "gate": INCOMPLETE, "reason": "15 languages"}
    mixed = int8_decision("m", "abc", _evidence(refused, screened)).record
    assert mixed["gate"] == INCOMPLETE and mixed["reason"].endswith("dynamic-pc-rr: 15 languages")
    assert [t["scheme"] for t in mixed["schemes_tried"]] == ["dynamic-pc", "dynamic-pc-rr"]
    unknown = int8_decision("x", "abc", _evidence(passed)).record
    assert unknown["gate"] == "not run" and "no int8 gate evidence" in unknown["reason"]


def test_decision_prefers_the_fastest_scheme_that_passed(monkeypatch):
    from engine.encoders import int8_kernels

    monkeypatch.setattr(int8_kernels, "pair_sums_saturate", lambda: False)
    slow = {"scheme": "dynamic-pc-ffn-out-fp32", "gate": PASSED, "reason": "fine"}
    fast = {"scheme": "rowwise", "gate": PASSED, "reason": "fine"}
    assert DEFAULT_SCHEMES.index("rowwise") < DEFAULT_SCHEMES.index(slow["scheme"])
    assert int8_decision("m", "abc", _evidence(slow, fast)).scheme == "rowwise"


def test_decision_takes_7_bit_weights_where_8_bit_ones_saturate(monkeypatch):
    from engine.encoders import int8_kernels

    eight_bit = {"scheme": "rowwise", "gate": PASSED, "reason": "fine"}
    seven_bit = {"scheme": "rowwise-w7", "gate": PASSED, "reason": "fine too"}
    monkeypatch.setattr(int8_kernels, "pair_sums_saturate", lambda: False)
    assert int8_decision("m", "abc", _evidence(seven_bit, eight_bit)).scheme == "rowwise"
    monkeypatch.setattr(int8_kernels, "pair_sums_saturate", lambda: True)
    assert int8_decision("m", "abc", _evidence(seven_bit, eight_bit)).scheme == "rowwise-w7"
    alone = int8_decision("m", "abc", _evidence(eight_bit))
    assert alone.scheme is None and alone.record["gate"] == "not used on this CPU"
    assert "(x86-64 without VNNI)" in alone.record["reason"]


def test_unreadable_evidence_file_names_it(tmp_path):
    bad = tmp_path / "int8_evidence.json"
    bad.write_text("{nope")
    with pytest.raises(ModelError, match="int8_evidence.json"):
        load_evidence(bad)
    assert load_evidence(tmp_path / "absent.json") == {"models": {}}


def test_shipped_evidence_is_consistent_with_the_gate():
    """Every committed verdict follows from its own numbers, for a known scheme."""
    data = json.loads(evidence_path().read_text(encoding="utf-8"))
    entries = [e for entries in data["models"].values() for e in entries]
    assert entries
    for entry in entries:
        assert entry["scheme"] in SCHEMES and len(entry["weights_sha256"]) == 64
        verdict = judge_int8(quality_of_record(entry, "fp32"), quality_of_record(entry, "int8"))
        assert (verdict.verdict, verdict.reason) == (entry["gate"], entry["reason"]), entry["scheme"]


def test_calibration_text_is_pud_and_wikipedia_never_tatoeba(tmp_path):
    pud = tmp_path / "corpus" / "pud-parallel"
    pud.mkdir(parents=True)
    for lang in ("de", "fr"):
        rows = [f"n{i:04d}\tnews {lang} {i}" for i in range(5)] + \
               [f"w{i:04d}\twiki {lang} {i}" for i in range(5)]
        (pud / f"pud.{lang}.tsv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    sentences = calibration_sentences(tmp_path / "corpus", per_language=3)
    assert len(sentences) == 6 and all(s.startswith("wiki ") for s in sentences)
    assert len(set(sentences)) == 6
    with pytest.raises(InputError, match="no PUD sentences"):
        calibration_sentences(tmp_path / "nothing")
