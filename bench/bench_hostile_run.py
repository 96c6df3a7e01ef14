"""A hostile-input run, as an attacker would try it on a fresh home: does every good
document end up searchable, and what does the whole run cost in memory?

    PYTHONPATH=. python bench/bench_hostile_run.py [--work /tmp/hostile] [--good 200]

Builds (seeded) a folder of `--good` ordinary documents, each holding one word no other
has, among the hostile files of tests/hostile_docs.py at full size: zip bombs (a 2 GiB
member, a lying directory, 64 members of 16 MiB of zeros), page-tree PDFs (99,000 shared
pages, 200,000 references), 2,000,000 nested <div>s (22 MB), 9,000 nested <div>s that
lexbor parses for seconds, names that collide, a FIFO and a link to /dev/zero. Then,
each a fresh `babelfind` process on one fresh home:

1. `index` (the models are installed in the same run: first use);
2. every good document is looked up by its word (`search --mode keyword --json`);
3. side files damaged: 8 KiB of 0xFF inside the keyword index, the FAISS file cut in
   half, a folder where the hubness file was; `search` again (must answer, one note per
   repair) and `index` again; every good document looked up again.

Peak memory is the largest sum of resident memory over the `babelfind` process and its
children (the document reader), sampled every 50 ms from /proc.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from hostile_docs import (  # noqa: E402
    DOCX_MEMBERS,
    colliding_names,
    epub_members,
    nested_html,
    shared_page_pdf,
    wide_page_tree_pdf,
    write_zip_with_raw_member,
    zip_bytes,
)

CLI = [sys.executable, "-c", "import sys; from app.cli import main; sys.exit(main(sys.argv[1:]))"]
WORDS = ("honey bees glacier river bread mountain valley harbour lantern orchard copper "
         "meadow thunder violin compass").split()


def write_corpus(folder: Path, good: int) -> dict[str, str]:
    """The hostile folder; returns {good document name: its own word}."""
    rng = random.Random(24)
    folder.mkdir(parents=True)
    words = {}
    for i in range(good):
        name = f"good-{i:04d}.{('txt', 'md', 'html')[i % 3]}"
        word = f"qx{i:04d}walrus"
        body = " ".join(rng.choice(WORDS) for _ in range(rng.randint(60, 400)))
        text = f"{body} {word} {body[:200]}."
        (folder / name).write_text(f"<html><body><p>{text}</p></body></html>" if name.endswith("html") else text,
                                   encoding="utf-8")
        words[name] = word
    docx_rest = [(k, v) for k, v in DOCX_MEMBERS.items() if k != "word/document.xml"]
    write_zip_with_raw_member(folder / "bomb-2gib.docx", docx_rest, "word/document.xml", 2 << 30)
    write_zip_with_raw_member(folder / "bomb-lying.docx", docx_rest, "word/document.xml", 1 << 30,
                              declared_size=1000)
    (folder / "sixty-four-zero-members.epub").write_bytes(zip_bytes(
        epub_members() | {f"OEBPS/zeros-{i}.bin": bytes(16 << 20) for i in range(64)}))
    shared_page_pdf(folder / "pages-99000.pdf")
    wide_page_tree_pdf(folder / "kids-200000.pdf")
    (folder / "nested-2000000.html").write_bytes(nested_html(2_000_000))
    (folder / "nested-9000.html").write_bytes(nested_html(9_000))
    colliding_names(folder / "collisions")
    if hasattr(os, "mkfifo"):
        os.mkfifo(folder / "pipe.txt")
    if os.path.exists("/dev/zero"):
        os.symlink("/dev/zero", folder / "zero.txt")
    return words


class TreeMemory:
    """Peak of the summed RSS of a process and its descendants, sampled from /proc."""

    def __init__(self, pid: int):
        self.pid, self.peak_kib, self._done = pid, 0, threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        while not self._done.is_set():
            self.peak_kib = max(self.peak_kib, sum(_rss_kib(p) for p in _tree(self.pid)))
            time.sleep(0.05)

    def stop(self) -> int:
        self._done.set()
        self._thread.join()
        return self.peak_kib


def _tree(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as f:
                    parent = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            children.setdefault(parent, []).append(int(entry))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, []))
    return found


def _rss_kib(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def babelfind(home: Path, *args: str) -> tuple[int, str, str, float, int]:
    """(exit code, stdout, stderr, seconds, peak KiB of the process tree)."""
    env = dict(os.environ, BABELFIND_HOME=str(home))
    env.pop("BABELFIND_PREPARED_MODELS", None)
    started = time.perf_counter()
    child = subprocess.Popen([*CLI, *args], env=env, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, errors="replace")
    memory = TreeMemory(child.pid)
    out, err = child.communicate()
    return child.returncode, out, err, time.perf_counter() - started, memory.stop()


def unfound(home: Path, words: dict[str, str]) -> list[str]:
    """Good documents that their own word does not find first, in one process."""
    script = ("import json, sys\nfrom pathlib import Path\nfrom engine.library import open_without_model\n"
              "library = open_without_model()\nwords = json.loads(sys.stdin.read())\n"
              "missing = [n for n, w in words.items() if not (h := library.search(w, k=1, mode='keyword'))"
              " or Path(h[0].path).name != n]\nprint(json.dumps(missing))\n")
    env = dict(os.environ, BABELFIND_HOME=str(home))
    done = subprocess.run([sys.executable, "-c", script], input=json.dumps(words), capture_output=True,
                          text=True, env=env, cwd=REPO, check=True)
    return json.loads(done.stdout)


def damage_side_files(home: Path) -> None:
    indexes = home / "indexes"
    keywords = indexes / "keywords.sqlite"
    with open(keywords, "r+b") as f:
        f.seek(keywords.stat().st_size // 2)
        f.write(b"\xff" * 8192)
    for faiss in indexes.glob("generation-*.faiss"):
        faiss.write_bytes(faiss.read_bytes()[: faiss.stat().st_size // 2])
    for hubness in indexes.glob("generation-*.hubness.npz"):
        hubness.unlink()
        hubness.mkdir()


def row(step: str, code: int, seconds: float, peak_kib: int, note: str) -> None:
    print(f"| {step} | {code} | {seconds:.0f} s | {peak_kib / 1024:.0f} MiB | {note} |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--work", type=Path, default=None)
    parser.add_argument("--good", type=int, default=200)
    args = parser.parse_args()
    work = Path(args.work or tempfile.mkdtemp(prefix="babelfind-hostile-"))
    shutil.rmtree(work, ignore_errors=True)
    corpus, home = work / "corpus", work / "home"
    words = write_corpus(corpus, args.good)
    print(f"{args.good} good documents among the hostile ones in {corpus}\n")
    print("| step | exit | time | peak memory (process tree) | outcome |\n|---|---|---|---|---|")
    code, out, err, seconds, peak = babelfind(home, "index", str(corpus), "--json")
    summary = json.loads(out) if code == 0 else {}
    skipped = {Path(s["path"]).name: s["reason"] for s in summary.get("skipped", [])}
    row("index, fresh home (models installed first)", code, seconds, peak,
        f"{summary.get('indexed')} indexed, {len(skipped)} skipped")
    missing = unfound(home, words)
    print(f"| every good document by its word | | | | {len(words) - len(missing)}/{len(words)} found |")
    damage_side_files(home)
    code, out, err, seconds, peak = babelfind(home, "search", "qx0001walrus", "--mode", "keyword", "-k", "1")
    notes = [line for line in err.splitlines() if line.startswith("babelfind: note:")]
    row("search after damaging the side files", code, seconds, peak,
        f"{'good-0001' in out and 'found' or 'NOT found'}; {len(notes)} note line(s)")
    for note in notes:
        print(f"|  | | | | `{note}` |")
    code, out, err, seconds, peak = babelfind(home, "index", str(corpus), "--json")
    again = json.loads(out) if code == 0 else {}
    row("index again", code, seconds, peak, f"{again.get('unchanged')} unchanged, {again.get('indexed')} indexed")
    missing_again = unfound(home, words)
    print(f"| every good document by its word, again | | | | {len(words) - len(missing_again)}/{len(words)} found |")
    print("\nskip reasons of the hostile files:\n")
    for name, reason in sorted(skipped.items()):
        if not name.startswith("good-"):
            print(f"- `{name!r}`: {reason}")
    if missing or missing_again:
        print(f"\nNOT FOUND: {sorted(set(missing) | set(missing_again))[:10]}")


if __name__ == "__main__":
    main()
