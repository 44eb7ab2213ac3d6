"""Answer parsing: the lenient parser recovers what a careful reader would, the paper parser
reproduces the published rule, and neither ever raises."""
from __future__ import annotations

import pytest

from eduart_core.answers import ParsedAnswer, parse_answer, parse_answer_paper

TWO = [{"id": "A", "text": "TRUE"}, {"id": "B", "text": "FALSE"}]
PLAIN = '{"Answers": [{"id": "A", "text": "TRUE"}, {"id": "B", "text": "FALSE"}]}'


@pytest.mark.parametrize("raw", [
    PLAIN,
    "```json\n" + PLAIN + "\n```",
    "```\n" + PLAIN + "\n```",
    "Ecco la mia risposta:\n" + PLAIN + "\nSpero sia utile!",
    "Here is the JSON you asked for: ```json\n" + PLAIN + "\n``` Let me know.",
    "{" + PLAIN + "}",
    '{{"Answers": [{{"id": "A", "text": "TRUE"}}, {{"id": "B", "text": "FALSE"}}]}}',
    '{"Answers": [{"id": "A", "text": "TRUE"}, {"id": "B", "text": "FALSE"},],}',
    '{"answers": [{"id": "A", "text": "TRUE"}, {"id": "B", "text": "FALSE"}]}',
    '{"ANSWERS": [{"ID": "A", "Text": "TRUE"}, {"Id": "B", "TEXT": "FALSE"}]}',
], ids=["plain", "fenced", "fenced-no-lang", "prose", "prose-and-fence", "double-outer",
        "double-everywhere", "trailing-comma", "lower-key", "upper-keys"])
def test_recovers_the_answers(raw):
    parsed = parse_answer(raw)
    assert parsed.parse_error is None
    assert parsed.answers == TWO


def test_motivation_is_kept():
    parsed = parse_answer('```json\n{"Answers": [{"id": "C"}], "motivation": "Il colore '
                          'steso a velature indica l\'olio."}\n```')
    assert parsed.answers == [{"id": "C"}]
    assert parsed.motivation == "Il colore steso a velature indica l'olio."


def test_truncated_response_keeps_complete_entries():
    raw = ('{"motivation": "Le date tornano.", "Answers": [{"id": "A", "text": "TRUE"}, '
           '{"id": "B", "text": "FALSE"}, {"id": "C", "te')
    parsed = parse_answer(raw)
    assert parsed.answers == TWO
    assert parsed.motivation == "Le date tornano."
    assert parsed.parse_error is None and "truncated" in parsed.repairs


def test_truncated_before_any_entry_is_unparseable():
    parsed = parse_answer('{"Answers": [{"id": "A", "te')
    assert parsed.answers is None and "cut off" in parsed.parse_error


@pytest.mark.parametrize("raw,reason", [
    ("", "empty"), ("   \n ", "empty"), (None, "empty"),
    ("B", "no JSON"), ("La risposta corretta è la C.", "no JSON"),
    ('{"risposta": "C"}', "Answers"), ('{"Answers": "C"}', "not a list"),
])
def test_unusable_responses_say_why(raw, reason):
    parsed = parse_answer(raw)
    assert parsed.answers is None
    assert reason in parsed.parse_error


def test_empty_answers_list_is_a_parsed_answer():
    parsed = parse_answer('{"Answers": []}')
    assert parsed.answers == [] and parsed.parse_error is None


def test_later_json_found_when_first_brace_is_prose():
    parsed = parse_answer('Uso le {graffe} così: {"Answers": [{"id": "B"}]}')
    assert parsed.answers == [{"id": "B"}]


def test_braces_inside_strings_do_not_confuse_the_parser():
    raw = 'ok {"Answers": [{"id": "A", "text": "un } e un { e \\" virgolette"}]} fine'
    assert parse_answer(raw).answers == [{"id": "A", "text": 'un } e un { e " virgolette'}]


@pytest.mark.parametrize("raw", [
    "{" * 200_000, "[" * 200_000, '"Answers":' * 50_000, '{"Answers": [' * 50_000,
    "\\" * 100_000 + '"', "```" * 50_000, '{"a": "' + '\\"' * 100_000,
    "\x00\ud800 \uffff", "{'Answers': [{'id': 'A'", "}" * 10_000 + "{",
])
def test_never_raises_on_hostile_input(raw):
    parsed = parse_answer(raw)
    assert isinstance(parsed, ParsedAnswer)
    assert isinstance(parse_answer_paper(raw), (list, str))


def test_huge_input_is_parsed():  # its speed: `python -m eduart_core bench parsing`
    prose = "Analisi della pittura veneta. " * 200_000  # ~6 MB
    raw = prose + '{"Answers": [{"id": "D"}]}' + prose + "{ non chiuso"
    assert parse_answer(raw).answers == [{"id": "D"}]
    many = '{"Answers": [' + ", ".join('{"id": "A", "text": "x"}' for _ in range(100_000))
    assert len(parse_answer(many).answers) == 100_000


# --- the published parsing rule ----------------------------------------------------------------

@pytest.mark.parametrize("raw", [
    PLAIN, "```json\n" + PLAIN + "\n```", "{" + PLAIN + "}", "  " + PLAIN + "\n",
])
def test_paper_parser_accepts_what_the_published_rule_accepts(raw):
    assert parse_answer_paper(raw) == TWO


@pytest.mark.parametrize("raw", [
    "Ecco: " + PLAIN,
    '{"Answers": [{"id": "A"},]}',
    '{"Answers": [{"id": "A"}, {"id": "B", "te',
    '{"answers": [{"id": "A"}]}',
    '{{"Answers": [{{"id": "A"}}]}}',
    "B", "",
])
def test_paper_parser_leaves_everything_else_as_the_raw_string(raw):
    assert parse_answer_paper(raw) == raw


def test_paper_parser_keeps_valid_json_ending_in_double_brace():
    raw = '{"Answers": [{"id": "A", "extra": {"x": 1}}]}'
    assert parse_answer_paper(raw) == [{"id": "A", "extra": {"x": 1}}]


def test_paper_parser_passes_imported_lists_through():
    assert parse_answer_paper(TWO) is TWO
    assert parse_answer_paper(None) == ""
