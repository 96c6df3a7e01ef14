"""Search-quality dev sets, built from files on this machine and ../shared/data.

    python bench/devsets.py                 # writes bench/out/devsets/<name>/{docs/,queries.json}

Eight sets, so that nothing is tuned to one (bench/bench_search.py runs them):

mixed     a real folder of files nobody here wrote (the libffi HTML manual, the libtasn1
          and shared-mime-info PDF specifications with dot-leader tables of contents,
          package READMEs and licences, gettext catalogues turned back into .po text)
          plus news articles from PUD, one language per article, 11 languages. The 44
          questions (questions_mixed.py) are written by hand in English: 34 about
          non-English articles, 10 about the real documents.
invoices  240 generated payment reminders in 4 languages, alike but for their numbers,
          names and amounts; the 120 queries are identifiers (an invoice number, a
          customer number, a customer's name) -- a test a keyword index should pass.
stsb      cross-lingual STS-B (test split): English queries, their paraphrase in one of
          10 other languages as the target, 800 distractors (English sentences and
          sentences in the targets' languages from other rows).
xling, english-doc, manual5, faq4, reference6
          translated Debian manuals and /usr/share/doc (bench/devsets_debian.py says
          what each holds); each also has questions nothing in it answers
          (no_answer.json; xling's in the handbook's own languages).

Every set is a folder of documents and a list of queries, each with its expected
document (`acceptable` lists every document that answers it, when several near-identical
ones do; `language` is the question's language where the set says). The build is
deterministic, and `manifest.json` holds a digest the benchmark uses to know when its
cached index is out of date.
"""

from __future__ import annotations

import csv
import gettext
import hashlib
import json
import random
import re
import shutil
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

from devsets_debian import (build_english_doc, build_faq4, build_manual5, build_reference6,  # noqa: E402
                            build_xling, doc_files_needed, no_answer_questions, require_doc_files)
from devsets_invoices import write_invoices  # noqa: E402
from questions_mixed import DOC_QUESTIONS, NEWS_QUESTIONS  # noqa: E402

DATA = REPO.parent / "shared" / "data"
if not DATA.is_dir():
    DATA = Path("/work/shared/data")
OUT = REPO / "bench" / "out" / "devsets"
DOC = Path("/usr/share/doc")
LOCALE = Path("/usr/share/locale")
DEVSETS = ("mixed", "invoices", "stsb", "xling", "english-doc", "manual5", "faq4", "reference6")

# One language per article, in turn; English articles are distractors for English queries.
ARTICLE_LANGUAGES = ("ru", "de", "fr", "es", "zh", "ar", "hi", "it", "pt", "tr", "en")
ARTICLE_MIN_SENTENCES = 4
READMES = ("grep/README", "jq/README", "bc/README", "gettext/README", "e2fsprogs/README",
           "fakeroot/README", "git/README.md", "libglib2.0-0/README.md", "fonts-dejavu-core/README.md",
           "python3-yaml/README.md", "zstd/TESTING.md", "libgdk-pixbuf-2.0-0/README.md")
LICENCES = ("bash", "coreutils", "grep", "jq", "git", "zstd", "libffi8", "gzip", "sed", "tar",
            "wget", "curl", "openssl", "python3", "libsqlite3-0", "bc")
CATALOGUES = [(domain, lang) for domain in ("sed", "tar", "wget") for lang in ("de", "fr", "es", "ru")]
CATALOGUE_MESSAGES = 80  # the first messages of each catalogue, to keep the set small
SPECS = ("libtasn1-doc/libtasn1.pdf", "shared-mime-info/shared-mime-info-spec.pdf")
STSB_LANGUAGES = ("de", "es", "fr", "it", "nl", "pl", "pt", "ru", "zh", "ja")
STSB_QUERIES, STSB_DISTRACTOR_ROWS = 300, 400


# ---- mixed ----------------------------------------------------------------------------


def pud_articles() -> list[tuple[str, list[str]]]:
    """(language, sentences) per article: consecutive PUD sentences, whole source documents,
    at least ARTICLE_MIN_SENTENCES each, languages in turn."""
    folder = DATA / "corpus" / "pud-parallel"
    texts = {lang: dict(_tsv(folder / f"pud.{lang}.tsv")) for lang in ARTICLE_LANGUAGES}
    groups: list[list[str]] = [[]]
    previous = None
    for sentence_id, _ in _tsv(folder / "pud.en.tsv"):
        document = sentence_id[:6]  # "n01001011": source document n01001, sentence 011
        if groups[-1] and document != previous and len(groups[-1]) >= ARTICLE_MIN_SENTENCES:
            groups.append([])
        groups[-1].append(sentence_id)
        previous = document
    return [(ARTICLE_LANGUAGES[i % len(ARTICLE_LANGUAGES)],
             [texts[ARTICLE_LANGUAGES[i % len(ARTICLE_LANGUAGES)]][s] for s in group])
            for i, group in enumerate(groups)]


def _tsv(path: Path) -> list[tuple[str, str]]:
    return [tuple(line.rstrip("\n").split("\t", 1)) for line in path.open(encoding="utf-8") if "\t" in line]


def article_path(index: int, language: str) -> str:
    return f"news/article-{index:03d}-{language}.txt"


def catalogue_text(domain: str, language: str) -> str:
    """A .mo catalogue written back as .po text (what msgunfmt prints), first messages only."""
    with (LOCALE / language / "LC_MESSAGES" / f"{domain}.mo").open("rb") as f:
        catalog = gettext.GNUTranslations(f)._catalog  # noqa: SLF001 - the parsed entries
    header = catalog.get("", "")
    entries = [f'msgid ""\nmsgstr ""\n' + "".join(f'"{_po_escape(line)}\\n"\n' for line in header.splitlines())]
    messages = [(k, v) for k, v in catalog.items() if isinstance(k, str) and k]
    for msgid, msgstr in messages[:CATALOGUE_MESSAGES]:
        entries.append(f'msgid "{_po_escape(msgid)}"\nmsgstr "{_po_escape(msgstr)}"\n')
    return "\n".join(entries)


def _po_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def build_mixed(folder: Path) -> list[tuple[str, str]]:
    docs = folder / "docs"
    for name in sorted((DOC / "libffi8" / "html").glob("*.html")):
        _copy(name, docs / "manuals" / "libffi" / name.name)
    for spec in SPECS:
        _copy(DOC / spec, docs / "specs" / Path(spec).name)
    for readme in READMES:
        source = DOC / readme
        suffix = source.suffix if source.suffix == ".md" else ".txt"
        _copy(source, docs / "readme" / f"{source.parent.name}-{source.stem}{suffix}")
    for package in LICENCES:
        _copy(DOC / package / "copyright", docs / "licences" / f"{package}-copyright.txt")
    for domain, language in CATALOGUES:
        target = docs / "locale" / f"{domain}-{language}.po.txt"  # .po is not an indexed type
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(catalogue_text(domain, language), encoding="utf-8")
    articles = pud_articles()
    for index, (language, sentences) in enumerate(articles):
        target = docs / article_path(index, language)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(" ".join(sentences) + "\n", encoding="utf-8")
    queries = [(q, article_path(i, articles[i][0])) for i, q in NEWS_QUESTIONS]
    for i, _ in NEWS_QUESTIONS:
        if articles[i][0] == "en":
            raise SystemExit(f"question about article {i} targets an English article")
    return queries + [(q, path) for q, path in DOC_QUESTIONS]


def _copy(source: Path, target: Path) -> None:
    if not source.is_file():
        raise SystemExit(f"dev set 'mixed' needs {source} (a Debian/Ubuntu package's documentation)")
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)


# ---- stsb -------------------------------------------------------------------------------


def _stsb(language: str) -> list[list[str]]:
    path = DATA / "multilingual-sts" / "stsb-multi-mt" / f"stsb-{language}-test.csv"
    return list(csv.reader(path.open(encoding="utf-8")))


def _words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.lower()))


def _similar(a: set[str], b: set[str]) -> bool:
    return len(a & b) / max(1, len(a | b)) >= 0.5


def build_stsb(folder: Path) -> list[tuple[str, str]]:
    english = _stsb("en")
    other = {lang: _stsb(lang) for lang in STSB_LANGUAGES}
    rng = random.Random(11)
    rows = [i for i, r in enumerate(english) if float(r[2]) >= 4.0]
    seen: set[str] = set()
    query_rows = [i for i in rows if not (english[i][0] in seen or seen.add(english[i][0]))][:STSB_QUERIES]
    query_words = [_words(english[i][0]) for i in query_rows]
    rest = [i for i in range(len(english)) if i not in set(query_rows)]
    rng.shuffle(rest)
    distractor_rows = []
    for i in rest:  # no distractor may paraphrase a query, or the target is ambiguous
        words = [_words(english[i][0]), _words(english[i][1])]
        if not any(_similar(w, q) for w in words for q in query_words):
            distractor_rows.append(i)
        if len(distractor_rows) == STSB_DISTRACTOR_ROWS:
            break
    documents: list[tuple[str, str]] = []  # (text, tag)
    queries = []
    for n, i in enumerate(query_rows):
        language = STSB_LANGUAGES[n % len(STSB_LANGUAGES)]
        documents.append((other[language][i][1], f"target-{n}"))
        # a query is typed into the search box, whose syntax reads a lone " as an open phrase
        queries.append((english[i][0].replace('"', ""), f"target-{n}"))
    for n, i in enumerate(distractor_rows):
        language = STSB_LANGUAGES[n % len(STSB_LANGUAGES)]
        documents.append((english[i][1], "distractor"))
        documents.append((other[language][i][0], "distractor"))
    order = list(range(len(documents)))
    rng.shuffle(order)  # file names say nothing about which document is a target
    paths = {}
    for position, d in enumerate(order):
        text, tag = documents[d]
        path = f"sentences/s{position:04d}.txt"
        (folder / "docs" / "sentences").mkdir(parents=True, exist_ok=True)
        (folder / "docs" / path).write_text(text + "\n", encoding="utf-8")
        paths[tag] = path
    return [(query, paths[tag]) for query, tag in queries]


# ---- all --------------------------------------------------------------------------------

BUILDERS = {"mixed": build_mixed, "invoices": write_invoices, "stsb": build_stsb, "xling": build_xling,
            "english-doc": build_english_doc, "manual5": build_manual5,
            "faq4": build_faq4, "reference6": build_reference6}


def _written(docs: Path, document: str) -> bool:
    """A document of the set is a file, or the file inside a compressed one ("a.pdf.gz/a.pdf")."""
    path = docs / document
    return path.is_file() or (path.parent.suffix == ".gz" and path.parent.is_file())


def build(name: str, out: Path = OUT) -> Path:
    """Builds one dev set into out/name (replacing it); returns the folder."""
    folder = out / name
    shutil.rmtree(folder, ignore_errors=True)
    (folder / "docs").mkdir(parents=True)
    queries = [q if isinstance(q, dict) else {"query": q[0], "expected": q[1]} for q in BUILDERS[name](folder)]
    for query in queries:
        for expected in query.get("acceptable", [query["expected"]]):
            if not _written(folder / "docs", expected):
                raise SystemExit(f"{name}: expected document {expected} was not written")
    (folder / "queries.json").write_text(json.dumps(queries, ensure_ascii=False, indent=1), encoding="utf-8")
    unanswerable = no_answer_questions(name)
    if unanswerable:
        (folder / "no_answer.json").write_text(json.dumps(unanswerable, ensure_ascii=False, indent=1),
                                               encoding="utf-8")
    digest = hashlib.sha256()
    for path in sorted((folder / "docs").rglob("*")):
        if path.is_file():
            digest.update(str(path.relative_to(folder)).encode() + path.read_bytes())
    files = sum(1 for p in (folder / "docs").rglob("*") if p.is_file())
    (folder / "manifest.json").write_text(json.dumps(
        {"name": name, "digest": digest.hexdigest()[:16], "documents": files, "queries": len(queries),
         "no_answer": len(unanswerable)}))
    return folder


def main(argv: list[str] | None = None) -> int:
    names = (argv if argv is not None else sys.argv[1:]) or list(DEVSETS)
    require_doc_files(doc_files_needed(names))  # one message naming every package to install
    for name in names:
        folder = build(name)
        manifest = json.loads((folder / "manifest.json").read_text())
        print(f"{name}: {manifest['documents']} documents, {manifest['queries']} queries -> {folder}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
