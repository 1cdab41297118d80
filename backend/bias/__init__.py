"""Cognitive-bias tests without oTree: items, what people and models are asked, their answers, the metrics, the report.

| module | holds |
|---|---|
| ``items`` | the data model (``BiasItem``, ``ItemSet``, ``Presented``), ``load_items``/``parse_items``, ``present``, the seeded order (``build_sequence``, ``argument_order``) |
| ``item_fields`` | the field readers of an item file (text, numbers, option lists, formats) and ``ItemFileError`` |
| ``settings`` | the ``bias_tests`` app's typed session settings (``BiasSettings``, ``DEFAULTS``, ``checked_session``) |
| ``export`` | ``EXPORT_COLUMNS`` and ``export_row``: one row per respondent x test x version, people and models alike |
| ``prompts`` | what a model is asked (prompts, reply schemas) and the offline scripted model |
| ``replies`` | reading a model's reply (``parse_choice``, ``parse_selection``, ``text_answer``) and letter log-probabilities |
| ``runner`` | ``python -m backend.bias.runner``: a model answers every test, resumably (``backend.core.runs``) |
| ``metrics`` | the four bias metrics (anchoring, halo, loss aversion, confirmation), confidence variants, ``bootstrap_ci`` |
| ``report`` | every metric per respondent group, people and models side by side; the app's admin view |
"""
