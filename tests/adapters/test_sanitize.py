"""Model output is made safe for Slack and cut to fit Block Kit's limits."""

from __future__ import annotations

import random
import re

import pytest

from nightwatch.adapters.slack.sanitize import (
    SLACK_LIMITS,
    WORD_JOINER,
    BlockLimits,
    sanitize,
    split_for_blocks,
)

THREAD = {"U0ALICE", "W0BOB"}
PINGS = re.compile(r"<!(?!date\^)|<@(?!U0ALICE>|W0BOB>)|(?<![\w@])@(?:here|channel|everyone)\b", re.IGNORECASE)


def safe(text: str) -> str:
    return sanitize(text, allowed_users=THREAD)


@pytest.mark.parametrize(
    "hostile",
    [
        "<!channel>",
        "<!here>",
        "<!everyone>",
        "<!here|here>",
        "<!channel|@channel>",
        "<!everyone|everyone>",
        "<!HERE>",
        "@channel",
        "@here",
        "@everyone",
        "@Here!",
        "(@channel)",
        "<!subteam^S0123ABC>",
        "<!subteam^S0123ABC|@security-team>",
        "<@U0STRANGER>",
        "<@W0STRANGER|mallory>",
        "<@U0STRANGER|@here>",
        "<<!channel>>",
        "<!here >",
        "<!group>",
        "<!date^1700000000^{date}|@here>",
    ],
)
def test_no_broadcast_group_or_unknown_user_mention_survives(hostile: str) -> None:
    cleaned = safe(f"Heads up {hostile} please look.")
    assert not PINGS.search(cleaned), cleaned
    assert cleaned.startswith("Heads up ")
    assert cleaned.endswith(" please look.")


def test_neutralised_mentions_still_read_as_the_name() -> None:
    assert safe("<!here|here> and @everyone").replace(WORD_JOINER, "") == "@here and @everyone"
    assert safe("<!subteam^S1|@security-team>").replace(WORD_JOINER, "") == "@security-team"
    assert safe("<@U0STRANGER|mallory>").replace(WORD_JOINER, "") == "@mallory"
    assert safe("<@U0STRANGER>").replace(WORD_JOINER, "") == "@U0STRANGER"


def test_mentions_of_people_already_in_the_thread_are_kept() -> None:
    assert safe("Thanks <@U0ALICE>, and <@W0BOB|bob>!") == "Thanks <@U0ALICE>, and <@W0BOB>!"


def test_an_empty_thread_allows_no_mention() -> None:
    assert "<@" not in sanitize("<@U0ALICE>", allowed_users=())


def test_ampersands_and_angle_brackets_are_escaped() -> None:
    assert safe("if a < b && c > d") == "if a &lt; b &amp;&amp; c &gt; d"
    assert safe("<script>alert(1)</script>") == "&lt;script&gt;alert(1)&lt;/script&gt;"
    assert safe("already &amp; escaped &lt;") == "already &amp; escaped &lt;"


def test_links_channels_and_dates_are_kept() -> None:
    text = "See <https://example.com/a?x=1&y=2> in <#C0123|eng> at <!date^1700000000^{date}|today>"
    assert safe(text) == "See <https://example.com/a?x=1&amp;y=2> in <#C0123|eng> at <!date^1700000000^{date}|today>"
    assert safe("<mailto:a@example.com>") == "<mailto:a@example.com>"
    assert safe("<javascript:alert(1)|click>") == "&lt;javascript:alert(1)|click&gt;"


def test_emails_and_words_that_contain_here_are_untouched() -> None:
    assert safe("mail ops@here.io about @channels and @hereafter") == "mail ops@here.io about @channels and @hereafter"


def test_a_broadcast_inside_a_link_label_is_defused() -> None:
    assert "@here" not in safe("<https://example.com|ping @here>")


ZW = "\u200b"  # zero-width space
LOOK_ALIKE_BROADCASTS = [
    ("\uff20channel", "channel"),  # fullwidth commercial at
    ("\ufe6bchannel", "channel"),  # small commercial at
    ("@\u0441hannel", "channel"),  # Cyrillic es
    ("@\u0441\u04bb\u0430nnel", "channel"),  # Cyrillic es, shha, a
    ("@chann\u0435l", "channel"),  # Cyrillic ie
    ("@\uff43\uff48\uff41\uff4e\uff4e\uff45\uff4c", "channel"),  # fullwidth letters
    ("@\U0001d41c\U0001d421\U0001d41a\U0001d427\U0001d427\U0001d41e\U0001d425", "channel"),  # mathematical bold
    ("@\U0001d4b8\U0001d4bd\U0001d4b6\U0001d4c3\U0001d4c3\U0001d452\U0001d4c1", "channel"),  # script letters
    (f"@{ZW}channel", "channel"),
    (f"@c{ZW}hannel", "channel"),
    (f"@chan{ZW}nel", "channel"),
    ("@\u200cchannel", "channel"),  # zero-width non-joiner
    ("@\u200dchannel", "channel"),  # zero-width joiner
    ("@\u2060\u2060channel", "channel"),  # word joiners
    ("@\ufeffchannel", "channel"),  # byte order mark
    ("@\u00adchannel", "channel"),  # soft hyphen
    ("@\u200echannel", "channel"),  # left-to-right mark
    ("@\u202echannel", "channel"),  # right-to-left override
    ("@c\u0301hannel", "channel"),  # combining acute accent
    ("@CHANNEL", "channel"),
    ("@\u0421HANNEL", "channel"),  # Cyrillic capital es
    ("\uff20\u0441hannel", "channel"),  # fullwidth at and Cyrillic
    ("@\u04bbere", "here"),  # Cyrillic shha
    ("@h\u0435re", "here"),  # Cyrillic ie
    ("@\u041d\u0415RE", "here"),  # Cyrillic capitals en and ie
    ("\uff20here", "here"),
    ("@\uff48\uff45\uff52\uff45", "here"),
    (f"@h{ZW}e{ZW}r{ZW}e", "here"),
    ("@\U0001d5f5\U0001d5f2\U0001d5ff\U0001d5f2", "here"),  # sans-serif bold
    ("@h\u0435r\u0435", "here"),
    ("@\u0435veryone", "everyone"),  # Cyrillic ie
    ("@every\u043ene", "everyone"),  # Cyrillic o
    ("@\u0435v\u0435ry\u043en\u0435", "everyone"),
    ("\uff20everyone", "everyone"),
    (f"@every{ZW}one", "everyone"),
    ("@\uff45\uff56\uff45\uff52\uff59\uff4f\uff4e\uff45", "everyone"),
    ("@EVERY\u041eNE", "everyone"),  # Cyrillic capital o
    ("@\u0435very\u200bone", "everyone"),
]


@pytest.mark.parametrize(("hostile", "name"), LOOK_ALIKE_BROADCASTS)
def test_look_alike_broadcasts_read_as_the_plain_defused_name(hostile: str, name: str) -> None:
    assert safe(f"Heads up {hostile} please look.") == f"Heads up @{WORD_JOINER}{name} please look."


@pytest.mark.parametrize(
    ("hostile", "url"),
    [
        ("<https://evil.example|click here>", "https://evil.example"),
        ("<https://evil.example/login|https://good.example/login>", "https://evil.example/login"),
        ("<http://evil.example|docs>", "http://evil.example"),
        ("<https://evil.example/a?b=1&c=2|the runbook>", "https://evil.example/a?b=1&amp;c=2"),
        ("<mailto:attacker@evil.example|security@our.example>", "mailto:attacker@evil.example"),
        (f"<https://evil.example|{ZW}>", "https://evil.example"),
        ("<https://evil.example|@here>", "https://evil.example"),
        ("<https://example.com|https://example.com>", "https://example.com"),
    ],
)
def test_a_masked_link_shows_its_real_url(hostile: str, url: str) -> None:
    assert safe(f"See {hostile} now.") == f"See <{url}> now."


@pytest.mark.parametrize(
    "harmless",
    [
        "caf\u00e9 at noon",
        "mail ops@\u0441hannel.example",
        "@\u0441hannels are not a thing",
        "the @\u04bbereford cattle",
        "na\u00efve @\u00e9quipe",
        "\u041f\u0440\u0438\u0432\u0435\u0442 @\u0434\u0440\u0443\u0433",
        "\uff20someone",
    ],
)
def test_non_ascii_text_that_is_no_broadcast_is_untouched(harmless: str) -> None:
    assert safe(harmless) == harmless


# ----- splitting ----------------------------------------------------------------------------------------------------


def test_short_text_is_one_section_and_blank_text_nothing() -> None:
    assert split_for_blocks("Looks good to me.") == [["Looks good to me."]]
    assert split_for_blocks("  \n\n ") == []


def test_paragraph_boundaries_are_preferred() -> None:
    first, second = "a" * 2000, "b " * 800
    messages = split_for_blocks(f"{first}\n\n{second}")
    assert messages == [[first, second.strip()]]


def test_sentences_are_kept_whole_when_a_paragraph_is_too_long() -> None:
    sentence = "This sentence is exactly fifty characters long ok. "
    (sections,) = split_for_blocks(sentence * 100)
    assert all(s.endswith("ok.") for s in sections)
    assert len(sections) == 2


def test_a_code_block_cut_in_two_is_closed_and_reopened() -> None:
    code = "```\n" + "\n".join(f"line_{i} = {i}" for i in range(400)) + "\n```"
    (sections,) = split_for_blocks(code)
    assert len(sections) > 1
    assert all(s.startswith("```") and s.endswith("```") for s in sections)
    assert all(len(s) <= 3000 for s in sections)


def test_links_and_mentions_are_never_cut() -> None:
    link = "<https://example.com/path|" + "a label with many spaces " * 3 + "end>"
    text = " ".join([link, "<@U0ALICE>", "&amp;"] * 200)
    limits = BlockLimits(section_chars=120, blocks_per_message=50, message_chars=40000)
    for section in [s for message in split_for_blocks(text, limits) for s in message]:
        assert section.count("<") == section.count(">")
        assert re.sub(r"<[^<>]*>|&amp;", "", section).strip(" ") == ""


def test_a_word_longer_than_a_section_is_hard_cut() -> None:
    (sections,) = split_for_blocks("x" * 7000)
    assert [len(s) for s in sections] == [2996, 2996, 1008]


def test_messages_respect_block_and_character_limits() -> None:
    messages = split_for_blocks(("word " * 599 + "word\n\n") * 60)
    assert len(messages) > 1
    for message in messages:
        assert len(message) <= SLACK_LIMITS.blocks_per_message
        assert sum(map(len, message)) <= SLACK_LIMITS.message_chars


def test_inconsistent_limits_are_refused() -> None:
    with pytest.raises(ValueError):
        BlockLimits(section_chars=5000, message_chars=4000)


def random_text(rng: random.Random) -> str:
    """Prose with paragraphs, sentences, long words, links and mentions, of random size."""
    pieces = []
    for _ in range(rng.randint(1, 400)):
        kind = rng.random()
        if kind < 0.6:
            words = [
                rng.choice(["risk", "the", "deploy", "token", "ok", "x" * rng.randint(1, 40)])
                for _ in range(rng.randint(1, 30))
            ]
            pieces.append(" ".join(words) + rng.choice([".", "!", "?", ""]))
        elif kind < 0.75:
            pieces.append(rng.choice(["<https://example.com/a?b=c|see this>", "<@U0ALICE>", "&amp;", "<#C1|eng>"]))
        elif kind < 0.9:
            pieces.append("\n\n")
        else:
            pieces.append("y" * rng.randint(100, 5000))
    return " ".join(pieces)


@pytest.mark.parametrize(
    "limits", [SLACK_LIMITS, BlockLimits(section_chars=120, blocks_per_message=4, message_chars=300)]
)
@pytest.mark.slow
def test_random_texts_split_within_limits_losing_nothing(limits: BlockLimits) -> None:
    rng = random.Random(20261121)
    for _ in range(60):
        text = random_text(rng)
        messages = split_for_blocks(text, limits)
        sections = [s for message in messages for s in message]
        for message in messages:
            assert 1 <= len(message) <= limits.blocks_per_message
            assert sum(map(len, message)) <= limits.message_chars
        assert all(0 < len(s) <= limits.section_chars for s in sections)
        assert all("<" not in re.sub(r"<[^<>]*>", "", s) and ">" not in re.sub(r"<[^<>]*>", "", s) for s in sections)
        assert "".join("".join(sections).split()) == "".join(text.split())
