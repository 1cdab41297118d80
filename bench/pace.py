"""How long people stay on each page of an annotation study, for the load benches (no imports: Locust's environment
reads it too).

The fastest plausible annotator: consent about 10 s, instructions 30 s, and a rating page 90 s (it asks for 14
written reasons of at least 20 characters and 14 ratings, at least 280 typed characters, which alone is about 1.5
minutes at composing speed). A bench draws each stay from 0.5-1.5 x the mean.
"""

HUMAN_PAGE_SECONDS = {"Consent": 10.0, "Instructions": 30.0, "Rate": 90.0, "Completion": 0.0}


def stay_seconds(uniform, page: str, *, scale: float = 1.0) -> float:
    """Seconds on ``page`` at human pace x ``scale``; ``uniform(a, b)`` draws the factor (``random.uniform``).

    >>> stay_seconds(lambda a, b: 1.0, "Rate"), stay_seconds(lambda a, b: 0.5, "Consent", scale=0.2)
    (90.0, 1.0)
    """
    return scale * uniform(0.5, 1.5) * HUMAN_PAGE_SECONDS.get(page, 0.0)
