"""Hand-written queries for the 'manual5' dev set (bench/devsets_debian.py).

The set holds the Debian New Maintainers' Guide with each of its 11 files in one of five
languages (bench/devsets_debian.py, MANUAL5_CHAPTERS: start and build in German; index,
first and checkit in French; modify and upload in Italian; dother and advanced in
Spanish; dreq and update in Russian), among English distractors.

Each entry is (kind, question language, query, answering chapter, other chapters that
answer it too). Kinds: "english" (an English question about a foreign chapter),
"native" (a question in one of the five languages, in the chapter's own language or in
another of the five), "command" (a command or option as a user pastes it). The comment
gives the guide's section (checked in the English original and present, translated, in
the set's chapter; the Spanish and Russian chapters keep ~15% of their paragraphs in
English, as the translations do). Written and checked before any search ran on the set.
"""

M = "maint-guide/"

MANUAL5_QUESTIONS = [
    # ---- English questions about foreign chapters ----------------------------------------
    # 1.2 Programs needed for development (build-essential, devscripts, debhelper, quilt ...)
    ("english", "en", "which packages must I install before I start making Debian packages", M + "start.de.html"),
    # 1.4 Where to ask for help: debian-mentors mailing list, IRC
    ("english", "en", "who can I ask when I get stuck while packaging my first program", M + "start.de.html"),
    # 2.2 Choose your program: check the WNPP bugs and that nobody packages it already
    ("english", "en", "how do I check that nobody else is already packaging the program I want",
     M + "first.fr.html"),
    # 2.6 Package name and version: lower case letters, digits, + - . ; upstream version rules
    ("english", "en", "which characters are allowed in a package name and its version", M + "first.fr.html"),
    # 3.2 Fixing upstream bugs: a new quilt patch, quilt refresh, quilt header
    ("english", "en", "fix a bug in the original source code with a patch", M + "modify.it.html"),
    # 3.3 Installation of files to their destination: support $(DESTDIR) in the Makefile
    ("english", "en", "the program installs into /usr/local, how do I make it install into the package instead",
     M + "modify.it.html"),
    # 4.1 control: Source, Build-Depends, Depends, Description fields
    ("english", "en", "where do I declare the packages needed to build mine", M + "dreq.ru.html"),
    # 4.2 copyright: the machine-readable copyright file (DEP-5)
    ("english", "en", "how to write down the licence and the authors of the software I package", M + "dreq.ru.html"),
    # 5.3 conffiles: files in /etc are conffiles, kept over upgrades
    ("english", "en", "keep the user's changes to a configuration file in /etc when the package is upgraded",
     M + "dother.es.html"),
    # 5.4 package.cron.*: debian/package.cron.daily etc. installed into /etc/cron.*
    ("english", "en", "make my package run a script every day", M + "dother.es.html"),
    # 6.4 pbuilder package: building in a clean chroot
    ("english", "en", "build my package in a clean minimal system to find missing build dependencies",
     M + "build.de.html"),
    # 7.4 Using lintian: checks the package for common mistakes
    ("english", "en", "check my package for common policy mistakes before I upload it", M + "checkit.fr.html"),
    # 9.1 Uploading to the Debian archive (dput, the sponsor)
    ("english", "en", "send my finished package to the Debian archive", M + "upload.it.html"),
    # 8.3 New upstream release: uupdate, uscan, the new orig tarball
    ("english", "en", "the author released a new version, how do I update my package to it", M + "update.ru.html"),
    # A.2 Managing debian/package.symbols; A.1 Shared libraries (soname)
    ("english", "en", "keep track of which functions a shared library exports between versions",
     M + "advanced.es.html"),
    # ---- questions in the chapters' languages --------------------------------------------
    # 1.2 Programs needed for development (same language)
    ("native", "de", "Welche Programme brauche ich, um Debian-Pakete zu bauen?", M + "start.de.html"),
    # 7.4 Using lintian (same language)
    ("native", "fr", "Comment vérifier mon paquet avec lintian avant de l'envoyer ?", M + "checkit.fr.html"),
    # 3.1 Setting up quilt, 3.2 Fixing upstream bugs (same language)
    ("native", "it", "Come si applica una correzione ai sorgenti originali con quilt?", M + "modify.it.html"),
    # 5.21 watch: the file uscan reads to find new upstream versions (8.3 uses it)
    ("native", "es", "¿Para qué sirve el archivo watch del directorio debian?", M + "dother.es.html",
     M + "update.ru.html"),
    # 4.3 changelog: the format of a debian/changelog entry (same language)
    ("native", "ru", "Как оформить запись в файле changelog пакета?", M + "dreq.ru.html"),
    # 2.7 Setting up dh_make, 2.8 Initial non-native Debian package (German question, French chapter)
    ("native", "de", "Wie erzeuge ich mit dh_make das erste Gerüst meines Pakets?", M + "first.fr.html"),
    # 4.4 rules: targets of debian/rules, the default dh rules file (French question, Russian chapter)
    ("native", "fr", "Comment écrire le fichier rules qui construit le paquet ?", M + "dreq.ru.html"),
    # 6.3 debuild command (Spanish question, German chapter)
    ("native", "es", "¿Cómo construyo el paquete con debuild?", M + "build.de.html"),
    # A.4 Building a shared library package (Italian question, Spanish chapter)
    ("native", "it", "Come si crea il pacchetto di una libreria condivisa?", M + "advanced.es.html"),
    # 9.1 Uploading to the Debian archive (Russian question, Italian chapter)
    ("native", "ru", "Как загрузить готовый пакет в архив Debian?", M + "upload.it.html"),
    # ---- commands and options, as pasted -------------------------------------------------
    # 6.1 Complete (re)build: dpkg-buildpackage -us -uc
    ("command", None, "dpkg-buildpackage -us -uc", M + "build.de.html"),
    # 2.8 Initial non-native Debian package: dh_make -f ../gentoo-0.9.12.tar.gz (6.1 repeats it)
    ("command", None, "dh_make -f ../gentoo-0.9.12.tar.gz", M + "first.fr.html", M + "build.de.html"),
    # 7.4 Using lintian: lintian -i -I --show-overrides (6.4's pbuilder hook runs the same)
    ("command", None, "lintian -i -I --show-overrides", M + "checkit.fr.html", M + "build.de.html"),
    # 3.1 Setting up quilt: QUILT_PATCHES="debian/patches" in ~/.quiltrc
    ("command", None, "QUILT_PATCHES=debian/patches", M + "modify.it.html"),
    # 8.1 New Debian revision: "dch -i" adds a changelog entry
    ("command", None, "dch -i", M + "update.ru.html"),
    # A.2 Managing debian/package.symbols: dpkg-gensymbols -v1.1 -plibfoo1 ...
    ("command", None, "dpkg-gensymbols -plibfoo1", M + "advanced.es.html"),
    # 2.7 Setting up dh_make: export DEBEMAIL DEBFULLNAME in ~/.bashrc
    ("command", None, "export DEBEMAIL DEBFULLNAME", M + "first.fr.html"),
    # 7.1 Suspicious changes ... 7.3 maintainer scripts: update-alternatives(1) in coordination with ...
    ("command", None, "update-alternatives", M + "checkit.fr.html"),
]
