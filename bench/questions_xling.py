"""Hand-written questions for the 'xling' dev set (bench/devsets_debian.py).

Each question is (its language, the question, the one handbook section that answers it).
The section is always in another language than the question, and every question
language (en, fr, de, es, ru, it) also has off-topic sections of its own language in the
set, so a question is pulled towards its language and has to be answered across it.
Questions use the words a person would use, not the section's title. The comment says
where the answer is (the handbook's section numbers, Debian Administrator's Handbook for
Bullseye; the section was checked to be translated in the set's language, or noted).
Written and checked against the documents before any search ran on the set.
"""

H = "handbook/"

XLING_QUESTIONS = [
    # ---- English questions, answers in other languages --------------------------------
    # 10.8 DHCP: isc-dhcp-server hands out addresses, /etc/dhcp/dhcpd.conf
    ("en", "how do I hand out IP addresses automatically to the machines on my network", H + "sect.dhcp.de.html"),
    # 10.2.1 Creating gratis trusted certificates: certbot, Let's Encrypt, Apache plugin
    ("en", "get a free trusted certificate for my website", H + "sect.x509-cert.de.html"),
    # 4 Installation (intro): 256 MB of RAM and 2 GB of disk minimum, 2 GB / 10 GB recommended
    ("en", "how much memory and disk space does installing Debian need", H + "installation.de.html"),
    # 14.7 Dealing with a Compromised Machine: 14.7.2 unplug it from the network, 14.7.3 keep evidence
    ("en", "my server was broken into by an attacker, what should I do now", H + "sect.dealing-with-compromised-machine.de.html"),
    # 9.5.2.2 Syntax of Actions / 9.5 syslog: sending logs to a central machine ("@host"),
    # accepting them there ($ModLoad imudp, $UDPServerRun 514 in /etc/rsyslog.conf)
    ("en", "collect the log messages of all my machines on one central log server", H + "sect.syslog.fr.html"),
    # 9.9 Quotas: usrquota/grpquota in /etc/fstab, soft and hard limits, edquota
    ("en", "limit how much disk space each user is allowed to use", H + "sect.quotas.fr.html"),
    # 1.6.3 Migration to Testing: a package moves from Unstable to Testing after some days without RC bugs
    ("en", "how does a new package get from unstable into testing", H + "sect.release-lifecycle.fr.html"),
    # 6.8 Keeping a System Up to Date: apticron mails the list of pending upgrades daily
    ("en", "send me an email every day listing the packages that can be upgraded", H + "sect.regular-upgrades.es.html"),
    # 1.2.1 The Commitment towards Users: the social contract, "Debian will remain 100% free"
    ("en", "what does Debian promise its users in its social contract", H + "sect.foundation-documents.es.html"),
    # 3.2.1 Survey and Identify Services: nmap from another machine, ss -anptu, ps auxw
    ("en", "find out which services an old server runs before replacing it", H + "sect.how-to-migrate.es.html"),
    # B.5.1 Process: fork clones a process, the child gets a new pid, exec replaces its memory
    ("en", "what happens when a process creates a child copy of itself", H + "sect.user-space.ru.html"),
    # 12.1.1 Software RAID: RAID-1 mirroring, mdadm --create
    ("en", "combine two hard disks into a mirrored volume so that one can fail", H + "advanced-administration.ru.html"),
    # 1.1 What Is Debian? (sidebar): Debra + Ian = Debian
    ("en", "where does the name Debian come from", H + "the-debian-project.it.html"),
    # 14.5 Introduction to SELinux: security contexts, the kernel asks SELinux before each system call
    ("en", "mandatory access control where every process runs with a security context", H + "sect.selinux.pt.html"),
    # 6.7 Upgrading from One Stable Distribution to the Next: release notes, sources.list, apt full-upgrade
    ("en", "upgrade my Debian system to the next major release", H + "sect.dist-upgrade.pt.html"),
    # 9.11.2-9.11.4 hotplug and udev: rules in /etc/udev/rules.d/ give a device a stable name
    # (the section's first paragraph is still English in the Japanese translation)
    ("en", "give a USB disk the same device name every time it is plugged in", H + "sect.hotplug.ja.html"),
    # 8.5 Creating Accounts: adduser, /etc/skel, adduser user group (the audio group)
    ("en", "create a new user account and let that person use the sound card", H + "sect.creating-accounts.zh.html"),
    # 7.2.3 Asking for Help on a Mailing List, 7.2.4 Reporting a Bug (reportbug)
    ("en", "where do I ask for help and how do I report a bug in a package", H + "sect.common-procedures.es.html"),
    # ---- French questions ---------------------------------------------------------------
    # 9.10.1 Backing Up with rsync (dirvish, rsync over ssh)
    ("fr", "Comment sauvegarder mes fichiers avec rsync sur une autre machine ?", H + "sect.backup.en.html"),
    # 9.2.1.1 Key-Based Authentication: ssh-keygen, ~/.ssh/authorized_keys
    ("fr", "Comment se connecter à un serveur sans taper de mot de passe, avec une clé SSH ?", H + "sect.remote-login.en.html"),
    # 11.5 Setting Up Windows Shares with Samba: smb.conf, smbpasswd
    ("fr", "Comment partager un dossier avec des postes Windows ?", H + "sect.windows-file-server-with-samba.en.html"),
    # 10.3.1 OpenVPN: server and client configuration, tun0, push route
    ("fr", "Comment relier deux réseaux par un tunnel chiffré avec OpenVPN ?", H + "sect.virtual-private-network.de.html"),
    # 10.1 Gateway: masquerading, DNAT and SNAT, port forwarding
    ("fr", "À quoi sert la traduction d'adresses (NAT) sur une passerelle ?", H + "network-infrastructure.ru.html"),
    # B.2.1 The Root Directory: /usr, /usr/local, /var, /etc ... per the FHS
    ("fr", "À quoi sert chaque répertoire à la racine du système, comme /usr ou /var ?", H + "sect.filesystem-hierarchy.ru.html"),
    # 9.7.1 Format of a crontab File
    ("fr", "Comment lancer une tâche automatiquement tous les jours à la même heure ?", H + "sect.task-scheduling-cron-atd.en.html"),
    # 2.4.1 Commercial and Community Driven Distributions
    ("fr", "Pourquoi choisir une distribution communautaire plutôt qu'une distribution commerciale ?", H + "sect.why-debian.pt.html"),
    # ---- German questions ---------------------------------------------------------------
    # 11.1.2 Configuring Virtual Domains: virtual_alias_domains, virtual_mailbox_domains in Postfix
    ("de", "Wie richte ich mit Postfix E-Mail-Adressen für mehrere virtuelle Domains ein?", H + "network-services.pt.html"),
    # 11.4 NFS File Server: /etc/exports, mounting on the client
    ("de", "Wie gebe ich Verzeichnisse per NFS für andere Rechner frei?", H + "sect.nfs-file-server.en.html"),
    # 8.1.1 Setting the Default Language (locales), 8.1.2 Configuring the Keyboard
    ("de", "Wie stelle ich die Systemsprache und das Tastaturlayout um?", H + "basic-configuration.fr.html"),
    # 10.9.3 Sniffers: tcpdump and wireshark
    ("de", "Wie schneide ich den Netzwerkverkehr mit, um ihn zu analysieren?", H + "sect.network-diagnosis-tools.fr.html"),
    # 8.10 Compiling a Kernel: make deb-pkg builds the kernel as a Debian package
    ("de", "Wie übersetze ich einen eigenen Linux-Kernel und mache daraus ein Paket?", H + "sect.kernel-compilation.en.html"),
    # 12.3.2 Preseeding Debian-Installer: a preseed file answers the installer's questions
    ("de", "Wie installiere ich viele Rechner automatisch, ohne die Fragen des Installers zu beantworten?", H + "sect.automated-installation.en.html"),
    # 11.7 LDAP Directory: slapd, migrationtools, NSS and PAM for accounts
    ("de", "Wie verwalte ich Benutzerkonten zentral in einem Verzeichnisdienst?", H + "sect.ldap-directory.es.html"),
    # B.4.1 Driving the Hardware: lspci, lsusb, lspcmcia
    ("de", "Mit welchen Befehlen sehe ich, welche PCI- und USB-Geräte erkannt wurden?", H + "sect.kernel-role-and-tasks.ru.html"),
    # ---- Spanish questions --------------------------------------------------------------
    # 11.2.3 Configuring Virtual Hosts (Apache)
    ("es", "¿Cómo sirvo varios sitios web desde un mismo servidor Apache?", H + "sect.http-web-server.en.html"),
    # 14.2 Firewall or Packet Filtering: nftables, nft syntax, rules at boot
    ("es", "¿Cómo configuro un cortafuegos para filtrar los paquetes que entran en la máquina?", H + "sect.firewall-packet-filtering.en.html"),
    # 12.2.3 Virtualization with KVM: virt-install, 12.2.3.4 Managing Machines with virsh
    ("es", "¿Cómo creo y administro máquinas virtuales con KVM?", H + "sect.virtualization.en.html"),
    # 8.3 Setting the Hostname and Configuring the Name Service: /etc/hostname, /etc/hosts, nsswitch.conf
    ("es", "¿Cómo cambio el nombre de la máquina y dónde se resuelven los nombres de los equipos?", H + "sect.hostname-name-service.fr.html"),
    # 12.4 Monitoring: Munin graphs, Nagios alerts
    ("es", "¿Qué herramientas dibujan gráficas del uso de mis servidores y avisan si un servicio cae?", H + "sect.monitoring.en.html"),
    # 5.4.1 Installing Packages (dpkg -i), 5.4.3 Querying dpkg's Database (dpkg -L, dpkg -c)
    ("es", "¿Cómo instalo un paquete .deb descargado y veo qué archivos contiene?", H + "sect.manipulating-packages-with-dpkg.en.html"),
    # 8.2.2 Wireless Interface (wpa-ssid, wpa-psk), 8.2.4 Connecting through an ADSL Modem
    ("es", "¿Cómo configuro una red inalámbrica o un módem ADSL?", H + "sect.network-config.de.html"),
    # 7.1 Documentation Sources: manual pages, info documents, HOWTOs
    ("es", "¿Dónde encuentro documentación: páginas de manual, documentos info, guías HOWTO?", H + "solving-problems.it.html"),
    # ---- Russian questions --------------------------------------------------------------
    # 9.3.1 Owners and Permissions (chmod, chown), 9.3.2 ACLs (setfacl, getfacl)
    ("ru", "Как настроить права доступа к файлам и списки контроля доступа?", H + "sect.rights-management.en.html"),
    # 6.6 Checking Package Authenticity: signed Release files, apt's keyring
    ("ru", "Как APT проверяет, что пакеты не были подменены?", H + "sect.package-authentication.en.html"),
    # 10.7.2 Configuring bind: zones in named.conf.local, zone files
    ("ru", "Как настроить собственный DNS-сервер для своего домена?", H + "sect.domain-name-servers.en.html"),
    # 14.4 Introduction to AppArmor: profiles, aa-enforce, aa-genprof
    ("ru", "Как ограничить, к каким файлам программа имеет доступ, с помощью профиля?", H + "sect.apparmor.en.html"),
    # 10.6.1 Tunneling: IPv6 through a tunnel broker when the ISP has no IPv6
    ("ru", "Как получить IPv6, если провайдер его не предоставляет?", H + "sect.ipv6.en.html"),
    # 2.3 Why a GNU/Linux Distribution? (Linux is only a kernel; Hurd and BSD considered)
    ("ru", "Почему систему правильнее называть GNU/Linux, а не просто Linux?", H + "sect.why-gnu-linux.it.html"),
    # 8.8.2 GRUB 2 Configuration: /etc/default/grub, update-grub
    ("ru", "Как изменить настройки загрузчика GRUB?", H + "sect.config-bootloader.en.html"),
    # ---- Italian questions --------------------------------------------------------------
    # 8.7 Printer Configuration: CUPS, http://localhost:631
    ("it", "Come si configura una stampante?", H + "sect.config-printing.en.html"),
    # 13.5 Web Browsers: Firefox ESR, Chromium, Epiphany
    ("it", "Quali browser web si possono usare su Debian?", H + "sect.web-browsers.en.html"),
    # 8.6 Shell Environment: /etc/profile, ~/.bashrc, bash completion, aliases
    ("it", "Dove si impostano le variabili d'ambiente e gli alias della shell per tutti gli utenti?", H + "sect.shell-environment.en.html"),
    # 14.6.1 Inherent Risks of Web Applications: SQL injection, keeping web applications updated
    ("it", "Quali rischi corrono le applicazioni web, come le iniezioni SQL?", H + "sect.other-security-considerations.es.html"),
]
