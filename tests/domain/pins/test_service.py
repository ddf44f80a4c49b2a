"""PinService with fakes: adding, listing, removing and refreshing pins, and a turn's block following the files."""

from __future__ import annotations

import pytest

from nightwatch.domain.errors import FetchError, InvalidInputError, NotFoundError
from nightwatch.domain.personas import PersonaDraft
from nightwatch.domain.pins.models import PinKind, PinStatus
from tests.domain.pins.pinning import DOC, PAGE, RUNBOOK, pinning


def test_a_file_pin_stores_a_snapshot_of_the_file_for_the_persona() -> None:
    env = pinning()
    outcome = env.service.add("maya", "Night Watch", PinKind.FILE, DOC, added_by="cli")
    assert outcome.new
    pin = outcome.pin
    assert (pin.persona_id, pin.project, pin.kind, pin.source) == (env.persona("Maya").id, "night-watch", "file", DOC)
    assert pin.content.startswith("# Architecture")
    assert pin.stamp == "v1"
    assert pin.added_by == "cli"
    assert outcome.message.startswith(f"Pinned file {DOC} for Maya as #{pin.id}")


def test_pins_for_all_go_to_every_persona_of_the_project_and_only_that_project() -> None:
    env = pinning()
    env.service.add("all", "night-watch", PinKind.TEXT, "Deploys freeze on Fridays.", added_by="U1")
    env.service.add(None, "night-watch", PinKind.URL, PAGE, added_by="U1")
    for name in ("Maya", "Carlos", "Dev"):
        labels = [pin.label for pin in env.service.block(env.persona(name), "night-watch").pins]
        assert labels == ['note "Deploys freeze on Fridays."', f"page {PAGE}"]
    assert env.service.block(env.persona("Maya"), "other-project").empty


def test_a_persona_gets_its_own_pins_then_the_project_wide_ones_never_anothers() -> None:
    env = pinning()
    env.service.add("all", "nw", PinKind.TEXT, "Shared note.", added_by="cli")
    env.service.add("maya", "nw", PinKind.FILE, DOC, added_by="cli")
    env.service.add("carlos", "nw", PinKind.FILE, RUNBOOK, added_by="cli")
    maya = [pin.label for pin in env.service.block(env.persona("Maya"), "nw").pins]
    assert maya == [f"file {DOC}", 'note "Shared note."']


def test_pinning_the_same_source_again_reads_it_again_instead_of_adding_a_second_pin() -> None:
    env = pinning()
    first = env.service.add("maya", "nw", PinKind.FILE, DOC, added_by="cli").pin
    env.files.write(DOC, "Rewritten architecture.")
    again = env.service.add("maya", "nw", PinKind.FILE, DOC, added_by="U9")
    assert not again.new
    assert again.pin.id == first.id
    assert again.pin.content == "Rewritten architecture."
    assert "re-read" in again.message
    assert len(env.service.list()) == 1


def test_the_same_text_twice_is_one_pin_but_two_texts_with_the_same_first_words_are_two() -> None:
    env = pinning()
    words = "Deploys freeze on Fridays and the release train leaves on Thursday at noon, every week"
    one = env.service.add("maya", "nw", PinKind.TEXT, words + ".", added_by="cli")
    two = env.service.add("maya", "nw", PinKind.TEXT, words + ".", added_by="cli")
    three = env.service.add("maya", "nw", PinKind.TEXT, words + ", except in December.", added_by="cli")
    assert one.new
    assert not two.new
    assert three.new
    assert "already pinned" in two.message
    assert one.pin.source == three.pin.source  # the title: its first words
    assert one.pin.source.endswith("…")
    assert len(one.pin.source) <= 61


def test_a_source_that_cannot_be_read_pins_nothing() -> None:
    env = pinning()
    with pytest.raises(NotFoundError):
        env.service.add("maya", "nw", PinKind.FILE, "/srv/docs/gone.md", added_by="cli")
    with pytest.raises(FetchError, match="could not be fetched"):
        env.service.add("maya", "nw", PinKind.URL, "https://down.example.com/", added_by="cli")
    assert env.service.list() == []


def test_an_unknown_persona_is_refused_with_the_known_names() -> None:
    env = pinning()
    with pytest.raises(NotFoundError, match="Known personas: Carlos, Dev, Maya"):
        env.service.add("Nobody", "nw", PinKind.TEXT, "x", added_by="cli")


def test_a_persona_has_at_most_max_pins_on_a_project_and_so_has_the_project() -> None:
    env = pinning(max_pins=2)
    env.service.add("maya", "nw", PinKind.TEXT, "One.", added_by="cli")
    env.service.add("maya", "nw", PinKind.TEXT, "Two.", added_by="cli")
    with pytest.raises(InvalidInputError, match="Maya has 2 pins on nw already"):
        env.service.add("maya", "nw", PinKind.TEXT, "Three.", added_by="cli")
    env.service.add("maya", "nw", PinKind.TEXT, "Two.", added_by="cli")  # the same again: still allowed
    env.service.add("maya", "elsewhere", PinKind.TEXT, "Three.", added_by="cli")
    env.service.add("all", "nw", PinKind.TEXT, "A.", added_by="cli")
    env.service.add("all", "nw", PinKind.TEXT, "B.", added_by="cli")
    with pytest.raises(InvalidInputError, match="The project has 2 pins on nw already"):
        env.service.add("all", "nw", PinKind.TEXT, "C.", added_by="cli")


def test_list_names_whose_each_pin_is_and_filters_by_persona_and_project() -> None:
    env = pinning()
    env.service.add("maya", "nw", PinKind.FILE, DOC, added_by="cli")
    env.service.add("carlos", "nw", PinKind.FILE, RUNBOOK, added_by="cli")
    env.service.add("all", "nw", PinKind.TEXT, "Shared.", added_by="cli")
    env.service.add("maya", "other", PinKind.URL, PAGE, added_by="cli")
    everything = env.service.list()
    assert [(view.persona, view.pin.project) for view in everything] == [
        ("Maya", "nw"),
        ("Carlos", "nw"),
        (None, "nw"),
        ("Maya", "other"),
    ]
    assert [view.label for view in env.service.list("Maya", "nw")] == [f"file {DOC}", 'note "Shared."']
    assert [view.label for view in env.service.list("all")] == ['note "Shared."']
    assert all(view.tokens > 0 for view in everything)


def test_remove_unpins_and_an_unknown_id_says_how_to_find_the_ids() -> None:
    env = pinning()
    pin = env.service.add("maya", "nw", PinKind.FILE, DOC, added_by="cli").pin
    assert pin.id is not None
    assert env.service.remove(pin.id) == pin
    assert env.service.block(env.persona("Maya"), "nw").empty
    with pytest.raises(NotFoundError, match="pin list"):
        env.service.remove(pin.id)


# --- files follow the disk -------------------------------------------------------------------------------------------


def test_the_next_turn_sees_an_edited_file() -> None:
    env = pinning()
    env.service.add("maya", "nw", PinKind.FILE, DOC, added_by="cli")
    reads = env.files.reads
    env.service.block(env.persona("Maya"), "nw")
    assert env.files.reads == reads, "an unchanged file is stat-ed, not read"
    env.files.write(DOC, "The gateway moved to Envoy.")
    block = env.service.block(env.persona("Maya"), "nw")
    assert "The gateway moved to Envoy." in block.text
    assert env.pins.list()[0].content == "The gateway moved to Envoy."  # stored: other replicas see it too
    assert env.files.reads == reads + 1


def test_a_deleted_file_is_flagged_missing_and_keeps_its_last_content_marked_stale() -> None:
    env = pinning()
    env.service.add("maya", "nw", PinKind.FILE, DOC, added_by="cli")
    env.clock.advance(hours=2)
    env.files.delete(DOC)
    block = env.service.block(env.persona("Maya"), "nw")
    assert "file missing since 2026-11-21 11:00 UTC; this is its last content, read 2026-11-21 09:00 UTC" in block.text
    assert "The gateway terminates TLS" in block.text
    stored = env.pins.list()[0]
    assert (stored.status, stored.status_since) == (PinStatus.MISSING, env.clock.now())
    writes = env.pins.writes
    env.service.block(env.persona("Maya"), "nw")
    assert env.pins.writes == writes, "a missing file is flagged once, not on every turn"
    env.files.write(DOC, "Back again.")
    block = env.service.block(env.persona("Maya"), "nw")
    assert "Back again." in block.text
    assert "missing" not in block.text
    assert env.pins.list()[0].status is PinStatus.OK


def test_a_file_that_can_no_longer_be_pinned_is_flagged_unreadable_with_the_reason() -> None:
    env = pinning()
    env.service.add("maya", "nw", PinKind.FILE, DOC, added_by="cli")
    env.files.refused[DOC] = f"{DOC} is a symbolic link; pins never follow links."
    block = env.service.block(env.persona("Maya"), "nw")
    assert "file unreadable since" in block.text
    assert "symbolic link" in block.text
    view = env.service.list()[0]
    assert view.pin.status is PinStatus.UNREADABLE
    assert view.pin.problem is not None
    assert "symbolic link" in view.pin.problem


def test_a_turn_goes_on_with_what_was_read_when_the_database_refuses_the_new_snapshot() -> None:
    env = pinning()
    env.service.add("maya", "nw", PinKind.FILE, DOC, added_by="cli")
    env.files.write(DOC, "Edited while the database is down.")
    pin = env.pins.list()[0]
    env.pins.broken = True
    fresh = env.service.current(pin)
    assert fresh.content == "Edited while the database is down."


def test_changed_updates_only_the_pins_of_the_paths_a_watch_reported() -> None:
    env = pinning()
    env.service.add("maya", "nw", PinKind.FILE, DOC, added_by="cli")
    env.service.add("all", "nw", PinKind.FILE, DOC, added_by="cli")
    env.service.add("carlos", "nw", PinKind.FILE, RUNBOOK, added_by="cli")
    env.files.write(DOC, "New architecture.")
    env.files.write(RUNBOOK, "New runbook.")
    assert env.service.watched_files() == [DOC, RUNBOOK]
    assert env.service.changed({DOC}) == 2
    contents = {(pin.persona_id, pin.source): pin.content for pin in env.pins.list()}
    assert contents[(None, DOC)] == "New architecture."
    assert contents[(env.persona("Carlos").id, RUNBOOK)] == "Restart the queue workers one at a time."


def test_refresh_reads_files_and_fetches_pages_again_and_says_what_failed() -> None:
    env = pinning()
    env.service.add("maya", "nw", PinKind.FILE, DOC, added_by="cli")
    env.service.add("maya", "nw", PinKind.URL, PAGE, added_by="cli")
    env.service.add("maya", "nw", PinKind.TEXT, "A note.", added_by="cli")
    env.pages.pages[PAGE] = "Threat model v2."
    outcomes = env.service.refresh()
    assert [o.ok for o in outcomes] == [True, True]
    assert env.service.list()[1].pin.content == "Threat model v2."
    del env.pages.pages[PAGE]
    env.files.delete(DOC)
    failed = env.service.refresh()
    assert [o.ok for o in failed] == [False, False]
    assert "flagged missing" in failed[0].message
    assert "not fetched, the pin keeps its snapshot" in failed[1].message
    assert env.service.list()[1].pin.content == "Threat model v2."
    with pytest.raises(NotFoundError):
        env.service.refresh(99)


# --- personas ---------------------------------------------------------------------------------------------------------


def test_a_rename_keeps_the_persona_s_pins() -> None:
    env = pinning()
    env.service.add("maya", "nw", PinKind.FILE, DOC, added_by="cli")
    env.personas.rename("Maya", "Maya Sec")
    assert [view.persona for view in env.service.list()] == ["Maya Sec"]
    assert not env.service.block(env.persona("Maya Sec"), "nw").empty


def test_a_delete_removes_the_persona_s_own_pins_and_says_so_but_keeps_the_project_wide_ones() -> None:
    env = pinning()
    env.service.add("maya", "nw", PinKind.FILE, DOC, added_by="cli")
    env.service.add("maya", "nw", PinKind.URL, PAGE, added_by="cli")
    env.service.add("all", "nw", PinKind.TEXT, "Shared.", added_by="cli")
    outcome = env.personas.delete("Maya")
    assert "its 2 pins were removed" in outcome.message
    assert [view.label for view in env.service.list()] == ['note "Shared."']
    env.personas.create(PersonaDraft(name="Maya", role="Security reviewer"))
    assert [pin.label for pin in env.service.block(env.persona("Maya"), "nw").pins] == ['note "Shared."']
