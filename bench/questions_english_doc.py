"""Hand-written plain-word English questions for the 'english-doc' dev set (bench/devsets_debian.py).

Each entry is (question, answering document, other documents that answer it as well).
Questions use the words a person would type, not the document's terms ("a variable
number of arguments", not "ffi_prep_cif_var"). Where several files answer (a quick start
and the full manual, two HTML pages of one example), every one is listed and any counts.
Compressed files (.gz) are in the folder as they are on disk. When the set was written
they were not indexed; since Babelfind reads them (a file inside is named
`NAME.gz/NAME`), the compressed copies of an answering manual (bzip2's manual.pdf.gz,
fontconfig's user guide as .pdf.gz and .txt.gz: the same text as the HTML listed) count
as well. The comment says where the answer is. Written and checked (by reading the
files, with grep) before any search ran on the set.
"""

D = "doc/"

ENGLISH_DOC_QUESTIONS = [
    # libffi The-Basics.html: "If the function being called is variadic (varargs) then
    # ffi_prep_cif_var must be used instead of ffi_prep_cif"
    ("call a C function that takes a variable number of arguments", D + "libffi8/html/The-Basics.html"),
    # libffi Structures.html (struct types: an ffi_type whose elements list the members);
    # Type-Example.html builds the type of struct tm
    ("describe a C struct so that it can be passed to a function chosen at run time",
     D + "libffi8/html/Structures.html", D + "libffi8/html/Type-Example.html"),
    # libffi The-Closure-API.html (2.5): closures turn a generic handler into a C function
    # pointer; Closure-Example.html shows one
    ("make a C function pointer at run time that calls back into my interpreter",
     D + "libffi8/html/The-Closure-API.html", D + "libffi8/html/Closure-Example.html"),
    # less README.Debian: less falls back to /usr/bin/editor when neither VISUAL nor EDITOR is set
    ("change the default text editor that the pager opens", D + "less/README.Debian"),
    # valgrind quick-start.html ("valgrind --leak-check=yes myprog"); mc-manual.html, Memcheck's leak detection
    ("find memory leaks in my C program",
     D + "valgrind/html/quick-start.html", D + "valgrind/html/mc-manual.html"),
    # valgrind hg-manual.html 7.4 "Detected errors: Data Races"
    ("detect two threads writing the same variable without a lock", D + "valgrind/html/hg-manual.html"),
    # valgrind cg-manual.html: "Cachegrind: a cache and branch-prediction profiler"
    ("see which lines of my program cause the most cache misses", D + "valgrind/html/cg-manual.html"),
    # valgrind ms-manual.html: Massif, a heap profiler (memory use over the run, snapshots graph)
    ("measure how much heap memory my program uses over time", D + "valgrind/html/ms-manual.html"),
    # bc.html: arbitrary precision calculator, the scale variable sets digits after the point
    ("do calculations with fifty digits after the decimal point in the terminal", D + "bc/bc.html"),
    # bzip2 manual.html 2.6 "Recovering data from damaged files" (bzip2recover)
    ("get my data back from a corrupted compressed archive", D + "bzip2/manual.html",
     D + "bzip2/manual.pdf.gz/manual.pdf"),
    # fontconfig-user.html: fonts.conf, /etc/fonts/conf.d, properties such as antialias, hinting;
    # fontconfig README.Debian: "antialiasing, autohinting and sub-pixel rendering. You can
    # configure it through ... dpkg-reconfigure fontconfig-config"
    ("configure which fonts programs use and turn off font smoothing",
     D + "fontconfig/fontconfig-user.html", D + "fontconfig/README.Debian",
     D + "fontconfig/fontconfig-user.pdf.gz/fontconfig-user.pdf", D + "fontconfig/fontconfig-user.txt.gz/fontconfig-user.txt"),
    # base-passwd users-and-groups.html: "Group adm is used for system monitoring tasks.
    # Members of this group can read many log files in /var/log"
    ("which group lets a user read the system log files", D + "base-passwd/users-and-groups.html"),
    # dpkg spec/triggers.txt: a package declares interest in a directory, and dpkg runs its
    # postinst when another package installs files there
    ("let my package run a command whenever another package installs files into a directory",
     D + "dpkg/spec/triggers.txt"),
    # git contrib/subtree/git-subtree.txt: merge another project into a subdirectory, with its history
    ("put another project into a subfolder of my git repository and keep its history",
     D + "git/contrib/subtree/git-subtree.txt"),
    # git RelNotes/2.38.0.txt: 'The "scalar" addition from Microsoft is now part of the core Git'
    ("in which release did the tool for very large repositories from Microsoft become part of git",
     D + "git/RelNotes/2.38.0.txt"),
    # libxslt xsltproc.html: the command line tool applying a stylesheet to XML documents
    ("turn an XML file into HTML with a stylesheet from the shell", D + "libxslt1-dev/html/xsltproc.html"),
    # libxslt tutorial/libxslttutorial.html: a basic C program using libxslt to apply a stylesheet
    ("write a small C program that applies an XSLT stylesheet", D + "libxslt1-dev/html/tutorial/libxslttutorial.html"),
    # libxslt python.html: the Python bindings of libxslt
    ("use the XSLT library from Python scripts", D + "libxslt1-dev/html/python.html"),
    # expat reference.html: "The document is fed to the parser in pieces, so you can start
    # parsing before you have all the document" (index.html is a link to it on disk, a copy here)
    ("parse an XML document that arrives in chunks over the network", D + "libexpat1-dev/expat.html/reference.html",
     D + "libexpat1-dev/expat.html/index.html"),
    # groff mom letters.html: "Writing letters" with the mom macros
    ("typeset a business letter with groff", "groff/mom/letters.html"),
    # groff pic-1.html "Why PIC?": box-and-arrow diagrams in troff documents; pic-3.html basic objects
    ("draw boxes and arrows in a troff document", "groff/pic-1.html", "groff/pic-3.html"),
    # nodejs api/readline.html: reading input a line at a time, rl.question / rl.prompt
    ("read what the user types line by line in a Node program", D + "nodejs/api/readline.html"),
    # nodejs api/timers.html: setTimeout(callback[, delay[, ...args]])
    ("run a JavaScript function once after a delay", D + "nodejs/api/timers.html"),
    # nodejs api/dns.html: dns.lookup(hostname[, options], callback)
    ("find the IP address of a host name in Node", D + "nodejs/api/dns.html"),
    # nodejs api/os.html: os.cpus(), os.freemem()
    ("how many processor cores and how much free memory the machine has, from JavaScript",
     D + "nodejs/api/os.html"),
    # catdoc README: "CATDOC is program which reads MS-Word file and prints readable ASCII text"
    ("convert an old Microsoft Word document to plain text", D + "catdoc/README"),
    # ca-certificates README.Debian: "How to install local CA certificates":
    # copy the .crt into /usr/local/share/ca-certificates/ and re-run update-ca-certificates
    ("make my system trust my company's own certificate authority", D + "ca-certificates/README.Debian"),
    # cscope README: "a text screen based source browsing tool" (where is this function called?)
    ("browse a big C code base to see where a function is called", D + "cscope/README"),
    # file README.Debian: "How users can inject their own magics": add them to /etc/magic
    ("teach the file command to recognise my own file format", D + "file/README.Debian"),
    # libcap2-bin README.Debian: "Example: how to remove the SUID root bit from /bin/ping?" (setcap cap_net_raw)
    ("let ping work for normal users without making it setuid root", D + "libcap2-bin/README.Debian"),
    # libatk-wrapper-java README.Debian: accessibility is disabled in openjdk by default; to
    # re-enable it uncomment assistive_technologies=... in accessibility.properties
    ("turn on screen reader support for Java programs", D + "libatk-wrapper-java/README.Debian"),
    # shared-mime-info-spec.pdf: the magic rules that detect a file's type from its first bytes
    ("how does the desktop guess a file's type from its contents", D + "shared-mime-info/shared-mime-info-spec.pdf"),
    # gcc README.Debian: several GCC versions coexist; gcc-defaults selects the default one by
    # symlinks (cpp's and g++'s README.Debian are the same file)
    ("several versions of the C compiler are installed, which one is used by default",
     D + "gcc/README.Debian", D + "cpp/README.Debian", D + "g++/README.Debian"),
]
