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
    text = "See <https://example.com/a?x=1&y=2|the docs & notes> in <#C0123|eng> at <!date^1700000000^{date}|today>"
    assert safe(text) == (
        "See <https://example.com/a?x=1&amp;y=2|the docs &amp; notes> in <#C0123|eng> "
        "at <!date^1700000000^{date}|today>"
    )
    assert safe("<mailto:a@example.com>") == "<mailto:a@example.com>"
    assert safe("<javascript:alert(1)|click>") == "&lt;javascript:alert(1)|click&gt;"


def test_emails_and_words_that_contain_here_are_untouched() -> None:
    assert safe("mail ops@here.io about @channels and @hereafter") == "mail ops@here.io about @channels and @hereafter"


def test_a_broadcast_inside_a_link_label_is_defused() -> None:
    assert "@here" not in safe("<https://example.com|ping @here>")


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
