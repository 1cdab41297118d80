"""The social_eval exports' columns (ratings long and wide, qualification, assignment log)."""

from __future__ import annotations

from .columns import INTEGRITY, PEOPLE, STUDY, Column, Export, by_name, pick

KNOWN = by_name(
    *STUDY,
    *PEOPLE,
    INTEGRITY,
    Column("episode_id", "text", "", "The rated episode (conversation)."),
    Column("episode_group", "text", "", "The episode's group (e.g. the model pair or source file) from the episodes."),
    Column("is_gold", "0/1", "", "1 for a gold episode (its ratings are known and check the annotator)."),
    Column("agent_index", "integer", "", "Which agent of the episode is rated: 1 or 2."),
    Column("agent_name", "text", "", "The rated agent's name in the episode."),
    Column("agent_model", "text", "", "The model that played the rated agent, where the episode names it."),
    Column("dimension", "text", "", "The rubric dimension rated (e.g. goal, believability)."),
    Column("scale_min", "integer", "scale points", "The lowest rating the dimension allows."),
    Column("scale_max", "integer", "scale points", "The highest rating the dimension allows."),
    Column("rating", "integer", "scale points", "The annotator's rating, between scale_min and scale_max."),
    Column("reasoning", "text", "", "The annotator's explanation; line breaks written as \\n."),
    Column("model_rater", "text", "", "The model whose rating of this agent and dimension the episode carries."),
    Column("model_rating", "number", "scale points", "That model's rating; empty where the episode has none."),
    Column("gold_rating", "number", "scale points", "The known rating of a gold episode; empty otherwise."),
    Column(
        "annotator",
        "text",
        "",
        "oTree's participant code of the annotator: the value the qualified export and every other app's export call "
        "participant_code (this export has it once, under the name of Sotopia's layout, which its readers use).",
    ),
    Column("round", "integer", "", "The annotator's round in which the episode was rated (1 = first)."),
    Column("seconds_spent", "number", "seconds", "From showing the Rate page to submitting it (one episode)."),
    Column(
        "step_seconds",
        "number",
        "seconds",
        "Time on this rating's step of the Rate page, as the browser measured it; empty when the page sent no "
        "plausible timings (see step_times_ok).",
    ),
    Column(
        "step_times_ok",
        "0/1",
        "",
        "1 when the browser's step timings were stored and plausible (one per step, each at least 0, together no "
        "more than seconds_spent); 0 when they were missing or implausible (step_seconds is then empty).",
    ),
    Column("attention_passed", "0/1", "", "On a gold episode: 1 when every rating was within gold_tolerance."),
    Column("shown_at", "time", "ISO-8601 UTC", "When the Rate page was first shown."),
    Column("submitted_at", "time", "ISO-8601 UTC", "When the ratings were submitted."),
    Column("rubric", "text", "", "The rubric's name (which dimensions and scales)."),
    Column("<dimension>_<agent>", "integer", "scale points", "Wide layout: the rating of agent 1 or 2 on a dimension."),
    Column(
        "<dimension>_reasoning_<agent>",
        "text",
        "",
        "Wide layout: the explanation of that rating; line breaks written as \\n.",
    ),
    Column(
        "<dimension>_seconds_<agent>",
        "number",
        "seconds",
        "Wide layout: time on that rating's step of the Rate page (see step_seconds).",
    ),
    Column("gold_rated", "integer", "episodes", "Gold episodes the annotator rated."),
    Column("gold_passed", "integer", "episodes", "Gold episodes rated within gold_tolerance on every dimension."),
    Column("max_difference", "number", "scale points", "The largest distance from a gold rating."),
    Column("qualified", "0/1", "", "1 when every gold episode required was rated and all were passed."),
    Column("last_submitted_at", "time", "ISO-8601 UTC", "When the annotator's last gold episode was submitted."),
    Column("status", "text", "", "The reservation: reserved (held, not finished), done, or released."),
    Column("reserved_at", "time", "ISO-8601 UTC", "When the episode was given to the annotator."),
    Column("done_at", "time", "ISO-8601 UTC", "When the annotator finished it; empty until done."),
)
STUDY_NAMES = [column.name for column in STUDY]
RATING = ["episode_id", "episode_group", "is_gold", "agent_index", "agent_name", "agent_model", "dimension"]
# Who: the annotator's participant code once, as "annotator" (Sotopia's name, read by the report, the release and the
# conformance tests), with no second column of the same value.
ANNOTATION = ["annotator", "prolific_pid", "study_id", "prolific_session_id", "round"]
WHEN = ["seconds_spent", "attention_passed", "shown_at", "submitted_at"]

EXPORTS = (
    Export(
        "social_eval",
        "custom_export_ratings_long",
        "one rating: an annotator's rating of one agent of one episode on one dimension",
        pick(
            KNOWN,
            [
                *STUDY_NAMES,
                *RATING,
                "scale_min",
                "scale_max",
                "rating",
                "reasoning",
                "model_rater",
                "model_rating",
                "gold_rating",
                *ANNOTATION,
                *WHEN,
                "step_seconds",
                "step_times_ok",
                "rubric",
                "integrity",
            ],
        ),
    ),
    Export(
        "social_eval",
        "custom_export_ratings_wide",
        "one annotation: all ratings of one episode by one annotator (Sotopia's layout)",
        pick(
            KNOWN,
            [
                *STUDY_NAMES,
                "episode_id",
                "episode_group",
                "is_gold",
                *ANNOTATION,
                *WHEN,
                "step_times_ok",
                "rubric",
                "integrity",
                "<dimension>_<agent>",
                "<dimension>_reasoning_<agent>",
                "<dimension>_seconds_<agent>",
            ],
        ),
    ),
    Export(
        "social_eval",
        "custom_export_qualified",
        "one annotator of a session with gold episodes: how they did on them",
        pick(
            KNOWN,
            [
                *STUDY_NAMES,
                "participant_code",
                "prolific_pid",
                "study_id",
                "prolific_session_id",
                "gold_rated",
                "gold_passed",
                "max_difference",
                "qualified",
                "last_submitted_at",
                "integrity",
            ],
        ),
    ),
    Export(
        "social_eval",
        "custom_export_assignments",
        "one reservation: which annotator held or finished which episode, and when",
        pick(
            KNOWN,
            [
                *STUDY_NAMES,
                "episode_id",
                "annotator",
                "prolific_pid",
                "study_id",
                "prolific_session_id",
                "status",
                "reserved_at",
                "done_at",
                "round",
                "is_gold",
                "integrity",
            ],
        ),
    ),
)
