"""Warnings and library logs go to BABELFIND_HOME/logs/babelfind.log, not the terminal."""

from __future__ import annotations

import logging
import warnings

import pytest

import app.cli.library_commands as library_commands
from app.cli import main
from app.logging_setup import LOG_BACKUPS, MAX_LOG_BYTES, log_path, logging_to_file, quiet_onnxruntime


@pytest.fixture
def noisy_status(monkeypatch):
    """`babelfind status` replaced by a command that does what third-party libraries do."""

    def noisy(args) -> int:
        warnings.warn("Converting a tensor to a Python boolean might cause the trace to be incorrect",
                      UserWarning)
        logging.getLogger("transformers.modeling_utils").warning("BertModel LOAD REPORT: pooler MISSING")
        logging.getLogger().warning("Please consider to run pre-processing before quantization.")
        print("status is fine")
        return 0

    monkeypatch.setattr(library_commands, "run_status", noisy)


def test_a_warning_during_a_command_lands_in_the_log_not_on_stderr(noisy_status, capsys, babelfind_home):
    assert main(["status"]) == 0
    out, err = capsys.readouterr()
    assert out == "status is fine\n" and err == ""
    log = log_path(babelfind_home).read_text(encoding="utf-8")
    assert "UserWarning: Converting a tensor" in log and "py.warnings" in log
    assert "transformers.modeling_utils: BertModel LOAD REPORT" in log
    assert "root: Please consider to run pre-processing" in log


@pytest.mark.parametrize("how", ["flag before", "flag after", "env"])
def test_verbose_shows_the_log_on_stderr_too(noisy_status, capsys, babelfind_home, monkeypatch, how):
    argv = {"flag before": ["--verbose", "status"], "flag after": ["status", "-v"], "env": ["status"]}[how]
    if how == "env":
        monkeypatch.setenv("BABELFIND_VERBOSE", "1")
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "UserWarning: Converting a tensor" in err and "LOAD REPORT" in err
    assert "LOAD REPORT" in log_path(babelfind_home).read_text(encoding="utf-8")


def test_an_error_is_one_line_on_stderr_and_a_traceback_in_the_log(capsys, babelfind_home):
    assert main(["forget", str(babelfind_home)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is not indexed" in err
    log = log_path(babelfind_home).read_text(encoding="utf-8")
    assert "babelfind forget failed" in log and "Traceback" in log and "NotIndexedError" in log


def test_the_log_rotates_and_stays_bounded(tmp_path):
    with logging_to_file(tmp_path) as path:
        record = "x" * 1000
        for _ in range(int(2.5 * MAX_LOG_BYTES / 1000)):
            logging.getLogger("chatty").info(record)
    files = sorted(path.parent.iterdir())
    assert [f.name for f in files] == ["babelfind.log", "babelfind.log.1", "babelfind.log.2"]
    assert all(f.stat().st_size <= MAX_LOG_BYTES for f in files) and len(files) <= LOG_BACKUPS + 1


def test_the_block_leaves_logging_as_it_found_it(tmp_path):
    root = logging.getLogger()
    before = (list(root.handlers), root.level, warnings.showwarning)
    with logging_to_file(tmp_path, verbose=True):
        assert len(root.handlers) == len(before[0]) + 2
    assert (list(root.handlers), root.level, warnings.showwarning) == before


def test_an_unwritable_home_falls_back_to_stderr(tmp_path, capsys):
    blocker = tmp_path / "home"
    blocker.write_text("a file where the home folder should be", encoding="utf-8")
    with logging_to_file(blocker) as path:
        logging.getLogger("x").warning("still seen")
    assert path is None and "still seen" in capsys.readouterr().err


def test_onnxruntime_is_quiet_unless_verbose(tmp_path, monkeypatch):
    import onnxruntime

    severities: list[int] = []
    monkeypatch.setattr(onnxruntime, "set_default_logger_severity", severities.append)
    for verbose in (False, True):
        with logging_to_file(tmp_path, verbose=verbose):
            quiet_onnxruntime()
    assert severities == [3, 2]


def test_transformers_messages_go_to_the_log_while_routed(tmp_path, capsys):
    pytest.importorskip("transformers")
    from transformers.utils import logging as hf_logging

    from app.logging_setup import route_transformers_logs

    bars_before = hf_logging.is_progress_bar_enabled()
    with logging_to_file(tmp_path) as path:
        route_transformers_logs()
        hf_logging.get_logger("transformers.modeling_utils").warning("LOAD REPORT from the test")
        assert not hf_logging.is_progress_bar_enabled()
    assert capsys.readouterr().err == ""
    assert "LOAD REPORT from the test" in path.read_text(encoding="utf-8")
    assert hf_logging.is_progress_bar_enabled() == bars_before  # put back as it was


def test_transformers_imported_earlier_still_logs_to_the_file(noisy_status, capsys, babelfind_home):
    pytest.importorskip("transformers")
    from transformers.utils import logging as hf_logging

    hf_logging.get_logger("transformers")  # sets up its own stderr handler, as an import does
    assert main(["status"]) == 0
    assert capsys.readouterr().err == ""
    assert "LOAD REPORT" in log_path(babelfind_home).read_text(encoding="utf-8")
