"""What every domain shares: the LLM client, statistics, CSV conventions, assignment, agreement, limits.

| module | holds |
|---|---|
| ``llm/`` | the only code that talks to a model (``complete``, ``stream``, ``LLMSettings``); ``llm.replies`` reads JSON in replies; ``llm.records`` holds ``CallRecord`` and ``CallTotals``; ``llm.fake_server`` is a scriptable OpenAI-compatible server for faults |
| ``stats`` | the one cell-mean estimator (``debiased_mean``) and the one bootstrap (``bootstrap_replicates``, ``bootstrap_statistic``, ``percentile_interval``) |
| ``csvio`` | spreadsheet-safe cells and their exact inverse, text escaping, boolean cells, ISO-8601 times, the tolerant CSV reader |
| ``runs`` | what resumable runners share: their CSV state files, the bounded run loop, one ``main`` (``run_command``) and the common CLI options |
| ``jsonable`` | report figures as strict JSON (NaN as null) |
| ``progress`` | the runners' progress bar and run tally |
| ``assignment`` | k people per item, least-covered first, expiring reservations (both annotation apps) |
| ``agreement`` | inter-annotator agreement (Krippendorff's alpha, Fleiss' kappa, pairwise) |
| ``unit_bootstrap`` | seeded bootstrap intervals of agreement figures, resampling rated units (weighted, all resamples at once) |
| ``calibration`` | a judge's confidence from k samples (votes, spread), ECE, Brier score, reliability bins, the admission line |
| ``rate_limit`` | the server's one limiter (``TokenBuckets``: live messages, page requests, new places, the waiting line's pace), the login lockout (``AttemptThrottle``), model requests per game |
| ``session_keys`` | session keys as pydantic models (field: default, bounds, label, help); one place words their refusals |
| ``researcher_files`` | reading a researcher's files with plain-word errors |
| ``script_json`` | JSON that is safe inside an HTML ``<script>`` element |
| ``stored_text`` | text every supported database can store |
| ``catalogues`` | every participant-facing word as gettext catalogues (``locale/``): English source tables (``english``), translated tables (``translated``), the available languages (``languages``) |
| ``catalogue_tool`` | the catalogues' templates from the code, ``update`` of a language, ``compile``, ``check`` (``python -m backend.core.catalogue_tool``) |
"""
