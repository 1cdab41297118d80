"""Every protection still fails without it: each entry removes one protection from a copy of the project and runs the
test that guards it, which must then fail.

    .venv/bin/python -m tests.support.protections            # every entry (a few minutes: some start servers)
    .venv/bin/python -m tests.support.protections csv-formulas lockout   # some of them
    .venv/bin/python -m tests.support.protections --list     # the table, as docs/developers/tests.md shows it

The copy is made in a temporary folder (the checkout is never changed); the test runs there with this environment's
Python. An entry whose text no longer occurs in its file is reported as stale: the protection moved, update the entry.
When a protection is found to hold no test, add the test, then the entry here.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from harness import PROJECT_ROOT

SKIPPED = {".git", ".venv", ".venv-docs", "site", "__pycache__", ".pytest_cache", ".hypothesis"}


@dataclass(frozen=True)
class Protection:
    name: str
    guards: str  # what goes wrong without it
    file: str  # relative to the project
    protected: str  # text of the protection, exactly as in the file
    removed: str  # the same text without the protection
    test: str  # the pytest node id that must fail without it


PROTECTIONS = (
    Protection(
        "csv-formulas",
        "a cell starting with = + - @ opens as a formula in Excel",
        "backend/core/csvio.py",
        "        return NEUTRALISING_PREFIX + value\n    return value\n",
        "        return value\n    return value\n",
        "tests/backend/reasoning/test_task.py::test_the_protocol_download_neutralises_formula_text_and_reads_back_exactly",
    ),
    Protection(
        "latex-escape",
        "a model name with & or % breaks the paper's LaTeX table",
        "backend/core/paper_tables.py",
        '    return "".join(LATEX_SPECIALS.get(char, char) for char in str(text))\n',
        "    return str(text)\n",
        "tests/backend/core/test_publishing_parts.py::test_latex_tables_escape_model_names_and_keep_intervals_and_counts",
    ),
    Protection(
        "release-masks",
        "a Prolific ID or an e-mail address typed in free text reaches the published dataset",
        "backend/core/release.py",
        "    for pattern, mask in MASKS:\n        text = pattern.sub(mask, text)\n",
        "    for pattern, mask in MASKS[:0]:\n        text = pattern.sub(mask, text)\n",
        "tests/backend/core/test_publishing_parts.py::test_identifiers_are_replaced_everywhere_and_free_text_masked_or_dropped",
    ),
    Protection(
        "text-tables",
        "a text missing in one language shows a key or English to a participant",
        "locale/de/LC_MESSAGES/dond.po",
        'msgctxt "bargain_title"\nmsgid "Negotiation"\nmsgstr "Verhandlung"\n',
        'msgctxt "bargain_title"\nmsgid "Negotiation"\nmsgstr ""\n',
        "tests/backend/test_catalogues.py::test_every_catalogue_is_complete_with_the_english_placeholders",
    ),
    Protection(
        "complete-languages-only",
        "a half-translated language is offered and its participants read English",
        "backend/core/catalogues.py",
        "        if all(not problems(domain, language) for domain in DOMAINS)",
        "        if all(not problems(domain, language)[:0] for domain in DOMAINS)",
        "tests/backend/test_catalogues.py::test_a_language_is_added_by_its_catalogues_alone",
    ),
    Protection(
        "catalogue-placeholders",
        "a translation with another placeholder raises or shows a raw {name}",
        "backend/core/catalogues.py",
        "            if placeholders(text) - expected or (placeholders(text) != expected and not isinstance(entry.msgid, tuple)):",
        "            if False:",
        "tests/backend/test_catalogues.py::test_the_check_finds_a_missing_untranslated_fuzzy_or_misplaced_message",
    ),
    Protection(
        "login-lockout",
        "the admin password can be guessed at full speed",
        "backend/core/rate_limit.py",
        "        if count < self.free_attempts:\n            return 0\n",
        "        if True:\n            return 0\n",
        "tests/system/test_limits.py::test_password_guessing_is_locked_out_and_the_right_password_waits_for_the_lockout",
    ),
    Protection(
        "admission-cookie-expiry",
        "an admission cookie lets its link and PID past the waiting line for ever",
        "lab_server/admission.py",
        "        return passed is not None and now - passed <= ADMITTED_FOR_S\n",
        "        return passed is not None\n",
        "tests/system/test_admission.py::test_a_forged_tampered_foreign_or_expired_ticket_or_cookie_admits_nobody",
    ),
    Protection(
        "admission-signature-purpose",
        "a waiting ticket put in the admission cookie lets anyone past the line",
        "lab_server/admission.py",
        '        return URLSafeSerializer(self._key, salt=purpose, signer_kwargs={"digest_method": hashlib.sha256})\n',
        '        return URLSafeSerializer(self._key, signer_kwargs={"digest_method": hashlib.sha256})\n',
        "tests/system/test_admission.py::test_a_forged_tampered_foreign_or_expired_ticket_or_cookie_admits_nobody",
    ),
    Protection(
        "accept-language-q-values",
        "a browser preferring German to English (q-values) gets English pages",
        "lab_server/limits.py",
        '    return parse_accept_header(header, LanguageAccept).best_match(list(available), default="en")\n',
        '    return next((part.strip()[:2] for part in header.lower().split(",") if part.strip()[:2] in available), "en")\n',
        "tests/system/test_study_flow.py::test_the_browsers_q_values_choose_the_language_of_the_pages_before_otree",
    ),
    Protection(
        "keys-default-over-bound",
        "an app with fewer rounds than a key's default gets a KeyError, not a sentence",
        "backend/core/session_keys.py",
        "config.get(name, model.model_fields[name].default)",
        "config[name]",
        "tests/backend/core/test_session_keys.py::test_a_bound_the_caller_names_is_checked_and_worded",
    ),
    Protection(
        "keys-named-bound",
        "social_eval accepts more episodes per annotator than the app has rounds",
        "backend/core/session_keys.py",
        "if bound is not None and value > bound:",
        "if False:",
        "tests/backend/core/test_session_keys.py::test_a_bound_the_caller_names_is_checked_and_worded",
    ),
    Protection(
        "env-read-at-start",
        "a server starts with an unusable limit and fails later",
        "settings.py",
        "    ENV = environment()\n",
        "    ENV = environment({})\n",
        "tests/backend/core/test_environment.py::test_the_server_does_not_start_with_an_unusable_variable",
    ),
    Protection(
        "env-key-boundary",
        "a variable silently overrides a session key",
        "backend/core/environment.py",
        ', key="llm_model")',
        ")",
        "tests/backend/test_docs_reference.py::test_the_boundary_between_session_keys_and_environment_variables_is_kept",
    ),
    Protection(
        "accept-language-bounded",
        "a 16 KB Accept-Language cost 65 ms of the server's one process per refusal page",
        "lab_server/limits.py",
        "    if len(header) > MAX_ACCEPT_LANGUAGE_CHARS:\n",
        "    if False:\n",
        "tests/system/test_red_team_inputs.py::test_a_huge_accept_language_is_read_only_as_far_as_a_browser_sends",
    ),
    Protection(
        "catalogue-unsafe-forms",
        "a lone brace, a formatted placeholder or HTML in a lab's translation passed the check: a page raised ValueError or printed the markup",
        "backend/core/catalogues.py",
        "        if unsafe:\n",
        "        if False:\n",
        "tests/system/test_red_team_inputs.py::test_a_translation_that_would_break_or_inject_into_a_page_is_refused_by_the_check",
    ),
    Protection(
        "catalogue-unreadable",
        "a lab's .po that is not UTF-8 or has a broken Plural-Forms stopped the server's start",
        "backend/core/catalogues.py",
        "    except Exception as error:  # whatever a lab's file holds",
        "    except ZeroDivisionError as error:  # whatever a lab's file holds",
        "tests/system/test_red_team_inputs.py::test_an_unreadable_lab_catalogue_is_not_offered_and_stops_nothing",
    ),
    Protection(
        "mo-carries-po-time",
        "a .po replaced by an older file kept its stale .mo",
        "backend/core/catalogues.py",
        "    if mo.is_file() and mo.stat().st_mtime_ns == source.st_mtime_ns:\n",
        "    if mo.is_file() and mo.stat().st_mtime_ns >= source.st_mtime_ns:\n",
        "tests/system/test_red_team_inputs.py::test_a_po_replaced_by_an_older_file_is_compiled_again",
    ),
    Protection(
        "waiting-ticket-per-pid",
        "a retry URL's ticket passed on with another PID jumps the line",
        "lab_server/admission.py",
        '    return TICKET + json.dumps([path.rstrip("/"), label])\n',
        "    return TICKET\n",
        "tests/system/test_red_team_inputs.py::test_a_waiting_ticket_passed_on_to_another_pid_does_not_jump_the_line",
    ),
    Protection(
        "inside-safe-labels",
        "60 KB labels each filled the gate's memory of labels let in",
        "lab_server/admission.py",
        "        if label and study_flow.SAFE_LABEL.fullmatch(label) and len(self._inside) < MAX_INSIDE:\n",
        "        if label and len(self._inside) < MAX_INSIDE:\n",
        "tests/system/test_red_team_inputs.py::test_the_gate_remembers_only_labels_otree_would_take",
    ),
    Protection(
        "bucket-forget-amortised",
        "past 100,000 keys every take scanned them all (38 ms)",
        "backend/core/rate_limit.py",
        "        if len(self._buckets) > self._forget_above:\n",
        "        if len(self._buckets) > MAX_TRACKED:\n",
        "tests/system/test_red_team_inputs.py::test_a_flood_of_new_keys_past_max_tracked_does_not_make_every_take_look_at_every_key",
    ),
    Protection(
        "new-places-words",
        "the docs said N places per window where the bucket gives up to 2N",
        "backend/core/environment.py",
        "New places one client address may take in one room at once,",
        "New places one client address may take in one room per window,",
        "tests/system/test_red_team_inputs.py::test_what_the_docs_say_of_new_places_per_address_is_what_the_bucket_does",
    ),
    Protection(
        "front-door-pid-case",
        "PARTICIPANT_LABEL put first picked the server: one PID a place on each",
        "backend/core/study_servers.py",
        '"~(?:^|&)participant_label=(?<label>[^&]*)" $label;',
        '"~*(?:^|&)participant_label=(?<label>[^&]*)" $label;',
        "tests/system/test_red_team_inputs.py::test_one_prolific_id_is_sent_to_one_server_however_its_link_is_written",
    ),
    Protection(
        "front-door-encoded",
        "a percent-encoded PID was hashed to another server",
        "backend/core/study_servers.py",
        '        if ($args ~ "%") {{\n',
        '        if ($args ~ "%never") {{\n',
        "tests/system/test_red_team_inputs.py::test_one_prolific_id_is_sent_to_one_server_however_its_link_is_written",
    ),
    Protection(
        "places-monotonic",
        "a wall clock set back stopped new-place refills",
        "lab_server/places.py",
        "    budget().take(_budget_key(request, session, room_name), now=time.monotonic())",
        "    budget().take(_budget_key(request, session, room_name), now=time.time())",
        "tests/system/test_red_team_inputs.py::test_new_places_per_address_refill_on_the_servers_clock_not_the_wall_clock",
    ),
    Protection(
        "server-pair-twice",
        "a --server/--session pair given twice paid everyone twice",
        "backend/core/servers.py",
        "        if pair in given:\n",
        "        if False:\n",
        "tests/system/test_red_team_inputs.py::test_the_same_server_and_session_given_twice_is_refused_not_paid_twice",
    ),
    Protection(
        "socket-counts-no-leak",
        "each refused handshake left an entry in the socket counts",
        "lab_server/limits.py",
        "or self.open_sockets.get(key, 0) >= self.sockets_per_participant",
        "or self.open_sockets.setdefault(key, 0) >= self.sockets_per_participant",
        "tests/system/test_red_team_inputs.py::test_a_refused_socket_leaves_nothing_behind_in_the_socket_counts",
    ),
    Protection(
        "rating-rows-drawn-once",
        "every rating page draws its 14 rows again (~7 ms of the server per page)",
        "lab_server/page_cost.py",
        "    if found is not None and found[0] is template:\n",
        "    if False:\n",
        "tests/system/test_page_fragments.py::test_a_fragment_is_rendered_once_per_key",
    ),
    Protection(
        "extramodel-lookups-indexed",
        "every rating page reads the assignment and episode tables whole",
        "lab_server/indexes.py",
        '        for columns in getattr(table, "info", {}).get(lookups.INDEXED, ()):\n',
        "        for columns in ():\n",
        "tests/system/test_player_indexes.py::test_the_rows_a_rating_page_looks_up_are_found_by_an_index",
    ),
    Protection(
        "study-material-read-once",
        "each pick writes the session's whole pickled vars back",
        "social_eval/study.py",
        "    if session.code not in _STUDIES:\n",
        "    if True:\n",
        "tests/apps/test_social_eval.py::test_the_study_material_is_read_without_writing_the_session_back_on_every_step",
    ),
    Protection(
        "episode-ids-not-in-session-vars",
        "3,000 ids unpickled with the session's row on every request",
        "social_eval/study.py",
        "        gold_ids=[e.id for e in episodes if e.is_gold],\n    )",
        "        gold_ids=[e.id for e in episodes if e.is_gold],\n        regular_ids=[e.id for e in episodes if not e.is_gold],\n    )",
        "tests/apps/test_social_eval.py::test_the_study_material_is_read_without_writing_the_session_back_on_every_step",
    ),
    Protection(
        "dond-page-item-words",
        "a DoND page in a language added by catalogues names the items in the model's English words",
        "dond/views.py",
        "    return page_item_words(instance, storage.page_language_of(game), game_language=game.language)\n",
        "    return instance.singular(game.language), instance.plural(game.language)\n",
        "tests/browser/test_new_language.py::test_a_dond_game_of_two_people_in_the_new_language_has_no_english_word",
    ),
    Protection(
        "dond-announce-own-words",
        "the screen-reader log copies the model's words into the page's own text (English on an xx page)",
        "dond/static/dond/bargain.js",
        "          said.dataset.ownText = '';\n",
        "",
        "tests/browser/test_new_language.py::test_a_dond_game_against_a_model_in_the_new_language_has_no_english_word_on_the_page",
    ),
    Protection(
        "dond-prompt-language-refused",
        "a DoND session with a model in a language without prompts is created and the model silently bargains in English",
        "backend/dond/settings.py",
        '    if not model_plays or llm_prompt_language != "auto" or language in LANGUAGES:\n',
        "    if True:\n",
        "tests/backend/dond/test_page_languages.py::test_only_a_session_whose_model_has_no_prompts_in_its_language_is_refused",
    ),
    Protection(
        "llm-stream-json-chunks",
        "every streamed chunk is built into the openai client's typed objects (a sixth of a DoND exchange's server time)",
        "backend/core/llm/client.py",
        "response = await wire.open_stream(client, request)",
        'response = await wire.create(client, request, stream=True, stream_options={"include_usage": True})',
        "tests/backend/core/test_llm_wire.py::test_a_streamed_reply_is_read_without_the_clients_typed_chunks",
    ),
    Protection(
        "llm-pools-of-16",
        "all calls to an endpoint share one connection pool, which scans every connection whenever a request starts or ends",
        "backend/core/llm/wire.py",
        "if calls < CALLS_PER_POOL), None)",
        "if calls < 10**9), None)",
        "tests/backend/core/test_llm_wire.py::test_calls_beyond_a_pools_share_at_once_open_another_client",
    ),
    Protection(
        "llm-plain-json-extra-body",
        "temperature, seed, token limit and response_format go through the client's typed parameters (5 % of an exchange's server time)",
        "backend/core/llm/wire.py",
        'PLAIN_JSON = ("messages", "temperature", "seed", "max_tokens", "max_completion_tokens", "response_format")',
        'PLAIN_JSON = ("messages",)',
        "backend/core/llm/wire.py::backend.core.llm.wire.split_request",
    ),
    Protection(
        "study-servers-own-secret-key",
        "every server of one study shares one SECRET_KEY: an admin login on one server is a login on all",
        "backend/core/study_servers.py",
        ' && export SECRET_KEY="$SECRET_KEY-{server.name}" \'',
        "'",
        "tests/system/test_study_servers.py::test_no_server_takes_another_servers_admin_login",
    ),
    Protection(
        "front-door-no-temp-files",
        "nginx's workers cannot reach a study folder under a private parent: a 3 MB upload answered 500, a 20 MB export cut at 11 MB",
        "backend/core/study_servers.py",
        "    client_body_buffer_size 40m;\n    proxy_max_temp_file_size 0;\n",
        "",
        "tests/system/test_study_servers.py::test_a_big_request_passes_the_front_door_whatever_folder_the_study_is_in",
    ),
    Protection(
        "places-per-address",
        "one client takes every place of a study with made-up Prolific IDs",
        "lab_server/places.py",
        "    if budget().wait_s(_budget_key(request, session, room_name), now=time.monotonic()) > 0:\n",
        "    if False:\n",
        "tests/system/test_places.py::test_one_address_takes_a_bounded_number_of_new_places",
    ),
    Protection(
        "bonus-never-negative",
        "a competitive game lost on points takes money from the participant's bonus",
        "backend/dond/scoring.py",
        "    return max(0, goal_score(mode, own_points, other_points))\n",
        "    return goal_score(mode, own_points, other_points)\n",
        "backend/dond/scoring.py::backend.dond.scoring.bonus",
    ),
    Protection(
        "otree-exports-tests",
        "oTree's wide and per-app exports of all sessions carry the demo session and test-link participants, unmarked",
        "lab_server/outputs.py",
        "        if test and not keep:\n            continue\n",
        "        if False:\n            continue\n",
        "tests/system/test_otree_exports_tests.py::test_otrees_exports_mark_tests_and_leave_them_out_of_all_sessions",
    ),
    Protection(
        "status-counts-tests",
        "a tester is counted as a study participant on Study status",
        "lab_server/admin_pages.py",
        '        counts["test" if test else status] += 1\n',
        "        counts[status] += 1\n",
        "tests/system/test_otree_exports_tests.py::test_the_status_page_lists_a_tester_without_counting_them_and_a_decline_as_declined",
    ),
    Protection(
        "declined-not-returned",
        "a person who declined consent is listed as returned though shown the screen-out code",
        "backend/core/participant_status.py",
        '        return ("declined" if reason == "declined_consent" else "screened_out"), text\n',
        '        return ("returned" if reason == "declined_consent" else "screened_out"), text\n',
        "tests/backend/core/test_participant_status.py::test_the_first_matching_status_wins",
    ),
    Protection(
        "room-taken-recorded",
        "a new session takes a room from a running study without a word in either launch check",
        "lab_server/creation.py",
        "        if held is not None and held.code != session.code:\n",
        "        if False:\n",
        "tests/system/test_launch_check_rooms.py::test_a_room_taken_from_a_study_under_way_is_named_in_both_launch_checks_and_on_the_room_page",
    ),
    Protection(
        "same-codes",
        "Prolific cannot tell finishing from screening out",
        "backend/core/launch_check.py",
        "    if completion_code and same_code(completion_code, screenout_code):\n",
        "    if False:\n",
        "tests/backend/core/test_launch_check.py::test_the_same_code_for_finishing_and_screening_out_is_a_problem",
    ),
    Protection(
        "codes-case",
        "ABC123 and abc123 pass as two codes; a participant can type one for the other",
        "backend/core/launch_check.py",
        "    if completion_code and same_code(completion_code, screenout_code):\n",
        "    if completion_code and completion_code == screenout_code:\n",
        "tests/backend/core/test_launch_check.py::test_codes_that_differ_only_in_case_are_the_same_code",
    ),
    Protection(
        "partner-limits",
        "10 s turn, closed-page or pairing limits end most person-vs-person games unseen",
        "backend/core/launch_check.py",
        "        if seconds < problem_below:\n",
        "        if False:\n",
        "tests/backend/core/test_launch_check.py::test_partner_limits_far_below_what_a_person_needs_are_problems",
    ),
    Protection(
        "partner-limits-checked",
        "the launch check never looks at a DoND session's partner limits",
        "lab_server/study_pages.py",
        '    if facts.get("two_people") and app in workload.PARTNER_LIMITS:\n',
        "    if False:\n",
        "tests/system/test_launch_check_rooms.py::test_partner_limits_and_codes_that_differ_only_in_case_are_caught",
    ),
    Protection(
        "room-holder-now",
        "a session that lost its room names the wrong session as the one new arrivals reach",
        "lab_server/study_pages.py",
        '    if room is None and facts["taken_by"] is not None:\n',
        "    if False:\n",
        "tests/system/test_launch_check_rooms.py::test_a_room_taken_twice_names_who_holds_it_now_and_the_chain_of_takeovers",
    ),
    Protection(
        "room-chain",
        "a room taken twice hides the study under way two takeovers back",
        "lab_server/study_pages.py",
        '    if room is not None and facts["taken_from"] is not None:\n',
        "    if False:\n",
        "tests/system/test_launch_check_rooms.py::test_a_room_taken_twice_names_who_holds_it_now_and_the_chain_of_takeovers",
    ),
    Protection(
        "duplicate-label",
        "a link with the PID twice passes the line as one PID while oTree seats another",
        "lab_server/entry.py",
        '    if len(request.query_params.getlist("participant_label")) > 1:\n',
        "    if False:\n",
        "tests/system/test_prolific_entry.py::test_hostile_and_missing_pids_are_refused_on_every_path_and_take_no_slot",
    ),
    Protection(
        "partner-check-before-advance",
        "the admin's advance after a partner left pays the one left behind nothing",
        "dond/__init__.py",
        '        if game.opponent == "human":  # a partner gone by now is named first, whoever moves this page on\n',
        "        if False:\n",
        "tests/apps/test_dond_seat_records.py::test_the_admins_advance_after_a_partner_left_names_the_one_who_left_and_pays_the_one_left_behind",
    ),
    Protection(
        "odd-pairs",
        "one person in person-vs-person DoND is never paired",
        "backend/core/launch_check.py",
        "    if places % 2:\n",
        "    if False:\n",
        "tests/backend/core/test_launch_check.py::test_an_odd_number_of_places_in_a_game_of_two_people_is_a_problem",
    ),
    Protection(
        "time-limit-vs-estimate",
        "a time limit far below the workload estimate cuts most people off unseen",
        "backend/core/launch_check.py",
        "        if seconds < unit_s:\n",
        "        if False:\n",
        "tests/backend/core/test_launch_check.py::test_a_time_limit_far_below_the_workload_estimate_is_a_problem",
    ),
    Protection(
        "admission-cookie-bound",
        "one admission cookie lets any number of new PIDs past the waiting line",
        "lab_server/admission.py",
        '    return ADMITTED_COOKIE + json.dumps([path.rstrip("/"), label])\n',
        "    return ADMITTED_COOKIE\n",
        "tests/system/test_admission.py::test_an_admission_cookie_lets_in_only_the_link_and_pid_it_admitted",
    ),
    Protection(
        "page-budget",
        "one participant reloading in a loop keeps every new arrival on the waiting page",
        "lab_server/budgets.py",
        "    around_app(page_budgeting, outside_page_lock=True)\n",
        "",
        "tests/system/test_page_budgets.py::test_a_participant_reloading_in_a_loop_is_refused_quickly_and_new_arrivals_still_come_in",
    ),
    Protection(
        "release-grouped-ids",
        "a Prolific ID typed in groups reaches the published dataset",
        "backend/core/release.py",
        "(GROUPED_ID, lambda found: _grouped_id(found)), ",
        "",
        "tests/backend/core/test_publishing_parts.py::test_a_prolific_id_typed_in_groups_is_masked_in_free_text",
    ),
    Protection(
        "release-manifest-names",
        "the release's manifest names the researcher's folders and a session code",
        "backend/core/release_cli.py",
        "        argv=public_argv(argv, paths, names, scrub),\n",
        "        argv=argv,\n",
        "tests/backend/core/test_publishing_parts.py::test_the_release_manifest_names_no_folder_of_the_machine_and_no_session_code",
    ),
    Protection(
        "markdown-escape",
        "a model name with <script>, | or a line break becomes HTML or breaks a Markdown table row",
        "backend/core/paper_tables.py",
        '        out.append(char if char == "_" and inside_word else MARKDOWN_SPECIALS.get(char, char))\n',
        "        out.append(char)\n",
        "tests/backend/core/test_publishing_parts.py::test_markdown_tables_escape_html_newlines_and_pipes_in_every_cell",
    ),
    Protection(
        "latex-line-breaks",
        "a blank line in a name stops the LaTeX table from compiling",
        "backend/core/paper_tables.py",
        '    **FLATTENED,\n    "\\\\": r"\\textbackslash{}",',
        '    "\\\\": r"\\textbackslash{}",',
        "tests/backend/core/test_publishing_parts.py::test_latex_tables_escape_every_cell_and_compile",
    ),
    Protection(
        "launch-check-testers",
        "the launch check counts places testers took as the study's",
        "lab_server/study_pages.py",
        "        places=session.num_participants - testers,\n",
        "        places=session.num_participants,\n",
        "tests/system/test_launch_check_rooms.py::test_places_a_tester_took_are_not_counted_as_the_studys",
    ),
    Protection(
        "bias-report-testers",
        "the bias report counts test participants in its figures",
        "bias_tests/admin.py",
        "    players, _ = test_data.report_rows(subsession.session, everyone, lambda player: (player.participant.code,))\n",
        "    players = everyone\n",
        "tests/system/test_otree_exports_tests.py::test_the_bias_report_leaves_a_tester_out_and_says_so_and_a_demo_report_says_it_is_test_data",
    ),
    Protection(
        "otree-codebook",
        "a column of oTree's own exports has no codebook entry",
        "backend/codebook/otree.py",
        '        Column("player.points", "integer", "points", "The person\'s points from the game."),\n',
        "",
        "tests/apps/test_otree_codebook.py::test_every_model_field_of_every_app_has_a_codebook_entry_of_its_type",
    ),
    Protection(
        "one-participant-code",
        "social_eval exports the participant code twice (annotator, participant_code)",
        "backend/codebook/social.py",
        'ANNOTATION = ["annotator", "prolific_pid",',
        'ANNOTATION = ["annotator", "participant_code", "prolific_pid",',
        "tests/backend/test_codebook.py::test_every_export_says_session_config_language_and_test_and_has_one_pid_column",
    ),
    Protection(
        "reservation-minutes",
        "a participant reads 'reserved for you for 1 minutes'",
        "social_eval/texts.py",
        '        "reserved": Plural(\n            "{count} minute",\n',
        '        "reserved": Plural(\n            "{count} minutes",\n',
        "tests/backend/social/test_reservation_minutes.py::test_one_minute_is_singular_and_more_are_plural_in_every_language",
    ),
    Protection(
        "page-budget-routes",
        "a flood of /OutOfRangeNotification/<code> holds new arrivals on the waiting page",
        "lab_server/budgets.py",
        '_PARTICIPANT_PAGE = re.compile(r"/(?:p|InitializeParticipant|OutOfRangeNotification)/([^/]+)")\n',
        '_PARTICIPANT_PAGE = re.compile(r"/(?:p|InitializeParticipant)/([^/]+)")\n',
        "tests/system/test_page_budgets.py::test_the_out_of_range_page_and_upper_cased_codes_count_against_the_participant",
    ),
    Protection(
        "page-budget-case",
        "each upper-cased spelling of a code is a fresh page budget",
        "lab_server/budgets.py",
        "    return found.group(1).lower() if found else None\n",
        "    return found.group(1) if found else None\n",
        "tests/system/test_page_budgets.py::test_the_out_of_range_page_and_upper_cased_codes_count_against_the_participant",
    ),
    Protection(
        "page-budget-unknown-codes",
        "each made-up participant code gets a burst of its own and floods oTree's lock",
        "lab_server/budgets.py",
        '        return self.unknown.take(f"address={address}", now=now)\n',
        "        return True\n",
        "tests/system/test_page_budgets.py::test_made_up_codes_share_one_budget_per_address_and_a_new_arrival_from_it_still_comes_in",
    ),
    Protection(
        "page-budget-session-learning",
        "a session's other people pay the address budget during a flood",
        "lab_server/budgets.py",
        "                self.learn(found)\n",
        "                self.learn({code})\n",
        "tests/system/test_page_budgets.py::test_made_up_codes_share_one_budget_per_address_and_a_new_arrival_from_it_still_comes_in",
    ),
    Protection(
        "page-budget-redirect-learning",
        "a new arrival behind a flooding address is refused its start link",
        "lab_server/budgets.py",
        "        if path.startswith(_ENTRY_LINKS):\n            await app(scope, receive, self._learning_from_redirects(send))\n            return\n",
        "",
        "tests/system/test_page_budgets.py::test_made_up_codes_share_one_budget_per_address_and_a_new_arrival_from_it_still_comes_in",
    ),
    Protection(
        "payments-testers-marked",
        "oTree's Payments page shows a tester as a real participant",
        "lab_server/outputs.py",
        "LabelEscaped(p, test=test_data.is_test(p))",
        "LabelEscaped(p)",
        "tests/system/test_study_ops.py::test_the_payments_page_marks_the_tester_and_leaves_them_out_of_the_total_and_mean",
    ),
    Protection(
        "payments-testers-total",
        "oTree's Payments total and mean include test participants",
        "lab_server/outputs.py",
        "[row for row in rows if not row.test]",
        "rows",
        "tests/system/test_study_ops.py::test_the_payments_page_marks_the_tester_and_leaves_them_out_of_the_total_and_mean",
    ),
    Protection(
        "fee-stored",
        "an edited participation fee changes what people were told on the consent page",
        "study_flow/workload.py",
        'stated = pay.fee_shown(player.participant, config, currency)["text"]',
        "stated = pay_text(config, currency)",
        "tests/system/test_study_ops.py::test_an_edited_fee_leaves_what_a_consent_page_stated_on_the_payments_page_and_pay_and_review_says_it",
    ),
    Protection(
        "payments-stated-fee",
        "oTree's Payments page pays today's fee, not the one the consent page stated",
        "lab_server/outputs.py",
        "bonus, fee = self._stated(), pay.stated_fee(self._participant)",
        "bonus, fee = self._stated(), None",
        "tests/system/test_study_ops.py::test_an_edited_fee_leaves_what_a_consent_page_stated_on_the_payments_page_and_pay_and_review_says_it",
    ),
    Protection(
        "pay-review-fee",
        "Pay and review says nothing of the fees people were shown",
        "lab_server/study_pages.py",
        '        + pay.fee_summary([person["fee_shown"] for person in everyone], current=config.get("participation_fee")),\n',
        "        + [],\n",
        "tests/system/test_study_ops.py::test_an_edited_fee_leaves_what_a_consent_page_stated_on_the_payments_page_and_pay_and_review_says_it",
    ),
    Protection(
        "screenshot-error-status",
        "the docs' pictures show an error page (the 12 'Not Found' admin reports)",
        "docs/screenshots.py",
        '    if status >= 400:\n        return f"it answered status {status}"\n',
        "",
        "tests/backend/test_docs_screenshots.py::test_the_script_refuses_error_and_blank_pages",
    ),
    Protection(
        "screenshot-not-found-body",
        "a 'Not Found' page answered 200 is photographed into the docs",
        "docs/screenshots.py",
        '    if " ".join(words).lower() in ERROR_BODIES:\n',
        "    if False:\n",
        "tests/backend/test_docs_screenshots.py::test_the_script_refuses_error_and_blank_pages",
    ),
    Protection(
        "cost-cap-reserve",
        "calls in flight are not counted: 32 calls at once all pass a spending cap",
        "backend/core/llm/costs.py",
        "            self.held += held\n",
        "            pass\n",
        "tests/backend/core/test_costs.py::test_a_cap_holds_with_32_calls_in_flight_and_a_refused_call_is_never_sent",
    ),
    Protection(
        "runner-estimate-refusal",
        "a runner whose estimate passes --max-cost makes its calls anyway",
        "backend/core/runs.py",
        "            raise run_costs.CostCapExceeded(refusal)\n",
        "            pass\n",
        "tests/backend/core/test_costs.py::test_every_runner_refuses_a_run_over_its_cap_before_its_first_call",
    ),
    Protection(
        "selfplay-pilot-estimate",
        "the self-play estimate ignores the pilot and misses the cost by more than 25 %",
        "backend/dond/selfplay.py",
        "    pilot = pilot_of(out, done)\n",
        "    pilot = costs.Measured(0, 0, 0, 0)\n",
        "tests/backend/core/test_costs.py::test_a_selfplay_estimate_from_a_pilot_is_within_25_percent_of_the_cost_measured",
    ),
    Protection(
        "study-cost-cap",
        "a live DoND study goes on paying for model calls past llm_cost_cap",
        "dond/live.py",
        "        spend=cap,",
        "        spend=None,",
        "tests/system/test_cost_cap.py::test_a_live_dond_study_at_its_cap_ends_the_game_pays_the_stated_rule_and_says_so",
    ),
    Protection(
        "judge-admitted-at-lower-bound",
        "a model judge is admitted on a lucky point estimate of its agreement with people",
        "backend/reasoning/judge_scores.py",
        '    found["admission"] = calibration.admission(intervals["kappa_people"][0], admit_at)\n',
        '    found["admission"] = calibration.admission(found["kappa_people"], admit_at)\n',
        "tests/apps/test_judge_calibration.py::test_a_judge_with_three_samples_reports_confidence_ece_brier_and_admission_against_peoples_export",
    ),
    Protection(
        "bootstrap-spearman-ties",
        "a resample's rank correlation ignores duplicated units, so agreement intervals are wrong",
        "backend/core/unit_bootstrap.py",
        "    return (below + (per_value + 1) / 2)[:, group]\n",
        "    return (below + 1)[:, group]\n",
        "tests/backend/core/test_calibration.py::test_correlations_and_differences_of_each_resample_equal_scipy_on_the_duplicated_pairs",
    ),
    Protection(
        "release-any-separator",
        "a Prolific ID typed with en dashes or zero-width spaces (a phone's autocorrect) reaches the published dataset",
        "backend/core/text_view.py",
        "        return masked(text, self.regex, mask)\n",
        "        return self.regex.sub(mask, text)\n",
        "tests/backend/core/test_publishing_parts.py::test_a_prolific_id_typed_with_any_separator_is_masked_in_free_text",
    ),
    Protection(
        "release-id-gap",
        "a Prolific ID typed with commas, slashes, colons, pipes or a line break and indentation reaches the dataset",
        "backend/core/release.py",
        'ID_GAP = r"(?>\\s{0,16}(?:[-._,/:;|+\\u00b7\\u2022*~]{1,3}\\s{0,16})?)"',
        'ID_GAP = r"[\\s._-]{0,3}"',
        "tests/backend/core/test_publishing_parts.py::test_a_prolific_id_typed_with_any_separator_is_masked_in_free_text",
    ),
    Protection(
        "release-glued-ids",
        "a Prolific ID glued to a word (myid5f1a...) reaches the published dataset",
        "backend/core/release.py",
        "    return GLUED_ID.sub(lambda found: _glued_id(found), text)\n",
        "    return text\n",
        "tests/backend/core/test_publishing_parts.py::test_a_prolific_id_glued_to_a_word_is_masked_and_longer_hashes_stay",
    ),
    Protection(
        "release-pseudonym-exemption",
        "a Prolific ID typed after 'P-' reaches the published dataset (only a release pseudonym is exempt)",
        "backend/core/release.py",
        "(?!(?<=[PXQTS]-)[0-9a-f]{16}(?![0-9A-Za-z]))",
        "(?<![PXQTS]-)",
        "tests/backend/core/test_publishing_parts.py::test_a_prolific_id_glued_to_a_word_is_masked_and_longer_hashes_stay",
    ),
    Protection(
        "release-escaped-breaks",
        "a Prolific ID after an export's escaped line break (\\n) reaches the published dataset",
        "backend/core/text_view.py",
        'ESCAPED_BREAKS = re.compile(r"\\\\+[nrt]?")',
        'ESCAPED_BREAKS = re.compile(r"(?!)")',
        "tests/backend/core/test_publishing_parts.py::test_an_id_typed_in_a_dond_chat_leaves_neither_the_text_nor_the_models_messages",
    ),
    Protection(
        "report-manifest-names",
        "a report's manifests (--latex, --markdown, --figures, --manifest) name the researcher's folders and a session code",
        "backend/__main__.py",
        "    public = publish.public_record(\n"
        "        args.files, argv=argv, options=options, environ=os.environ, sessions=args.session, servers=servers\n"
        "    )\n",
        "    public = publish.PublicRecord([str(path) for path in args.files], argv, options)\n",
        "tests/backend/core/test_publishing_parts.py::test_the_report_manifests_name_no_folder_of_the_machine_and_no_session_code",
    ),
    Protection(
        "release-codebook-codes",
        "a session code quoted in a researcher's --codebook meaning reaches the release's card",
        "backend/core/release_cli.py",
        "            descriptions = {\n"
        "                column: scrub(text) if isinstance(text, str) else text for column, text in descriptions.items()\n"
        "            }\n",
        "            pass\n",
        "tests/backend/core/test_publishing_parts.py::test_a_researchers_codebook_meanings_name_no_session_code_on_the_card",
    ),
    Protection(
        "markdown-dollar",
        "a name with $x$ is typeset as math in a Markdown table or on the data card (GitHub)",
        "backend/core/paper_tables.py",
        '"\\\\`*_[]|~#$"',
        '"\\\\`*_[]|~#"',
        "tests/backend/core/test_publishing_parts.py::test_markdown_escapes_dollar_signs_that_github_renders_as_math_in_tables_and_the_data_card",
    ),
    Protection(
        "live-budget-session-figure",
        "a session's live_messages_per_minute is ignored by the server's live budget",
        "lab_server/languages.py",
        '            remember_live_budget(code, getattr(session, "config", None))  # their session\'s live budget, if it sets one\n',
        "",
        "tests/system/test_live_budgets.py::test_a_sessions_live_messages_per_minute_raises_the_servers_budget",
    ),
    Protection(
        "live-budget-polite-refusal",
        "an honest fast typist's live socket is closed without a word instead of being told to wait",
        "lab_server/budgets.py",
        "                if polite and wait_s != CLOSE:  # answered as the page's live method answers a refusal\n",
        "                if False:\n",
        "tests/system/test_live_budgets.py::test_a_message_over_the_sessions_budget_is_refused_politely_in_the_participants_language",
    ),
    Protection(
        "response-cache-success-only",
        "a failed model call is cached and replayed as an answer on a rerun",
        "backend/core/llm/cache.py",
        "    return record.error is None and bool(record.reply.strip()) and not record.cached\n",
        "    return not record.cached\n",
        "tests/backend/core/test_response_cache.py::test_only_a_successful_answer_is_kept_so_a_failure_is_never_replayed",
    ),
    Protection(
        "pay-as-shown",
        "an edit of the money per point after people saw their bonus rewrites the bonus file",
        "study_flow/pay.py",
        "    record = participant.vars.get(PAY_SHOWN)\n    if isinstance(record, dict):\n",
        "    record = None\n    if isinstance(record, dict):\n",
        "tests/system/test_study_ops.py::test_a_rate_edited_after_people_saw_their_bonus_changes_only_the_bonuses_not_yet_shown",
    ),
    Protection(
        "turn-clock-from-could-act",
        "a partner still reading the Instructions is taken for gone and paid nothing",
        "dond/live.py",
        "        partner_could_act=partner.live_since or None,\n",
        "        partner_could_act=partner.live_since or game.created_at,\n",
        "tests/apps/test_dond_seat_records.py::test_a_partner_reading_the_instructions_is_not_gone_and_the_one_who_left_is_named",
    ),
    Protection(
        "no-model-call-no-model-failure",
        "a game whose page never connected (the model never asked) is paid as the model's failure",
        "backend/dond/game.py",
        "    if not page_connected:\n",
        "    if False:\n",
        "tests/apps/test_dond_seat_records.py::test_a_game_whose_page_never_connected_is_not_paid_as_a_model_failure",
    ),
    Protection(
        "tiers-follow-harness",
        "a test that starts a server only through a harness helper is taken for fast (and left out of the db run)",
        "tests/support/tiers.py",
        '    return (module or "").split(".")[0] in ("tests", "harness")\n',
        '    return (module or "").split(".")[0] in ("tests",)\n',
        "tests/backend/test_tiers.py::test_a_server_started_through_a_harness_helper_is_seen",
    ),
    Protection(
        "product-never-imports-harness",
        "an app or backend module imports the test harness unnoticed",
        "tests/backend/test_layers.py",
        'OUTSIDE = ("tests", "bench", "harness")',
        'OUTSIDE = ("tests", "bench")',
        "tests/backend/test_layers.py::test_a_deliberate_upward_import_is_found",
    ),
    Protection(
        "template-escape",
        "a researcher's words (rubric, episodes, study_title) holding <img onerror> or </script> become elements",
        "social_eval/Rate.html",
        '<p id="scenario">{{ episode.scenario|escape }}</p>',
        '<p id="scenario">{{ episode.scenario }}</p>',
        "tests/apps/test_outside_text_lands_as_text.py::test_a_researchers_markup_is_shown_as_text_once_on_every_social_eval_page",
    ),
    Protection(
        "template-escape-scan",
        "a template prints a catalogue text or an outside value raw (oTree 6 does not autoescape)",
        "dond/Pairing.html",
        '<p id="pairing-rule">{{ rule|escape }}</p>',
        '<p id="pairing-rule">{{ rule }}</p>',
        "tests/apps/test_template_escaping.py::test_every_output_of_every_template_is_escaped_or_allowed_raw_with_its_reason",
    ),
    Protection(
        "escaped-once",
        "a researcher's text escaped twice (view, then template) shows &amp; and &#x27; to participants",
        "social_eval/views.py",
        "        scenario=episode.scenario,\n",
        '        scenario=__import__("html").escape(episode.scenario),\n',
        "tests/apps/test_outside_text_lands_as_text.py::test_a_researchers_markup_is_shown_as_text_once_on_every_social_eval_page",
    ),
    Protection(
        "estimate-prompt-per-character",
        "a pilot on short episodes estimates 0.57 of what the long ones planned cost",
        "backend/core/run_costs.py",
        "            if per_char is not None:  # scaled by this unit's prompt size against the pilot's\n",
        "            if False:\n",
        "tests/backend/core/test_costs.py::test_an_annotator_estimate_from_a_pilot_on_a_short_episode_scales_to_the_long_ones_planned",
    ),
    Protection(
        "judge-pilot-handover",
        "a resumed model judge estimates the rest from the dry run's upper bound, not from the logs already judged",
        "backend/reasoning/judge.py",
        '    run_costs.use_pilot(pilot, unit="log",',
        '    (lambda *_, **__: None)(pilot, unit="log",',
        "tests/backend/core/test_costs.py::test_a_judge_resumed_after_a_pilot_estimates_the_rest_from_the_pilots_tokens",
    ),
    Protection(
        "real-model-estimate",
        "a runner's estimate is about 4x what its calls cost on a real model server",
        "backend/core/run_costs.py",
        "            prompt = sum(chars for _, chars, _ in calls) / len(calls) / costs.ESTIMATE_CHARS_PER_TOKEN\n",
        "            prompt = sum(chars for _, chars, _ in calls) / len(calls)\n",
        "tests/system/test_real_model.py::test_a_runs_estimate_is_within_25_percent_of_what_the_real_models_calls_cost",
    ),
    Protection(
        "pilot-units-as-measured",
        "a pilot unit whose tokens were not reported counts its prompt size against the others' tokens: 0.72 of the cost",
        "backend/social/annotator.py",
        "pilot_units=[unit for unit in units if unit.key in pilot.keys]",
        "pilot_units=[unit for unit in units if unit.key in done]",
        "tests/backend/core/test_costs.py::test_a_pilot_unit_without_reported_tokens_is_left_out_of_the_prompt_sizes_too",
    ),
    Protection(
        "session-label-escaped",
        "a session label a researcher typed (REST call or Edit page) runs as HTML on oTree's Sessions list",
        "lab_server/outputs.py",
        "        return html.escape(label) if isinstance(label, str) else label\n",
        "        return label\n",
        "tests/apps/test_outside_text_lands_as_text.py::test_a_session_label_a_researcher_typed_is_shown_as_text_on_the_sessions_list",
    ),
    Protection(
        "figure-labels-not-mathtext",
        "a name with $ from the data loses its dollar signs or fails the admin report's figures (matplotlib mathtext)",
        "backend/core/figures.py",
        '    "text.parse_math": False,  # labels come from the data (model, game names): "$10 of $100" is text, never mathtext\n',
        "",
        "tests/backend/core/test_publishing_parts.py::test_a_dollar_in_a_label_from_the_data_is_drawn_as_written_not_as_math",
    ),
    Protection(
        "escape-any-value",
        "a None or a number reaching |escape fails the whole page (oTree's filter needs text)",
        "lab_server/outputs.py",
        '    filters["escape"] = _escape_any_value(filters["escape"])\n',
        "",
        "tests/apps/test_template_escaping.py::test_escape_prints_any_value_as_a_raw_output_would_and_never_fails_the_page",
    ),
)


def copy_project(target: Path) -> None:
    """The project's files (not git, environments or caches) copied into ``target``."""
    shutil.copytree(PROJECT_ROOT, target, symlinks=True, ignore=shutil.ignore_patterns(*SKIPPED))


def _run(test: str, root: Path) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", test]
    return subprocess.run(command, cwd=root, capture_output=True, text=True, timeout=900)


def check(protection: Protection) -> str:
    """The verdict on one entry: "fails without it" when its test passes in the copy with the protection and fails
    once the protection is removed; otherwise what happened."""
    with tempfile.TemporaryDirectory(prefix="protection-") as folder:
        root = Path(folder) / PROJECT_ROOT.name
        copy_project(root)
        path = root / protection.file
        text = path.read_text(encoding="utf-8")
        if text.count(protection.protected) != 1:
            return "stale: the protected text is not (once) in the file"
        control = _run(protection.test, root)
        if control.returncode != 0:
            return f"error: the test fails with the protection in place: {(control.stdout + control.stderr)[-800:]}"
        path.write_text(text.replace(protection.protected, protection.removed), encoding="utf-8")
        done = _run(protection.test, root)
    if done.returncode == 1:
        return "fails without it"
    if done.returncode == 0:
        return "PASSES WITHOUT IT: the test does not guard this protection"
    return f"error (pytest exit {done.returncode}): {(done.stdout + done.stderr)[-500:]}"


def table() -> str:
    """The Markdown table of the entries."""
    rows = ["| name | without it | protection | guarding test |", "|---|---|---|---|"]
    rows += [f"| `{p.name}` | {p.guards} | `{p.file}` | `{p.test}` |" for p in PROTECTIONS]
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="entries to check (default: all)")
    parser.add_argument("--list", action="store_true", help="print the table of entries and stop")
    options = parser.parse_args(argv)
    if options.list:
        print(table())
        return 0
    known = {p.name: p for p in PROTECTIONS}
    unknown = sorted(set(options.names) - set(known))
    if unknown:
        parser.error(f"unknown entries {unknown}; known: {sorted(known)}")
    chosen = [known[name] for name in options.names] or list(PROTECTIONS)
    failures = 0
    for protection in chosen:
        result = check(protection)
        failures += result != "fails without it"
        print(f"{protection.name}: {result}", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
