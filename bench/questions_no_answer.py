"""Questions nothing in a dev set's folder answers (issue 23, item 1), for bench_search.py's
"no strong match" reading.

Two kinds: everyday questions (cooking, travel, health, sport), and plausible technical
questions whose answer is absent from the folder (other operating systems, tools and
services no file there covers). Each list was checked against its folder before any
search ran: the topic's words were searched for with grep (case ignored) in every file,
and the few files that hold one were read: none answers the question (the comment names
them; checked again on the frozen file lists of bench/devsets_doc_files.py). english-doc
and manual5 share the everyday questions; the technical ones are written for each folder.
xling's are asked in the handbook's own languages (and English), so that a question with
no answer in one language meets text in all the others; grepped the same way, in each
question's language and in English.
"""

EVERYDAY = [
    "chocolate cake recipe with strawberries",  # no "cake"; "recipe": groff mom refer.html (footnote how-tos)
    "how long should I boil an egg for a soft yolk",  # "boil": valgrind quick-start ("boils down to"), no eggs
    "best time of year to plant tomatoes in the garden",
    "how to get a red wine stain out of a carpet",
    "train times from Paris to Lyon tomorrow morning",
    "what is the capital of Australia",  # "Australia": a conference in Melbourne cited by the bzip2 manual
    "how many calories are in a banana",
    "tips for answering questions in a job interview",
    "how do I teach my puppy to sit",
    "who won the football world cup in 1998",
    "knitting pattern for a warm wool scarf",
    "how to tie a bow tie",
    "cheap flights to Lisbon in May",  # "flight": git RelNotes 2.37 ("pre-flight states")
    "symptoms of the flu in small children",  # "flu" matches only inside other words (flush, influence)
]

ENGLISH_DOC_NO_ANSWER = EVERYDAY + [
    "set up a Wi-Fi hotspot on my Android phone",  # nodejs os.html: os.platform() may return 'android'
    "reset a forgotten Windows administrator password",
    "install Microsoft Office on a Mac",  # "Office": a word in licences, no installation
    "turn on two-factor authentication for my bank account",
    "recover deleted photos from an iPhone",
    "make my laptop screen brighter",
    "write an SQL query with a left outer join of two tables",
    "train an image classifier neural network with PyTorch",
    "configure an ingress controller in Kubernetes",
    "export an Excel spreadsheet to CSV",  # "spreadsheet": libxslt python.html, bzip2 manual; not Excel export
    "speed up a slow WordPress website",
    "center a div horizontally with CSS flexbox",
    "configure nginx as a reverse proxy for my web application",
    "resize a logical volume with LVM",  # "lvm" only inside "llvm" (a copyright file, gcc NEWS)
    "set a static IP address on my network card",
    "open a port in the iptables firewall",  # iproute2 README.Debian: tc's ipt action needs iptables installed
]

MANUAL5_NO_ANSWER = EVERYDAY + [
    "build an RPM package for Fedora",
    "publish my Python package on PyPI",
    "package my desktop application as a Flatpak",
    "write a Dockerfile for my web application",
    "set up a Jenkins server for continuous integration",
    "convert a Debian package into an RPM with alien",
    "reset a forgotten Windows administrator password",
    "install Microsoft Office on a Mac",
    "configure an ingress controller in Kubernetes",
    "center a div horizontally with CSS flexbox",
    "configure nginx as a reverse proxy for my web application",
    "recover deleted photos from an iPhone",
]

# The Debian Administrator's Handbook in nine languages (xling). Its chapters cover servers,
# networks, packages and security; none of these topics.
XLING_NO_ANSWER = [
    "recette de gâteau au chocolat avec des fraises",
    "combien de temps faut-il cuire un œuf à la coque",
    "Wann ist die beste Zeit, Tomaten im Garten zu pflanzen",  # "tomate" only in "automate"
    "Wie bekomme ich einen Rotweinfleck aus dem Teppich",
    "horarios de trenes de Madrid a Barcelona para mañana",  # "tren" only inside other words
    "cuántas calorías tiene un plátano",
    "как научить щенка команде сидеть",
    "кто выиграл чемпионат мира по футболу в 1998 году",
    "schema a maglia per una sciarpa di lana calda",
    "sintomas da gripe em crianças pequenas",
    "how to tie a bow tie",
    "cheap flights to Lisbon in May",  # "flight": one passing word in the hotplug chapter (ja)
    "Wie exportiere ich eine Excel-Tabelle als CSV",  # "excel" only in "excellent"
    "cómo centrar un div horizontalmente con CSS flexbox",
    "train an image classifier neural network with PyTorch",
    "как восстановить удалённые фотографии с iPhone",
    "come pubblicare il mio pacchetto Python su PyPI",
    "como configurar um controlador de ingress no Kubernetes",
    "make my Android phone a Wi-Fi hotspot",
    "accélérer un site WordPress trop lent",
    "Wie installiere ich Microsoft Office auf einem Mac",  # "mac": MAC addresses only
]

# faq4: the Debian FAQ in four languages among English package files; asked in six
# languages, grepped in the FAQ's four and in English.
FAQ4_NO_ANSWER = [
    "chocolate cake recipe with strawberries",
    "recette de la ratatouille provençale",
    "Wie trainiere ich für einen Marathon?",
    "как перевести деньги на банковскую карту",
    "what are the opening hours of the Louvre museum",
    "set up a WireGuard VPN between two offices",
    "change the desktop wallpaper on Windows 11",
    "¿Cómo instalo una aplicación de la App Store en mi iPad?",
    "come si configura una stampante su macOS",  # "macOS": enchant's Apple Spell, fakeroot's pointer; no printers
    "how do I update the firmware of my home router",  # "firmware": a package name in ftparchives.fr
]

# reference6: Debian Reference in six languages among English package files; asked in six
# languages, grepped in the chapters' languages and in English.
REFERENCE6_NO_ANSWER = [
    "best exercises to strengthen my lower back",
    "Wie koche ich ein cremiges Risotto?",
    "Quels sont les meilleurs hôtels à Lisbonne ?",
    "¿Cómo se calcula el impuesto sobre la renta en España?",
    "Come si insegna a un cane a non abbaiare?",
    "Как вырастить помидоры на балконе?",
    "configure Active Directory group policies on Windows Server",
    "set up an iPhone for a child with screen time limits",
    "Wie ändere ich das Hintergrundbild unter macOS?",  # "macOS": enchant's Apple Spell, llvm, fakeroot; no wallpaper
    "edit a video and add subtitles to it",  # "video": a camera downloader in ch11, MIME types in ch06; no editing
]
