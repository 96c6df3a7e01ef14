"""The 'invoices' dev set: near-identical payment reminders told apart by identifiers.

    write_invoices(folder)  # -> [(query, "reminders/reminder-0001-de.txt"), ...]

240 reminders (60 each in English, German, French and Spanish) from one template per
language, differing only in invoice number, customer number, customer name, amount and
dates. Queries are identifiers alone: half invoice numbers, a quarter customer numbers,
a quarter customer names. Dense vectors barely see the difference between
"RE-2024-40718" and "RE-2024-40781"; this set measures what a keyword index adds.
"""

from __future__ import annotations

import random
from pathlib import Path

PER_LANGUAGE = 60
QUERIES = 120

FIRST = {
    "en": ["Oliver", "Emma", "Harry", "Sophie", "Jack", "Grace", "George", "Chloe", "James", "Amelia"],
    "de": ["Jürgen", "Sabine", "Klaus", "Petra", "Stefan", "Monika", "Uwe", "Birgit", "Holger", "Anja"],
    "fr": ["Camille", "Julien", "Élodie", "Mathieu", "Océane", "Nicolas", "Margaux", "Antoine", "Léa", "Hugo"],
    "es": ["Lucía", "Javier", "Carmen", "Alejandro", "Marta", "Sergio", "Paula", "Diego", "Elena", "Raúl"],
}
LAST = {
    "en": ["Whitfield", "Hargreaves", "Pemberton", "Ashworth", "Blackwood", "Fairbairn", "Thornton"],
    "de": ["Albers", "Brandtner", "Kießling", "Oberhuber", "Scheuermann", "Wendt", "Zöllner"],
    "fr": ["Delacroix", "Fontaine", "Lefebvre", "Moreau", "Rousseau", "Vasseur", "Chevalier"],
    "es": ["Etxeberria", "Fernández", "Iglesias", "Montoya", "Quintana", "Salazar", "Villalobos"],
}
TEMPLATES = {
    "en": ("Payment reminder\n\nDear {name},\n\nour records show that invoice {invoice} of {issued} "
           "for {amount} EUR is still unpaid. Your customer number is {customer}. Please transfer "
           "the amount by {due} to the account below, quoting the invoice number. If you have "
           "already paid, please disregard this letter.\n\nKind regards,\nNordlicht Office Supplies"),
    "de": ("Zahlungserinnerung\n\nSehr geehrte(r) {name},\n\nlaut unserer Buchhaltung ist die Rechnung "
           "{invoice} vom {issued} über {amount} EUR noch offen. Ihre Kundennummer lautet {customer}. "
           "Bitte überweisen Sie den Betrag bis zum {due} unter Angabe der Rechnungsnummer. Sollten Sie "
           "bereits bezahlt haben, betrachten Sie dieses Schreiben als gegenstandslos.\n\n"
           "Mit freundlichen Grüßen\nNordlicht Bürobedarf"),
    "fr": ("Relance de paiement\n\nMadame, Monsieur {name},\n\nsauf erreur de notre part, la facture "
           "{invoice} du {issued} d'un montant de {amount} EUR reste impayée. Votre numéro client est "
           "{customer}. Merci de régler ce montant avant le {due} en indiquant le numéro de facture. "
           "Si vous avez déjà payé, veuillez ne pas tenir compte de ce courrier.\n\n"
           "Cordialement,\nNordlicht Fournitures de bureau"),
    "es": ("Recordatorio de pago\n\nEstimado/a {name}:\n\nsegún nuestros registros, la factura {invoice} "
           "del {issued} por un importe de {amount} EUR sigue pendiente. Su número de cliente es "
           "{customer}. Le rogamos transfiera el importe antes del {due} indicando el número de "
           "factura. Si ya ha realizado el pago, ignore esta carta.\n\n"
           "Atentamente,\nNordlicht Material de oficina"),
}


def _reminders(rng: random.Random) -> list[dict]:
    invoices = rng.sample(range(10_000, 99_999), 4 * PER_LANGUAGE)
    customers = rng.sample(range(100_000, 999_999), 4 * PER_LANGUAGE)
    reminders = []
    for lang_index, language in enumerate(TEMPLATES):
        names = [f"{f} {l}" for f in FIRST[language] for l in LAST[language]]
        rng.shuffle(names)
        for n in range(PER_LANGUAGE):
            i = lang_index * PER_LANGUAGE + n
            day, month = rng.randint(1, 28), rng.randint(1, 12)
            reminders.append({
                "language": language,
                "name": names[n],
                "invoice": f"RE-2024-{invoices[i]}",
                "customer": f"KD-{customers[i]}",
                "amount": f"{rng.randint(40, 9_000)},{rng.randint(0, 99):02d}",
                "issued": f"{day:02d}.{month:02d}.2024",
                "due": f"{min(day + 14, 28):02d}.{month:02d}.2024",
                "path": f"reminders/reminder-{i:04d}-{language}.txt",
            })
    return reminders


def write_invoices(folder: Path) -> list[tuple[str, str]]:
    """Writes the reminders under folder/docs; returns (identifier query, expected path)."""
    rng = random.Random(2024)
    reminders = _reminders(rng)
    for r in reminders:
        target = folder / "docs" / r["path"]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(TEMPLATES[r["language"]].format(**r) + "\n", encoding="utf-8")
    asked = rng.sample(reminders, QUERIES)
    queries = []
    for n, r in enumerate(asked):
        field = "invoice" if n % 4 < 2 else ("customer" if n % 4 == 2 else "name")
        queries.append((r[field], r["path"]))
    return queries
