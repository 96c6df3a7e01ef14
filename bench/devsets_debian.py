"""Dev sets of real documentation: translated Debian manuals and this machine's /usr/share/doc.

xling        sections of the Debian Administrator's Handbook, each in ONE language (en,
             de, fr, es, ru, it, pt-BR, ja, zh-CN), chosen where that translation is nearly
             complete; questions in six languages, each aimed at a section in another
             language, so that same-language off-topic sections pull (questions_xling.py).
english-doc  200+ real English files from /usr/share/doc as they are (HTML manuals, text,
             READMEs, copyright files, PDFs, compressed files the extractor skips), a few
             groff "mom" pages, plus four French and German chapters of the New Maintainers'
             Guide; plain-word English questions (questions_english_doc.py).
manual5      the New Maintainers' Guide (11 files: the index page, nine chapters and an
             appendix), each in one of five languages (de, fr, es, it, ru; no English
             version), among ~100 English licences, READMEs, changelogs and HTML manuals;
             English, same-language and command-lookup queries (questions_manual5.py).
faq4         the Debian FAQ (15 chapters), each chapter in one of four languages (de, fr,
             it, ja; no English version), among the English package files of the two sets
             above; questions in six languages, written as a held-out set after the search
             settings were chosen on the others (questions_faq4.py).
reference6   eight chapters of Debian Reference, each in one of six languages (it, ja, es,
             de, pt, fr; no English version), among the same English package files; questions
             in six languages, a second held-out set (questions_reference6.py).

english-doc, manual5, xling, faq4 and reference6 also carry questions nothing in their folder answers
(questions_no_answer.py, `no_answer.json`), for the "no strong match" reading.
Translated manuals come from Debian packages pinned in bench/debian_packages.py; the
package READMEs and licences from /usr/share/doc are frozen lists (bench/devsets_doc_files.py).
"""

from __future__ import annotations

import shutil
from pathlib import Path

from debian_packages import unpacked
from devsets_doc_files import ENGLISH_DOC_PACKAGE_FILES, MANUAL5_PACKAGE_FILES
from questions_english_doc import ENGLISH_DOC_QUESTIONS
from questions_faq4 import FAQ4_QUESTIONS
from questions_manual5 import MANUAL5_QUESTIONS
from questions_no_answer import (ENGLISH_DOC_NO_ANSWER, FAQ4_NO_ANSWER, MANUAL5_NO_ANSWER, REFERENCE6_NO_ANSWER,
                                 XLING_NO_ANSWER)
from questions_reference6 import REFERENCE6_QUESTIONS
from questions_xling import XLING_QUESTIONS

DOC = Path("/usr/share/doc")

# ---- xling ---------------------------------------------------------------------------

# Handbook language folders by the language code the set uses.
HANDBOOK_LOCALES = {"en": "en-US", "de": "de-DE", "fr": "fr-FR", "es": "es-ES", "ru": "ru-RU",
                    "it": "it-IT", "pt": "pt-BR", "ja": "ja-JP", "zh": "zh-CN"}
# Each section in one language only, so that a question has one answer. A translated
# section was chosen where at most ~16% of its paragraphs are still the English original
# (the 2022 translations lag the English text; the rest is in the translation's language).
HANDBOOK_SECTIONS = {
    "de": ("sect.dhcp", "sect.x509-cert", "installation", "sect.dealing-with-compromised-machine",
           "sect.virtual-private-network", "sect.book-structure", "sect.network-config"),
    "fr": ("sect.syslog", "sect.hostname-name-service", "basic-configuration", "sect.network-diagnosis-tools",
           "sect.quotas", "sect.release-lifecycle"),
    "es": ("sect.regular-upgrades", "sect.foundation-documents", "sect.common-procedures", "sect.ldap-directory",
           "sect.other-security-considerations", "sect.how-to-migrate"),
    "ru": ("sect.user-space", "sect.kernel-role-and-tasks", "sect.filesystem-hierarchy", "network-infrastructure",
           "advanced-administration"),
    "it": ("the-debian-project", "sect.why-gnu-linux", "solving-problems"),
    "pt": ("sect.selinux", "network-services", "sect.dist-upgrade", "sect.why-debian"),
    "ja": ("sect.hotplug",),
    "zh": ("sect.creating-accounts",),
    "en": ("sect.backup", "sect.apparmor", "sect.task-scheduling-cron-atd", "sect.remote-login",
           "sect.nfs-file-server", "sect.windows-file-server-with-samba", "sect.http-web-server",
           "sect.firewall-packet-filtering", "sect.kernel-compilation", "sect.virtualization",
           "sect.automated-installation", "sect.monitoring", "sect.manipulating-packages-with-dpkg",
           "sect.rights-management", "sect.package-authentication", "sect.ipv6", "sect.domain-name-servers",
           "sect.shell-environment", "sect.config-printing", "sect.config-bootloader", "sect.web-browsers"),
}


def handbook_path(section: str, language: str) -> str:
    return f"handbook/{section}.{language}.html"


def xling_documents() -> dict[str, str]:
    """{path in the set: language} for every handbook section of the set."""
    return {handbook_path(s, lang): lang for lang, sections in HANDBOOK_SECTIONS.items() for s in sections}


def build_xling(folder: Path) -> list[dict]:
    html = unpacked("debian-handbook") / "usr/share/doc/debian-handbook/html"
    for language, sections in HANDBOOK_SECTIONS.items():
        for section in sections:
            copy(html / HANDBOOK_LOCALES[language] / f"{section}.html", folder / "docs" / handbook_path(section, language))
    languages = xling_documents()
    queries = []
    for language, question, expected in XLING_QUESTIONS:
        if languages.get(expected) == language:
            raise SystemExit(f"xling: {question!r} is in the language of its answer {expected}")
        queries.append({"query": question, "expected": expected, "language": language})
    return queries


# ---- english-doc ----------------------------------------------------------------------

# Whole folders of HTML manuals and lists of single files, as they lie in /usr/share/doc.
ENGLISH_HTML_FOLDERS = ("libffi8/html", "libxslt1-dev/html/tutorial", "libexpat1-dev/expat.html")
ENGLISH_FILES = (
    # HTML manuals and single-page guides
    "bc/bc.html", "bzip2/manual.html", "fontconfig/fontconfig-user.html", "base-passwd/users-and-groups.html",
    "libxslt1-dev/html/xsltproc.html", "libxslt1-dev/html/FAQ.html", "libxslt1-dev/html/intro.html",
    "libxslt1-dev/html/python.html", "libxslt1-dev/html/extensions.html", "libxslt1-dev/html/internals.html",
    "libxslt1-dev/html/EXSLT/index.html", "libxslt1-dev/html/index.html", "libxslt1-dev/html/docs.html",
    "valgrind/html/faq.html", "valgrind/html/quick-start.html", "valgrind/html/mc-manual.html",
    "valgrind/html/cg-manual.html", "valgrind/html/hg-manual.html", "valgrind/html/manual-intro.html",
    "valgrind/html/index.html", "valgrind/html/dist.readme.html", "valgrind/html/ms-manual.html",
    "nodejs/api/readline.html", "nodejs/api/os.html", "nodejs/api/path.html", "nodejs/api/timers.html",
    "nodejs/api/index.html", "nodejs/api/dns.html", "nodejs/api/zlib.html", "nodejs/api/url.html",
    "gcc-12-base/NEWS.html",
    # PDFs (the .gz ones stay compressed, as they are on disk)
    "libtasn1-doc/libtasn1.pdf", "shared-mime-info/shared-mime-info-spec.pdf", "bzip2/manual.pdf.gz",
    "fontconfig/fontconfig-user.pdf.gz",
    # plain text, specifications, examples
    "dpkg/spec/triggers.txt", "apt/examples/configure-index", "adduser/examples/adduser.local.conf",
    "libasound2/examples/asoundrc.txt", "git/contrib/subtree/git-subtree.txt", "fontconfig/fontconfig-user.txt.gz",
    "git/RelNotes/2.30.0.txt", "git/RelNotes/2.31.0.txt", "git/RelNotes/2.32.0.txt", "git/RelNotes/2.33.0.txt",
    "git/RelNotes/2.34.0.txt", "git/RelNotes/2.35.0.txt", "git/RelNotes/2.36.0.txt", "git/RelNotes/2.37.0.txt",
    "git/RelNotes/2.38.0.txt", "git/RelNotes/2.39.0.txt",
    # compressed NEWS and changelogs, as they are
    "bash/NEWS.gz", "coreutils/NEWS.gz", "grep/NEWS.gz", "gzip/NEWS.gz", "tar/NEWS.gz", "less/NEWS.gz",
    "sed/NEWS.gz", "findutils/NEWS.gz", "git/changelog.gz", "jq/changelog.Debian.gz",
)
# groff's mom manual (issue 23: a few of its pages came first for many unrelated questions).
MOM_PAGES = ("intro.html", "letters.html", "definitions.html", "tables-of-contents.html", "color.html",
             "refer.html")
GROFF_PAGES = ("pic-1.html", "pic-2.html", "pic-3.html", "pic-4.html", "pic-5.html")
# Foreign chapters among the English files (the New Maintainers' Guide).
ENGLISH_DOC_FOREIGN = (("maint-guide-fr", "upload.fr.html"), ("maint-guide-fr", "update.fr.html"),
                       ("maint-guide-de", "checkit.de.html"), ("maint-guide-de", "modify.de.html"))


def build_english_doc(folder: Path) -> list[dict]:
    docs = folder / "docs"
    require_doc_files(doc_files_needed(["english-doc"]))
    for name in ENGLISH_HTML_FOLDERS:
        for source in sorted((DOC / name).glob("*.html")):
            copy(source, docs / "doc" / name / source.name)
    for name in ENGLISH_FILES + ENGLISH_DOC_PACKAGE_FILES:
        copy(DOC / name, docs / "doc" / name)
    groff = unpacked("groff") / "usr/share/doc/groff/html"
    for name in MOM_PAGES:
        copy(groff / "mom" / name, docs / "groff" / "mom" / name)
    for name in GROFF_PAGES:
        copy(groff / name, docs / "groff" / name)
    for package, name in ENGLISH_DOC_FOREIGN:
        copy(maint_guide_chapter(package, name), docs / "maint-guide" / name)
    return [{"query": q, "expected": paths[0], "acceptable": list(paths), "language": "en"}
            for q, *paths in ENGLISH_DOC_QUESTIONS]


def doc_files_needed(devsets: list[str]) -> tuple[str, ...]:
    """The files of /usr/share/doc that the named dev sets copy (the others need none)."""
    needed = {"english-doc": ENGLISH_FILES + ENGLISH_DOC_PACKAGE_FILES,
              "manual5": MANUAL5_DISTRACTORS + MANUAL5_PACKAGE_FILES,
              "faq4": ENGLISH_DOC_PACKAGE_FILES + MANUAL5_PACKAGE_FILES,
              "reference6": ENGLISH_DOC_PACKAGE_FILES + MANUAL5_PACKAGE_FILES}
    return tuple(dict.fromkeys(name for devset in devsets for name in needed.get(devset, ())))


def require_doc_files(names: tuple[str, ...]) -> None:
    """Every named file of /usr/share/doc is there, or one error naming what to install
    (a package's documentation lies in /usr/share/doc/<package>/)."""
    missing = [name for name in names if not (DOC / name).is_file()]
    if missing:
        packages = sorted({name.split("/", 1)[0] for name in missing})
        raise SystemExit(f"the dev set needs {len(missing)} files of {DOC} that are missing "
                         f"({', '.join(missing[:5])}...): apt-get install {' '.join(packages)}")


def maint_guide_chapter(package: str, name: str) -> Path:
    return unpacked(package) / "usr/share/doc" / package / "html" / name


# ---- manual5 ---------------------------------------------------------------------------

# The guide's 11 files, each in one language: no chapter exists in two languages or in English.
MANUAL5_CHAPTERS = {
    "de": ("start", "build"),
    "fr": ("index", "first", "checkit"),
    "it": ("modify", "upload"),
    "es": ("dother", "advanced"),
    "ru": ("dreq", "update"),
}
MANUAL5_DISTRACTORS = (
    "bc/bc.html", "bzip2/manual.html", "fontconfig/fontconfig-user.html", "base-passwd/users-and-groups.html",
    "libxslt1-dev/html/xsltproc.html", "libxslt1-dev/html/FAQ.html", "valgrind/html/faq.html",
    "valgrind/html/quick-start.html", "nodejs/api/readline.html", "nodejs/api/path.html",
    "dpkg/spec/triggers.txt", "libasound2/examples/asoundrc.txt", "git/RelNotes/2.38.0.txt",
    "git/RelNotes/2.39.0.txt", "git/contrib/subtree/git-subtree.txt",
)
MANUAL5_MOM = ("intro.html", "letters.html", "rectoverso.html")


def manual5_path(chapter: str, language: str) -> str:
    return f"maint-guide/{chapter}.{language}.html"


def manual5_documents() -> dict[str, str]:
    return {manual5_path(c, lang): lang for lang, chapters in MANUAL5_CHAPTERS.items() for c in chapters}


def build_manual5(folder: Path) -> list[dict]:
    docs = folder / "docs"
    for language, chapters in MANUAL5_CHAPTERS.items():
        for chapter in chapters:
            copy(maint_guide_chapter(f"maint-guide-{language}", f"{chapter}.{language}.html"),
                 docs / manual5_path(chapter, language))
    require_doc_files(doc_files_needed(["manual5"]))
    for name in MANUAL5_DISTRACTORS + MANUAL5_PACKAGE_FILES:
        copy(DOC / name, docs / "doc" / name)
    groff = unpacked("groff") / "usr/share/doc/groff/html/mom"
    for name in MANUAL5_MOM:
        copy(groff / name, docs / "groff" / "mom" / name)
    return [{"query": q, "expected": paths[0], "acceptable": list(paths), "language": language, "kind": kind}
            for kind, language, q, *paths in MANUAL5_QUESTIONS]


# ---- faq4 ------------------------------------------------------------------------------

# The FAQ's chapters in turn over four languages (its sections 1-14 and 15, "what's next";
# the colophon left out); each chapter in one language only.
FAQ4_CHAPTERS = ("basic-defs", "choosing", "compatibility", "contributing", "customizing", "ftparchives",
                 "getting-debian", "kernel", "nextrelease", "pkg-basics", "pkgtools", "redistributing",
                 "software", "support", "uptodate")
FAQ4_LANGUAGES = ("de", "fr", "it", "ja")


def faq4_documents() -> dict[str, str]:
    """{path in the set: language} of the FAQ's chapters."""
    languages = (FAQ4_LANGUAGES[i % len(FAQ4_LANGUAGES)] for i in range(len(FAQ4_CHAPTERS)))
    return {f"faq/{chapter}.{language}.html": language for chapter, language in zip(FAQ4_CHAPTERS, languages)}


def build_faq4(folder: Path) -> list[dict]:
    languages = faq4_documents()
    for path, language in languages.items():
        source = unpacked(f"debian-faq-{language}") / "usr/share/doc/debian/FAQ" / language / Path(path).name
        copy(source, folder / "docs" / path)
    return with_package_files("faq4", folder, languages, FAQ4_QUESTIONS)


def with_package_files(devset: str, folder: Path, languages: dict[str, str],
                       questions: list[tuple[str, str, str]]) -> list[dict]:
    """A held-out set's tail: the English package files copied in beside its chapters
    (`languages`: {path: language}), and its (language, question, answer) entries as
    queries, none in its answer's language."""
    distractors = doc_files_needed([devset])
    require_doc_files(distractors)
    for name in distractors:
        copy(DOC / name, folder / "docs" / "doc" / name)
    queries = []
    for language, question, expected in questions:
        if languages[expected] == language:
            raise SystemExit(f"{devset}: {question!r} is in the language of its answer {expected}")
        queries.append({"query": question, "expected": expected, "language": language})
    return queries


# ---- reference6 ------------------------------------------------------------------------

# Debian Reference's chapters, each in one language only (chapter number: language);
# chapters 4 and 7 are left out, their translations keep English titles and paragraphs.
REFERENCE6_CHAPTERS = {"02": "it", "03": "ja", "05": "es", "06": "de", "08": "pt", "10": "fr", "11": "de",
                       "12": "pt"}


def reference6_documents() -> dict[str, str]:
    """{path in the set: language} of Debian Reference's chapters."""
    return {f"reference/ch{number}.{language}.html": language for number, language in REFERENCE6_CHAPTERS.items()}


def build_reference6(folder: Path) -> list[dict]:
    languages = reference6_documents()
    for path, language in languages.items():
        source = unpacked(f"debian-reference-{language}") / "usr/share/debian-reference" / Path(path).name
        copy(source, folder / "docs" / path)
    return with_package_files("reference6", folder, languages, REFERENCE6_QUESTIONS)


def no_answer_questions(name: str) -> list[str]:
    return {"english-doc": ENGLISH_DOC_NO_ANSWER, "manual5": MANUAL5_NO_ANSWER,
            "xling": XLING_NO_ANSWER, "faq4": FAQ4_NO_ANSWER, "reference6": REFERENCE6_NO_ANSWER}.get(name, [])


def copy(source: Path, target: Path) -> None:
    if not source.is_file():
        raise SystemExit(f"a dev set needs {source} (a Debian/Ubuntu package's documentation)")
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)
