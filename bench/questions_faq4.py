"""Hand-written queries for the 'faq4' dev set (bench/devsets_debian.py).

The set holds the Debian FAQ with each of its 15 chapters in one of four languages
(bench/devsets_debian.py, FAQ4_CHAPTERS: de, fr, it, ja, in turn; no English version),
among the English package READMEs, licences and manuals of english-doc and manual5. It
was written on 6 December 2026 as a held-out set: after every search setting of the other
six sets had been chosen, so that nothing was tuned to it.

Each entry is (question language, query, answering chapter). The comment gives the FAQ's
section (read in the English original, and the key term grepped in the set's chapter).
Written and checked before any search ran on the set.
"""

F = "faq/"

FAQ4_QUESTIONS = [
    # 7.12 How do I put a package on hold? ("hold" 14 times in the French chapter)
    ("en", "how do I stop a package from being upgraded", F + "pkg-basics.fr.html"),
    # 8.5 How can I find out what package produced a particular file? (dpkg -S)
    ("en", "which installed package owns this file on my system", F + "pkgtools.it.html"),
    # 14.1 Can I make and sell Debian CDs?
    ("en", "is it allowed to sell CDs of Debian", F + "redistributing.ja.html"),
    # 6.2.2 Where do these codenames come from? 6.3 What about "sid"?
    ("en", "where do the release code names like sid come from", F + "ftparchives.fr.html"),
    # 10.4 Can I safely de-install an old kernel package, and if so, how?
    ("en", "remove an old kernel package safely", F + "kernel.ja.html"),
    # 5.6 Why do I get "ld: cannot find -lfoo" messages when compiling programs?
    ("en", "why do I get cannot find -lfoo when linking a program", F + "software.de.html"),
    # 1.7 How does one pronounce Debian and what does this word mean?
    ("en", "how do you pronounce the word Debian", F + "basic-defs.de.html"),
    # 12.5 How do I report a bug in Debian? (reportbug)
    ("de", "Wie melde ich einen Fehler in Debian?", F + "support.fr.html"),
    # 13.1 How can I become a Debian member/Debian developer?
    ("fr", "Comment devenir développeur Debian ?", F + "contributing.ja.html"),
    # 11.5 How does a Debian system boot?
    ("fr", "Comment le système Debian démarre-t-il ?", F + "customizing.de.html"),
    # 4.5 Can I use Red Hat packages (".rpm" files) on my Debian GNU/Linux system? (alien)
    ("de", "Kann ich Red-Hat-Pakete (.rpm) unter Debian installieren?", F + "compatibility.it.html"),
    # 9.5 Can I automatically update the system? (cron-apt)
    ("de", "Wie halte ich mein System automatisch auf dem neuesten Stand?", F + "uptodate.it.html"),
    # 3.1 Which Debian distribution (stable/testing/unstable) is better for me?
    ("es", "¿Qué distribución debo instalar, stable, testing o unstable?", F + "choosing.fr.html"),
    # 2.3 Where/how can I get the Debian installation images?
    ("es", "¿Cómo descargo las imágenes de instalación de Debian?", F + "getting-debian.it.html"),
    # 7.10 What is meant by Pre-Depends?
    ("es", "¿Qué significa Pre-Depends en un paquete?", F + "pkg-basics.fr.html"),
    # 11.1 How can I ensure that all programs use the same paper size? (papersize)
    ("ru", "Как сделать так, чтобы все программы использовали один и тот же размер бумаги?",
     F + "customizing.de.html"),
    # 1.7 How does one pronounce Debian?
    ("it", "Come si pronuncia Debian?", F + "basic-defs.de.html"),
]
