"""The package READMEs and copyright files of the english-doc and manual5 dev sets, by path
under /usr/share/doc.

Chosen once (1 December 2026, Debian 12) by walking /usr/share/doc in name order:
README, README.md, README.Debian, README.txt, TODO, AUTHORS and THANKS files of the
packages (git and nodejs left out, their manuals are in the sets already), and the
copyright files of every 7th (english-doc) or 9th (manual5) package, none over 12 KB.
Frozen here because installing any package changes what such a walk finds, and a dev
set must not change under its questions. A file missing on another machine is an error
(bench/devsets_debian.copy), never a silent substitute.
"""

ENGLISH_DOC_PACKAGE_FILES = (  # README-like files, then copyright files
    "abiword-common/README.Debian", "adduser/TODO", "adwaita-icon-theme/AUTHORS", "antiword/TODO",
    "appstream/copyright", "base-files/README", "base-passwd/README", "bash/copyright", "bc/AUTHORS",
    "bc/README", "build-essential/AUTHORS", "ca-certificates-java/README.Debian",
    "ca-certificates/README.Debian", "catdoc/README", "catdoc/TODO", "coreutils/AUTHORS",
    "coreutils/README.Debian", "cpp/README.Debian", "cscope/AUTHORS", "cscope/README", "cscope/TODO",
    "dash/copyright", "dbus/README.Debian", "dconf-gsettings-backend/copyright", "debconf/README.Debian",
    "debian-archive-keyring/README", "dirmngr/AUTHORS", "dirmngr/README.Debian", "dirmngr/TODO",
    "dirmngr/copyright", "distro-info-data/README.Debian", "dpkg/AUTHORS", "e2fsprogs/README", "ed/AUTHORS",
    "emacsen-common/copyright", "fakeroot/README", "file/README.Debian", "findutils/TODO",
    "fontconfig/README.Debian", "fonts-dejavu-core/AUTHORS", "fonts-dejavu-core/README.md",
    "fonts-dejavu-core/copyright", "fonts-noto-core/README.md", "g++/README.Debian", "g++/copyright",
    "gcc/README.Debian", "gdb/README.Debian", "gettext-base/copyright", "gettext/README",
    "glib-networking-services/copyright", "gnupg/README.Debian", "gnupg/TODO",
    "google-cloud-cli-app-engine-java/copyright", "google-cloud-cli-gke-gcloud-auth-plugin/copyright",
    "gpg-agent/README.Debian", "gpg-wks-client/copyright", "grep/AUTHORS", "grep/README",
    "groff-base/README.Debian", "groff-base/TODO", "gsettings-desktop-schemas/AUTHORS",
    "gsettings-desktop-schemas/README", "gsettings-desktop-schemas/copyright", "gzip/TODO",
    "hicolor-icon-theme/README", "icu-devtools/copyright", "iproute2/README.Debian", "iso-codes/TODO",
    "javascript-common/README.Debian", "jq/README", "less/README.Debian", "libalgorithm-diff-perl/README",
    "libalgorithm-diff-perl/copyright", "libappstream4/copyright", "libaspell15/copyright",
    "libatk-wrapper-java/README.Debian", "libatm1/copyright", "libavahi-client3/README",
    "libavahi-common-data/README", "libavahi-common-data/copyright", "libavahi-common3/README",
    "libbz2-1.0/copyright", "libcap2-bin/README.Debian", "libcap2-bin/copyright", "libcbor0.8/README.md",
    "libcommons-cli-java/copyright", "libctf-nobfd0/copyright", "libdatrie1/README", "libdav1d6/copyright",
    "libdconf1/README", "libdebuginfod1/copyright", "libedit2/copyright", "libenchant-2-2/README",
    "liberror-perl/copyright", "libexpat1/AUTHORS", "libfakeroot/README", "libfakeroot/copyright",
    "libfontconfig1/copyright", "libfreetype6/README", "libfribidi0/README", "libgd3/copyright",
    "libgeronimo-interceptor-3.0-spec-java/copyright", "libglvnd0/copyright", "libgsf-1-common/copyright",
    "libidn2-dev/copyright", "libjbig0/copyright", "libjs-underscore/copyright", "libmagic1/copyright",
    "libmnl0/copyright", "libncursesw5-dev/copyright", "libnspr4/copyright", "libopencsd1/copyright",
    "libpackagekit-glib2-18/copyright", "libpfm4/copyright", "libplexus-component-annotations-java/copyright",
    "libpolkit-agent-1-0/copyright", "libpsl5/copyright", "libreadline8/copyright", "libsemanage2/copyright",
    "libslf4j-java/copyright", "libsource-highlight-common/copyright", "libssl3/copyright",
    "libtasn1-6/copyright", "libthai0/copyright", "libtk8.6/copyright", "libunwind8/copyright",
    "libwayland-client0/copyright", "libxcb-dri3-0/copyright", "libxcb-shape0/copyright",
    "libxcb1-dev/copyright",
)

MANUAL5_PACKAGE_FILES = (  # README-like files, then copyright files
    "adduser/TODO", "antiword/TODO", "apt-transport-https/copyright", "base-files/README",
    "binutils-common/copyright", "build-essential/AUTHORS", "ca-certificates-java/README.Debian",
    "catdoc/copyright", "coreutils/AUTHORS", "coreutils/README.Debian", "dbus/README.Debian",
    "debconf/README.Debian", "debian-archive-keyring/copyright", "distro-info-data/README.Debian",
    "dpkg/AUTHORS", "e2fsprogs/README", "fakeroot/README", "findutils/TODO", "fonts-dejavu-core/copyright",
    "fonts-noto-core/README.md", "g++/README.Debian", "gcc/README.Debian", "gcc/copyright", "gettext/README",
    "gnupg/README.Debian", "gnupg/TODO", "google-cloud-cli-app-engine-go/copyright",
    "google-cloud-cli-kpt/copyright", "gpgsm/copyright", "groff-base/README.Debian", "groff-base/TODO",
    "hostname/copyright", "iproute2/README.Debian", "jq/README", "less/README.Debian",
    "libalgorithm-diff-perl/README", "libalgorithm-merge-perl/copyright", "libatk-wrapper-java/README.Debian",
    "libavahi-common-data/README", "libavahi-common3/copyright", "libbpf1/copyright",
    "libcap2-bin/README.Debian", "libcap2-bin/copyright", "libcommons-lang3-java/copyright",
    "libdatrie1/README", "libdconf1/README", "libdebuginfod-common/copyright", "libegl1/copyright",
    "libexpat1-dev/copyright", "libfakeroot/README", "libfontconfig1/copyright", "libfribidi0/README",
    "libfribidi0/THANKS", "libfribidi0/TODO", "libgdk-pixbuf-2.0-0/README.md",
    "libgdk-pixbuf2.0-bin/copyright", "libgeronimo-interceptor-3.0-spec-java/README.Debian",
    "libglib2.0-0/README.md", "libglu1-mesa/copyright", "libglx0/copyright", "libgmp10/README.Debian",
    "libgoffice-0.10-10/copyright", "libgsf-1-common/copyright", "libgtk-3-common/README.md",
    "libguice-java/copyright", "libicu-dev/copyright", "libjansson4/copyright", "libjson-c5/copyright",
    "libllvm15/copyright", "libmagic1/copyright", "libmpc3/copyright", "libnpth0/copyright",
    "libonig5/copyright", "libpam-cap/copyright", "libpciaccess0/copyright",
    "libplexus-cipher-java/copyright", "libpolkit-agent-1-0/copyright", "librav1e0/copyright",
    "libsensors-config/copyright", "libssh2-1/copyright", "libtasn1-6/copyright", "libtiff6/copyright",
    "libwagon-provider-api-java/copyright", "libxau6/copyright", "libxcb-render-util0/copyright",
)
