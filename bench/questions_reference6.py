"""Hand-written queries for the 'reference6' dev set (bench/devsets_debian.py).

The set holds eight chapters of Debian Reference (package `debian-reference-*` 2.100),
each in one language: packages in Italian, system initialisation in Japanese, network
configuration in Spanish, network applications and data conversion in German,
I18N/L10N and programming in Portuguese, data management in French (REFERENCE6_CHAPTERS),
among the English package READMEs, licences and manuals of english-doc and manual5. It
was written on 8 December 2026, after every search setting had been chosen on the other
seven sets, as a second held-out set.

Each entry is (question language, query, answering chapter); no question is in its
answer's language. The comment gives the chapter's section and a term grepped in it
(count of lines). Questions 1-10 were written first and asked once through the command
line of a new user's library (the same chapters among 120 other /usr/share/doc files);
11-22 were written and checked after that, before any search ran on them.
"""

R = "reference/"

REFERENCE6_QUESTIONS = [
    # 3.1 the bootstrap process, 3.2 systemd init
    ("en", "what happens during boot and how does systemd start the services", R + "ch03.ja.html"),
    # 5.2-5.4 network configuration (NetworkManager, ifupdown, ip)
    ("en", "set up a static IP address for my network interface", R + "ch05.es.html"),
    # 10.2 Sauvegarde et restauration ("backup|rsync" 60)
    ("de", "Wie sichere ich meine Daten und stelle eine Sicherung wieder her?", R + "ch10.fr.html"),
    # 11.1 Werkzeuge für Textkonvertierung ("iconv" 15)
    ("es", "¿Cómo convierto un texto de una codificación de caracteres a otra?", R + "ch11.de.html"),
    # 8.1 O locale, 8.2 A entrada do teclado ("locale" 44)
    ("it", "Come si imposta la lingua e la tastiera del sistema?", R + "ch08.pt.html"),
    # 2.2 Operazioni base per la gestione dei pacchetti
    ("fr", "Comment installer et supprimer des paquets avec apt ?", R + "ch02.it.html"),
    # 6.2 Das Mail-System ("postfix|exim" 108)
    ("ru", "Как настроить почтовый сервер?", R + "ch06.de.html"),
    # 12.5 Depuração ("gdb" 47)
    ("en", "which tools help me debug a C program", R + "ch12.pt.html"),
    # 6.3 Der Server für Fernzugriff (SSH)
    ("fr", "Comment configurer un serveur SSH pour l'accès à distance ?", R + "ch06.de.html"),
    # 5.2 la configuración moderna de red en el escritorio ("NetworkManager" 4)
    ("de", "Wie konfiguriere ich das Netzwerk mit NetworkManager?", R + "ch05.es.html"),
    # 10.3 Infrastructure de sécurité des données: GnuPG, somme de contrôle MD5 ("gpg|md5sum|sha256sum" 46)
    ("en", "verify a file with a GPG signature and compute its checksum", R + "ch10.fr.html"),
    # 3.3 kernel messages, 3.4 system messages ("journalctl|dmesg" 9)
    ("es", "¿Cómo consulto los mensajes del núcleo y el registro del sistema con journalctl?", R + "ch03.ja.html"),
    # 6.4 Der Print-Server und Hilfsprogramme ("cups" 21)
    ("ru", "Как настроить сервер печати CUPS?", R + "ch06.de.html"),
    # 11.4 Druckfähige Daten: Ghostscript ("ghostscript|ps2pdf" 19)
    ("fr", "Comment convertir un document PostScript en PDF avec Ghostscript ?", R + "ch11.de.html"),
    # 12.9 Criar um pacote Debian ("dpkg-buildpackage|debuild|pacote Debian" 8)
    ("it", "Come si crea un pacchetto Debian dal codice sorgente?", R + "ch12.pt.html"),
    # 2.6 Ripristino da un sistema con problemi ("ripristino|recover" 11)
    ("en", "recover a broken system after a failed package upgrade", R + "ch02.it.html"),
    # 12.1 O script de shell ("shell script|bash" 24)
    ("ru", "Как писать сценарии для командной оболочки?", R + "ch12.pt.html"),
    # 10.5 Git ("git commit|git clone" 6)
    ("es", "¿Cómo uso git para llevar el control de versiones de mis archivos?", R + "ch10.fr.html"),
    # 8.2 keyboard input: IBus, input methods ("ibus|fcitx|método de entrada|input method" 79)
    ("de", "Wie tippe ich chinesische oder japanische Zeichen mit einer Eingabemethode?", R + "ch08.pt.html"),
    # 5.6 Infraestructura Netfilter ("iptables|nftables|netfilter" 36)
    ("fr", "Comment configurer le pare-feu avec netfilter et iptables ?", R + "ch05.es.html"),
    # 11.6 Werkzeuge für Grafikdaten ("imagemagick|convert" 11)
    ("en", "convert images between graphic formats on the command line", R + "ch11.de.html"),
    # 12.6 build tools: make ("make|Makefile" 43)
    ("it", "Come posso compilare un programma con make?", R + "ch12.pt.html"),
]
