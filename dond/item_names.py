"""The item words a participant reads on the DoND pages, from the ``dond`` catalogue: the English source below (the
same words as ``backend/dond/data/dond_items.json``, which the model's prompts keep using), translated in
``locale/<language>/LC_MESSAGES/dond.po``.

Each item is one gettext plural message keyed ``item.<id>`` (its id is its English singular): the form for a count of
one is the item's singular, the form for two its plural, the word the item tables name it by. A page's words come
from here whatever language the model's prompts are in (``llm_prompt_language``), so a language added by catalogues
alone names the items in its own words.

>>> page_item_words(Instance(("apple", "egg"), (2, 1), (5, 0), (0, 10)), "de")
(('Apfel', 'Ei'), ('Äpfel', 'Eier'))
"""

from __future__ import annotations

import functools

from backend.core.catalogues import Plural, english, locale_dirs, translated
from backend.dond.instances import Instance

SOURCE = english(
    "dond",
    {
        "item.acorn": Plural("acorn", "acorns"),
        "item.apple": Plural("apple", "apples"),
        "item.banana": Plural("banana", "bananas"),
        "item.basket": Plural("basket", "baskets"),
        "item.bell": Plural("bell", "bells"),
        "item.belt": Plural("belt", "belts"),
        "item.bicycle": Plural("bicycle", "bicycles"),
        "item.blanket": Plural("blanket", "blankets"),
        "item.book": Plural("book", "books"),
        "item.bottle": Plural("bottle", "bottles"),
        "item.bowl": Plural("bowl", "bowls"),
        "item.box": Plural("box", "boxes"),
        "item.brick": Plural("brick", "bricks"),
        "item.broom": Plural("broom", "brooms"),
        "item.brush": Plural("brush", "brushes"),
        "item.bucket": Plural("bucket", "buckets"),
        "item.button": Plural("button", "buttons"),
        "item.candle": Plural("candle", "candles"),
        "item.carrot": Plural("carrot", "carrots"),
        "item.chair": Plural("chair", "chairs"),
        "item.cherry": Plural("cherry", "cherries"),
        "item.clock": Plural("clock", "clocks"),
        "item.coin": Plural("coin", "coins"),
        "item.comb": Plural("comb", "combs"),
        "item.cookie": Plural("cookie", "cookies"),
        "item.crayon": Plural("crayon", "crayons"),
        "item.crown": Plural("crown", "crowns"),
        "item.cup": Plural("cup", "cups"),
        "item.cushion": Plural("cushion", "cushions"),
        "item.drum": Plural("drum", "drums"),
        "item.egg": Plural("egg", "eggs"),
        "item.envelope": Plural("envelope", "envelopes"),
        "item.feather": Plural("feather", "feathers"),
        "item.flag": Plural("flag", "flags"),
        "item.flower": Plural("flower", "flowers"),
        "item.flute": Plural("flute", "flutes"),
        "item.fork": Plural("fork", "forks"),
        "item.glove": Plural("glove", "gloves"),
        "item.guitar": Plural("guitar", "guitars"),
        "item.hammer": Plural("hammer", "hammers"),
        "item.hat": Plural("hat", "hats"),
        "item.helmet": Plural("helmet", "helmets"),
        "item.key": Plural("key", "keys"),
        "item.kite": Plural("kite", "kites"),
        "item.knife": Plural("knife", "knives"),
        "item.ladder": Plural("ladder", "ladders"),
        "item.lamp": Plural("lamp", "lamps"),
        "item.lantern": Plural("lantern", "lanterns"),
        "item.leaf": Plural("leaf", "leaves"),
        "item.lemon": Plural("lemon", "lemons"),
        "item.lock": Plural("lock", "locks"),
        "item.magnet": Plural("magnet", "magnets"),
        "item.map": Plural("map", "maps"),
        "item.marble": Plural("marble", "marbles"),
        "item.mask": Plural("mask", "masks"),
        "item.mirror": Plural("mirror", "mirrors"),
        "item.mug": Plural("mug", "mugs"),
        "item.mushroom": Plural("mushroom", "mushrooms"),
        "item.nail": Plural("nail", "nails"),
        "item.needle": Plural("needle", "needles"),
        "item.notebook": Plural("notebook", "notebooks"),
        "item.onion": Plural("onion", "onions"),
        "item.orange": Plural("orange", "oranges"),
        "item.paintbrush": Plural("paintbrush", "paintbrushes"),
        "item.pan": Plural("pan", "pans"),
        "item.peach": Plural("peach", "peaches"),
        "item.pear": Plural("pear", "pears"),
        "item.pen": Plural("pen", "pens"),
        "item.pencil": Plural("pencil", "pencils"),
        "item.plate": Plural("plate", "plates"),
        "item.pot": Plural("pot", "pots"),
        "item.potato": Plural("potato", "potatoes"),
        "item.pumpkin": Plural("pumpkin", "pumpkins"),
        "item.ribbon": Plural("ribbon", "ribbons"),
        "item.ring": Plural("ring", "rings"),
        "item.rope": Plural("rope", "ropes"),
        "item.ruler": Plural("ruler", "rulers"),
        "item.saw": Plural("saw", "saws"),
        "item.scarf": Plural("scarf", "scarves"),
        "item.shell": Plural("shell", "shells"),
        "item.shoe": Plural("shoe", "shoes"),
        "item.shovel": Plural("shovel", "shovels"),
        "item.sock": Plural("sock", "socks"),
        "item.sponge": Plural("sponge", "sponges"),
        "item.spoon": Plural("spoon", "spoons"),
        "item.stamp": Plural("stamp", "stamps"),
        "item.stone": Plural("stone", "stones"),
        "item.strawberry": Plural("strawberry", "strawberries"),
        "item.tent": Plural("tent", "tents"),
        "item.thimble": Plural("thimble", "thimbles"),
        "item.tomato": Plural("tomato", "tomatoes"),
        "item.towel": Plural("towel", "towels"),
        "item.toy": Plural("toy", "toys"),
        "item.trumpet": Plural("trumpet", "trumpets"),
        "item.umbrella": Plural("umbrella", "umbrellas"),
        "item.vase": Plural("vase", "vases"),
        "item.violin": Plural("violin", "violins"),
        "item.walnut": Plural("walnut", "walnuts"),
        "item.wheel": Plural("wheel", "wheels"),
        "item.whistle": Plural("whistle", "whistles"),
    },
)
PLURAL_COUNT = 2  # the count whose form is an item's plural, as the item tables show it


@functools.lru_cache(maxsize=32)
def _words(language: str, dirs: tuple) -> dict:  # dirs: the catalogues' folders, as translations() keys them
    return translated(SOURCE, language)


def page_item_words(
    instance: Instance, language: str, *, game_language: str = "en"
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``(singulars, plurals)`` of ``instance``'s items as a page in ``language`` names them: the instance's own
    words for ``language`` when it brings them (a researcher's instances file), else the catalogue's; an item the
    catalogue does not know (a researcher's own item) keeps its words of ``game_language``, the model's."""
    if language in instance.words:
        return instance.words[language]
    table = _words(language, locale_dirs())
    words = [table.get(f"item.{item}") for item in instance.item_types]
    if None in words:
        own = instance.singular(game_language), instance.plural(game_language)
    singulars = tuple(word(1) if word else own[0][index] for index, word in enumerate(words))
    plurals = tuple(word(PLURAL_COUNT) if word else own[1][index] for index, word in enumerate(words))
    return singulars, plurals
