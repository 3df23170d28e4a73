"""The benchmark's everyday-screen styles (issue 20): chat threads in light and dark themes,
slides, settings forms with checkboxes and radio buttons, and accented European text.

Decorations (avatars, status dots, bullets, checkbox and radio glyphs, toggles) are drawn as
shapes and recorded as boxes: they are not part of the reference text.
"""

from __future__ import annotations

import random

from bench.ocr_samples import Sample, paragraphs, sample, sentence
from bench.ocr_styles_documents import font
from desktop.core.ocr.rendered_pages import Colour, Page, wrap

CONTACTS = ["Alex Morgan", "Priya Shah", "Tomas Novak", "Mei Lin", "Sam Okafor"]
CHAT_THEMES = {  # background, ink, their bubble, our bubble, our ink, muted
    "light": ((255, 255, 255), (20, 20, 20), (236, 238, 241), (0, 95, 204), (255, 255, 255),
              (110, 110, 110)),
    "dark": ((24, 25, 28), (228, 229, 231), (48, 50, 56), (38, 102, 190), (250, 250, 250),
             (150, 152, 156)),
}  # fmt: skip


def _dot(page: Page, x: int, y: int, radius: int, fill: Colour) -> None:
    box = (x - radius, y - radius, x + radius, y + radius)
    page.draw.ellipse(box, fill=fill)
    page.decoration(box)


def _chat(rng: random.Random, name: str, theme: str) -> Sample:
    background, ink, theirs, ours, our_ink, muted = CHAT_THEMES[theme]
    page = Page(900, 980, background=background, ink=ink)
    face, small, bold = font("sans", 15), font("sans", 12), font("sans-bold", 17)
    contact = rng.choice(CONTACTS)
    page.draw.rectangle((0, 0, 900, 60), fill=theirs)
    _dot(page, 36, 30, 18, (120, 150, 210))  # the contact's avatar
    page.lines(68, 18, [contact], bold)
    _dot(page, 78 + round(bold.getlength(contact)), 30, 5, (60, 200, 90))  # online
    page.lines(420, 78, ["Today"], small, fill=muted)
    y, side = 112, rng.choice(["left", "right"])
    while True:
        lines = wrap(sentence(rng, rng.randint(4, 18)), face, rng.randint(260, 420))
        height = 22 * len(lines) + 16
        if y + height + 24 > 890:
            break
        width = max(round(face.getlength(line)) for line in lines) + 24
        time = f"{rng.randint(8, 18)}:{rng.randint(10, 59)}"
        if side == "left":
            _dot(page, 36, y + 30, 16, (120, 150, 210))
            page.lines(68, y, [f"{contact.split()[0]} {time}"], small, fill=muted)
            left, fill, text_ink = 68, theirs, ink
        else:
            page.lines(880 - round(small.getlength(time)), y, [time], small, fill=muted)
            left, fill, text_ink = 880 - width, ours, our_ink
        top = y + 20
        page.draw.rounded_rectangle((left, top, left + width, top + height), 12, fill=fill)
        page.lines(left + 12, top + 8, lines, face, spacing=22 / 15, fill=text_ink)
        y = top + height + 18
        side = {"left": "right", "right": "left"}[side] if rng.random() < 0.75 else side
    page.draw.rounded_rectangle((20, 910, 830, 956), 20, outline=muted)
    page.lines(44, 924, ["Type a message"], face, fill=muted)
    page.draw.polygon([(848, 918), (880, 933), (848, 948)], fill=ours)  # the send icon
    page.decoration((848, 918, 880, 948))
    return sample(page, name, f"chat, {theme}")


def make_chat_light(rng: random.Random, name: str) -> Sample:
    return _chat(rng, name, "light")


def make_chat_dark(rng: random.Random, name: str) -> Sample:
    return _chat(rng, name, "dark")


def make_slide(rng: random.Random, name: str) -> Sample:
    """A presentation slide: title, bullets (drawn dots), a figure with its caption, footer."""
    page = Page(1280, 720, background=(248, 248, 252), ink=(30, 34, 48))
    page.draw.rectangle((0, 0, 1280, 8), fill=(44, 82, 130))
    page.lines(80, 48, [sentence(rng, rng.randint(3, 6)).rstrip(".,;:!?")], font("sans-bold", 38))
    face, figure = font("sans", 24), rng.random() < 0.5
    y, width = 150, 560 if figure else 1080
    for _ in range(rng.randint(3, 5)):
        lines = wrap(sentence(rng, rng.randint(5, 14)), face, width)[:2]
        if y + 36 * len(lines) > 600:
            break
        _dot(page, 92, y + 15, 5, (44, 82, 130))
        y = page.lines(112, y, lines, face, spacing=1.5) + 18
    if figure:
        page.draw.rectangle((760, 150, 1200, 470), fill=(208, 220, 236))
        page.draw.polygon([(780, 450), (900, 300), (1000, 380), (1180, 200), (1180, 450)],
                          fill=(120, 150, 200))  # fmt: skip
        page.lines(760, 488, [f"Figure {rng.randint(1, 9)}: {sentence(rng, 4)}"], font("sans", 16))
    footer = font("sans", 15)
    page.text(80, 676, "Northwind Traders - Quarterly review", footer, fill=(110, 110, 120))
    number = str(rng.randint(2, 40))
    page.text(1180, 676, number, footer, fill=(110, 110, 120))
    page.reference.append(f"Northwind Traders - Quarterly review {number}")
    return sample(page, name, "slide")


def _checkbox(page: Page, x: int, y: int, checked: bool) -> None:
    page.draw.rounded_rectangle((x, y, x + 16, y + 16), 3, outline=(90, 90, 90), width=2)
    if checked:
        page.draw.line([(x + 3, y + 8), (x + 7, y + 12), (x + 13, y + 4)], fill=(0, 95, 204),
                       width=3)  # fmt: skip
    page.decoration((x, y, x + 16, y + 16))


def _radio(page: Page, x: int, y: int, selected: bool) -> None:
    page.draw.ellipse((x, y, x + 16, y + 16), outline=(90, 90, 90), width=2)
    if selected:
        page.draw.ellipse((x + 4, y + 4, x + 12, y + 12), fill=(0, 95, 204))
    page.decoration((x, y, x + 16, y + 16))


FORM_OPTIONS = [
    "Send me a summary every morning",
    "Notify me when someone mentions me",
    "Include attachments in email replies",
    "Play a sound for new messages",
    "Show previews on the lock screen",
]


def make_form(rng: random.Random, name: str) -> Sample:
    """A settings form: checkboxes, a radio group, text fields, a toggle and buttons."""
    page = Page(900, 760, background=(250, 250, 250))
    face, bold = font("sans", 15), font("sans-bold", 16)
    y = page.lines(40, 30, ["Notification settings"], font("sans-bold", 24)) + 10
    y = page.lines(40, y, ["Email"], bold) + 6
    for label in rng.sample(FORM_OPTIONS, 3):
        _checkbox(page, 40, y + 2, rng.random() < 0.5)
        y = page.lines(68, y, [label], face, spacing=2.0)
    y = page.lines(40, y + 10, ["Digest frequency"], bold) + 6
    chosen = rng.randrange(3)
    for number, label in enumerate(["Daily", "Weekly", "Monthly"]):
        _radio(page, 40, y + 2, number == chosen)
        y = page.lines(68, y, [label], face, spacing=2.0)
    y = page.lines(40, y + 10, ["Profile"], bold) + 10
    for label, value in [("Display name", "Jordan Lee"), ("Time zone", "Europe/Berlin")]:
        page.text(40, y + 7, label, face)
        page.draw.rectangle((220, y, 560, y + 32), outline=(150, 150, 150), fill=(255, 255, 255))
        page.text(230, y + 7, value, face)
        page.reference.append(f"{label} {value}")
        y += 46
    page.lines(40, y + 8, ["Dark mode"], face)
    page.draw.rounded_rectangle((220, y + 6, 260, y + 28), 11, fill=(0, 95, 204))
    _dot(page, 249, y + 17, 8, (255, 255, 255))
    page.decoration((220, y + 6, 260, y + 28))
    y += 70
    for x, label in [(600, "Cancel"), (700, "Save changes")]:
        width = round(face.getlength(label)) + 28
        page.draw.rounded_rectangle((x, y, x + width, y + 34), 6, outline=(150, 150, 150))
        page.text(x + 14, y + 8, label, face)
    page.reference.append("Cancel Save changes")
    return sample(page, name, "settings form")


ACCENTED = {  # language -> (Tesseract language, words with the letters it needs)
    "German": ("deu", "über größe schön straße müssen können würde während für ändern "
               "Bürger Grüße Öffnung Äpfel Zürich Tür natürlich Lösung Prüfung Fußball "
               "Mädchen Gebäude gemäß äußerst"),
    "French": ("fra", "élève été déjà façon très préféré garçon où naïve Noël forêt château "
               "hôpital être fenêtre théâtre réunion clé à côté français événement reçu "
               "cœur sœur île"),
    "Spanish": ("spa", "años mañana niño corazón canción está también información ¿qué "
                "jamás árbol después así según difícil pequeño España montaña año señor "
                "acción"),
    "Polish": ("pol", "źródło łódź gęś żółty zażółć jaźń wiedział się będzie może jeszcze "
               "przyjaciół książka miłość ręka ściana późno ćwiczenie dzień mówić Łódź "
               "Kraków Gdańsk"),
    "Czech": ("ces", "příliš žluťoučký kůň úpěl ďábelské ódy čeština řeka můžeme děkuji "
              "přítel škola tábor měsíc ještě dům vůně zítra náměstí Brno Plzeň"),
}  # fmt: skip


def make_accented(rng: random.Random, name: str) -> Sample:
    """A document in German, French, Spanish, Polish or Czech (Tesseract gets that language)."""
    language = rng.choice(sorted(ACCENTED))
    lang, words = ACCENTED[language]
    vocabulary = words.split()
    page = Page(rng.choice([1100, 1280]), 760)
    heading = " ".join(rng.sample(vocabulary, 4)).capitalize()
    y = page.lines(40, 30, [heading], font("sans-bold", 24)) + 16
    paragraphs(page, 40, y, page.width - 80, font("sans", 16), rng, page.height - 30, vocabulary)
    return sample(page, name, "accented European", lang=lang)


SCREEN_STYLES = [make_chat_light, make_chat_dark, make_slide, make_form, make_accented]
