"""Small corpora for search tests: near-identical invoice reminders in four languages, and a
few documents of which one answers "honey" well and one weakly (weaker matches)."""

from __future__ import annotations

import random
from pathlib import Path

TEMPLATES = {
    "en": "Dear {name}, our records show that invoice {number} dated {day} March 2024 for {amount} EUR "
          "is still unpaid. Please transfer the amount within fourteen days. Kind regards, Accounts.",
    "de": "Sehr geehrte(r) {name}, laut unseren Unterlagen ist die Rechnung {number} vom {day}. März 2024 "
          "über {amount} EUR noch offen. Bitte überweisen Sie den Betrag innerhalb von vierzehn Tagen.",
    "fr": "Madame, Monsieur {name}, selon nos registres la facture {number} du {day} mars 2024 d'un "
          "montant de {amount} EUR reste impayée. Merci de régler la somme sous quatorze jours.",
    "es": "Estimado/a {name}, según nuestros registros la factura {number} del {day} de marzo de 2024 "
          "por {amount} EUR sigue pendiente de pago. Le rogamos transfiera el importe en catorce días.",
}
# bees.txt answers "honey"; wasps.txt mentions it once; the rest are unrelated, so that
# "honey" is a rare word (BM25's idf) as in a real folder
HONEY_DOCS = {
    "bees.txt": "Honey bees collect nectar from flowers and make honey in the hive. "
                "Beekeepers harvest honey in late summer.",
    "wasps.txt": "Wasps build paper nests and hunt other insects. They rarely make honey.",
    "trains.txt": "The night train crosses the steppe towards Vladivostok.",
    **{f"notes_{i}.txt": f"Meeting {i}: the budget for the new office chairs was approved." for i in range(6)},
}
# One text about a night train in three languages, for mixed-language documents (a French
# chapter with an English summary, an English guide with a French paragraph).
NIGHT_TRAIN = {
    "en": "The night train to Innsbruck leaves the main station at ten in the evening. "
          "Passengers can book a sleeping car with two or four beds. Breakfast is served "
          "before the train reaches the mountains. The journey takes eleven hours in winter. ",
    "fr": "Le train de nuit pour Innsbruck part de la gare centrale à dix heures du soir. "
          "Les voyageurs peuvent réserver une voiture-lit avec deux ou quatre couchettes. "
          "Le petit déjeuner est servi avant que le train n'arrive dans les montagnes. ",
    "de": "Der Nachtzug nach Innsbruck fährt um zehn Uhr abends vom Hauptbahnhof ab. "
          "Reisende können einen Schlafwagen mit zwei oder vier Betten buchen. ",
}
NAMES = "Müller Schmidt Dupont Martin García López Smith Jones Rossi Bianchi Novak Weber".split()


def invoice_numbers(n: int = 240) -> list[str]:
    rng = random.Random(11)
    numbers: list[str] = []
    while len(numbers) < n:
        number = f"FA-{rng.choice((2023, 2024))}-{rng.randint(1000, 9999)}"
        if number not in numbers:
            numbers.append(number)
    return numbers


def write_invoices(root: Path, n: int = 240) -> dict[str, Path]:
    """n reminders (the languages in turn); returns invoice number -> file."""
    rng = random.Random(5)
    root.mkdir(parents=True, exist_ok=True)
    files = {}
    for i, number in enumerate(invoice_numbers(n)):
        language = list(TEMPLATES)[i % len(TEMPLATES)]
        text = TEMPLATES[language].format(name=rng.choice(NAMES), number=number, day=rng.randint(1, 28),
                                          amount=f"{rng.randint(50, 5000)},{rng.randint(0, 99):02d}")
        path = root / f"reminder_{i:03d}_{language}.txt"
        path.write_text(text, encoding="utf-8")
        files[number] = path
    return files
