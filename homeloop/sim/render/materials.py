"""Colours of what the renderer draws (docs/skills.md, "Captures and perception").

Every triangle of the scene gets one albedo (linear RGB, 0-1) from what it
is: the architecture by kind, fixtures by kind, and people by body part,
their clothes' colours read from the character's ``appearance`` text
(homeloop/catalog/people.yaml), so a masked frame visibly replaces something
that was not flat. Furniture, objects and devices are drawn as their visual
parts (homeloop/core/visuals), each part's colour the material its role
names in the catalog's palettes (homeloop/catalog/materials.yaml); a part
playing ``tinted`` takes its object's colour word from :data:`COLOUR_WORDS`.
Kinds the tables do not name get a stable muted colour derived from the name.
"""

from __future__ import annotations

import hashlib

RGB = tuple[float, float, float]

#: Architecture and surroundings.
ARCHITECTURE: dict[str, RGB] = {
    "wall": (0.82, 0.80, 0.76),
    "ceiling": (0.90, 0.90, 0.88),
    "floor": (0.55, 0.43, 0.32),
    "outdoor_floor": (0.52, 0.52, 0.50),
    "ground": (0.30, 0.40, 0.24),
    "door": (0.50, 0.34, 0.20),
    "door_frame": (0.88, 0.87, 0.84),
    "garage_door": (0.70, 0.70, 0.68),
    "glass": (0.70, 0.82, 0.90),
    "device": (0.93, 0.93, 0.93),
    "doormat": (0.35, 0.25, 0.18),
    "robot": (0.78, 0.80, 0.84),
    "robot_head": (0.20, 0.22, 0.25),
}

#: The sky seen through windows and open doors, at full daylight.
SKY: RGB = (0.62, 0.75, 0.92)

#: Built-in fixtures by kind (home file v2).
FIXTURES: dict[str, RGB] = {
    "counter": (0.80, 0.78, 0.72), "sink": (0.85, 0.86, 0.88), "shower": (0.88, 0.90, 0.92),
    "bathtub": (0.94, 0.94, 0.94), "toilet": (0.96, 0.96, 0.96), "washing_machine_place": (0.75, 0.75, 0.73),
    "built_in_furniture": (0.70, 0.60, 0.48), "stairs": (0.60, 0.50, 0.40), "ramp": (0.60, 0.58, 0.55),
    "elevator": (0.65, 0.66, 0.68),
}

#: Colour words of object colours and of people's appearance descriptions.
COLOUR_WORDS: dict[str, RGB] = {
    "red": (0.75, 0.12, 0.10), "blue": (0.18, 0.32, 0.70), "white": (0.92, 0.92, 0.90),
    "black": (0.07, 0.07, 0.08), "grey": (0.50, 0.50, 0.52), "gray": (0.50, 0.50, 0.52),
    "green": (0.20, 0.50, 0.25), "yellow": (0.90, 0.78, 0.15), "orange": (0.90, 0.50, 0.12),
    "brown": (0.42, 0.28, 0.16), "beige": (0.80, 0.72, 0.58), "lavender": (0.66, 0.58, 0.80),
    "navy": (0.12, 0.16, 0.36), "pink": (0.88, 0.56, 0.64), "purple": (0.45, 0.25, 0.55),
    "dark": (0.16, 0.16, 0.20), "olive": (0.42, 0.44, 0.20), "maroon": (0.45, 0.10, 0.14),
    "khaki": (0.70, 0.64, 0.45), "denim": (0.25, 0.35, 0.55), "jeans": (0.25, 0.35, 0.55),
}

#: People: skin, hair and shoes; clothes come from :func:`person_colours`.
SKIN: RGB = (0.86, 0.68, 0.56)
HAIR: RGB = (0.30, 0.24, 0.20)
SHOES: RGB = (0.12, 0.11, 0.10)
#: Clothes of a character whose appearance names no colour.
DEFAULT_TOP: RGB = (0.45, 0.50, 0.58)
DEFAULT_BOTTOM: RGB = (0.25, 0.27, 0.32)
#: A hood whose top the appearance does not name, gloves, a sleeper's blanket (a blue duvet, apart
#: from the bed's sheets and from clothes), and the cardboard of a carried parcel.
HOOD: RGB = (0.10, 0.10, 0.12)
GLOVES: RGB = (0.08, 0.08, 0.09)
BLANKET: RGB = (0.33, 0.45, 0.68)
PARCEL: RGB = (0.72, 0.56, 0.36)
#: Clothing colours the general colour words lack.
CLOTHING_COLOURS: dict[str, RGB] = {"teal": (0.12, 0.50, 0.52)}

#: A person's pixels in a people_masked frame, and every pixel of a blocked one (sRGB bytes).
MASK_RGB8: tuple[int, int, int] = (255, 0, 255)
BLOCKED_RGB8: tuple[int, int, int] = (32, 32, 32)


def stable_colour(name: str) -> RGB:
    """A muted colour that depends only on a name."""
    digest = hashlib.sha256(name.encode("utf-8")).digest()
    return tuple(round(0.35 + 0.45 * b / 255, 3) for b in digest[:3])  # type: ignore[return-value]


def fixture_colour(kind: str) -> RGB:
    return FIXTURES.get(kind) or stable_colour(kind)


#: Words of an appearance phrase about the head rather than the clothes.
HEAD_WORDS = frozenset({"hair", "bob", "beard", "tail", "glasses", "bald", "moustache"})
#: Words of a phrase about the feet (its colour goes to the shoes), of tops that leave the forearms
#: bare, of bottoms that leave the shins bare, of one-colour outfits, and of a hooded top.
SHOE_WORDS = frozenset({"shoes", "trainers", "boots", "slippers", "sneakers", "sandals"})
SHORT_SLEEVE_WORDS = frozenset({"t-shirt", "polo", "scrubs", "vest", "tank"})
BARE_SHIN_WORDS = frozenset({"shorts", "skirt"})
OUTFIT_WORDS = frozenset({"scrubs", "overalls", "uniform", "jumpsuit"})
HOOD_WORDS = frozenset({"hood", "hooded", "hoodie"})


def person_colours(appearance: str) -> dict[str, RGB]:
    """Colours of a person's parts from the appearance text: the phrases about the head give the
    hair, those about the feet the shoes; of the others, the first colour word dresses the top, the
    next the trousers (e.g. "grey bob, lavender cardigan, dark trousers, slippers"). Short sleeves
    bare the forearms, shorts the shins, gloves cover the hands; a hooded top's hood is its colour.
    The roles :func:`homeloop.sim.render.figures.person_pieces` draws: skin, hair, top, forearms,
    hands, bottom, shins, shoes, hood, parcel and blanket."""
    head: list[RGB] = []
    clothes: list[RGB] = []
    feet: list[RGB] = []
    words: set[str] = set()
    for phrase in appearance.lower().replace(";", ",").split(","):
        said = [w.strip(".") for w in phrase.split()]
        words.update(said)
        colours = [COLOUR_WORDS.get(w) or CLOTHING_COLOURS[w] for w in said
                   if w in COLOUR_WORDS or w in CLOTHING_COLOURS]
        (head if HEAD_WORDS.intersection(said) else feet if SHOE_WORDS.intersection(said) else clothes).extend(
            colours)
    top = clothes[0] if clothes else DEFAULT_TOP
    bottom = clothes[1] if len(clothes) > 1 else top if OUTFIT_WORDS.intersection(words) else DEFAULT_BOTTOM
    return {"skin": SKIN, "hair": head[0] if head else HAIR, "top": top, "bottom": bottom,
            "shoes": feet[0] if feet else SHOES,
            "forearms": SKIN if SHORT_SLEEVE_WORDS.intersection(words) else top,
            "hands": GLOVES if "gloves" in words else SKIN,
            "shins": SKIN if BARE_SHIN_WORDS.intersection(words) else bottom,
            "hood": top if HOOD_WORDS.intersection(words) else HOOD, "parcel": PARCEL, "blanket": BLANKET}
