"""The reservation's minutes as a participant reads them (issue 35): "reserved for you for 1 minute", never
"1 minutes", in every language, on the rating page's hint and on the page saying a reservation was lost."""

from __future__ import annotations

import pytest

from backend.core.assignment import minutes_shown
from backend.social.forms import reservation_lost_message
from tests.support.language_check import load_texts

HINT_ENDS = {
    "en": ("reserved for you for 1 minute.", "reserved for you for 2 minutes."),
    "de": ("ist 1 Minute lang für Sie reserviert.", "ist 2 Minuten lang für Sie reserviert."),
    "it": ("riservata a Lei per 1 minuto.", "riservata a Lei per 2 minuti."),
}
LOST_STARTS = {
    "en": ("This page was open for more than 1 minute, so", "This page was open for more than 2 minutes, so"),
    "de": ("Diese Seite war länger als 1 Minute geöffnet.", "Diese Seite war länger als 2 Minuten geöffnet."),
    "it": (
        "Questa pagina è rimasta aperta per più di 1 minuto,",
        "Questa pagina è rimasta aperta per più di 2 minuti,",
    ),
}


@pytest.mark.parametrize("language", sorted(HINT_ENDS))
def test_one_minute_is_singular_and_more_are_plural_in_every_language(language):
    texts = load_texts("social_eval/texts.py")
    one, two = (minutes_shown(seconds) for seconds in (20, 120))
    assert (one, two) == (1, 2)
    assert texts.rate_hint(language, minimum=20, minutes=one).endswith(HINT_ENDS[language][0])
    assert texts.rate_hint(language, minimum=20, minutes=two).endswith(HINT_ENDS[language][1])
    assert reservation_lost_message(one, language=language).startswith(LOST_STARTS[language][0])
    assert reservation_lost_message(two, language=language).startswith(LOST_STARTS[language][1])
