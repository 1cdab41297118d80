"""The payoff-reasoning task: people and models judge an LLM's reasoning about a 2x2 game's payoffs.

| module | holds |
|---|---|
| ``games`` | the 2x2 games (``Game``, ``GAMES``, ``games_with`` for a session's extra games) |
| ``logs`` | the reasoning-log format: ``parse_log``, ``format_log``, sentences, the automated check's fields |
| ``log_files`` | reading a session's log files (folder, ``.zip``) within bounds; ``check_sizes``, ``LogLoadError`` |
| ``protocol`` | the published evaluation form: ``PROTOCOL_COLUMNS``, ``ERROR_TYPES``, ``verdict_errors``, ``protocol_csv``, ``export_cell`` |
| ``task`` | the app without oTree: ``TaskSettings``/``task_settings``, ``load_logs``, the Judge page's data and checks, assignment, admin report |
| ``judge_prompts`` | what a model judge is asked (``build_messages``, ``judgement_schema``, ``token_budget``) and how its reply is read (``parse_judgement``) |
| ``judge`` | the model-judge runner (``python -m backend.reasoning.judge``) on ``backend.core.runs`` |
| ``report`` | verdicts combined per log, confusion counts, kappa with its interval, people vs model judges |
| ``judge_scores`` | a model judge against people: agreement, ECE and Brier of its k-sample confidence, intervals over logs, the admission line |
"""
