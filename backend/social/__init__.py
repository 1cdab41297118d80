"""Social evaluation: people and models rate conversation episodes on a rubric (Sotopia's seven dimensions by default).

| module | holds |
|---|---|
| ``json_fields`` | ``JsonFields``: reading a researcher's nested JSON with messages naming file and field (rubrics, episodes) |
| ``rubrics`` | the rubric as data (``Rubric``, ``Dimension``, ``load_rubric``, ``overall_score``) |
| ``episode_model`` | the episode (``Episode``, ``Agent``, ``Turn``), ``EpisodeFormatError`` and the readers' ``FieldReader`` |
| ``episodes`` | our episode format and the loading API (``load_episodes``, ``parse_episode_text``, ``attach_model_ratings``) |
| ``sotopia_episodes`` | Sotopia's ``EpisodeLog`` and ``episodes_to_jsonl`` layouts, converted to ``Episode`` |
| ``settings`` | the social_eval app's typed session settings (``SocialSettings``, ``social_settings``) |
| ``forms`` | the rating form as pure functions: fields, checks, gold scoring, task plan, the long and wide export rows |
| ``report`` | export columns (``RATING_CELLS``, ``EXPORT_COLUMNS``, ``rating_cells``) and the metrics: means, agreement, human vs model |
| ``model_scores`` | model ratings against people's: intervals over episodes, the spread of k samples against the error, the admission line |
| ``quality`` | the quality per annotator read from the exports (time, gold passed, distance from the others), for the report, its figure and the admin page |
| ``figures`` | the report's figures (``report_figures``): agreement, people against models, the quality per annotator |
| ``sotopia_release`` | reading the released Sotopia-π human evaluation |
| ``annotator_prompts`` | what a model annotator is asked (``build_messages``, ``ratings_schema``, ``unit_budget``) and how its reply is read (``parse_ratings``) |
| ``annotator`` | the model-annotator runner (``python -m backend.social.annotator``) on ``backend.core.runs`` |
"""
