"""manifest.yml is a valid Slack app manifest and asks for exactly what the app uses."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
MANIFEST = ROOT / "manifest.yml"
_SCHEMA_PATH = Path("shared", "slack", "manifest.schema.json")
# The shared/ folder sits beside the repo; a clone made deeper (e.g. by CI) finds it beside an ancestor.
SCHEMA = next(
    (folder / _SCHEMA_PATH for folder in ROOT.parents if (folder / _SCHEMA_PATH).is_file()),
    ROOT.parent / _SCHEMA_PATH,
)

EXPECTED_BOT_SCOPES = {
    "app_mentions:read",
    "chat:write",
    "chat:write.customize",
    "commands",
    "channels:history",
    "channels:read",
    "users:read",
}
EXPECTED_BOT_EVENTS = {"app_mention", "message.channels", "app_home_opened"}


@pytest.fixture(scope="module")
def manifest() -> dict[str, Any]:
    loaded = yaml.safe_load(MANIFEST.read_text(encoding="utf-8"))
    assert isinstance(loaded, dict)
    return loaded


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft7Validator:
    if not SCHEMA.is_file():
        pytest.skip(f"Slack's manifest schema is not at {SCHEMA} (it lives in the shared/ folder beside the repo)")
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft7Validator.check_schema(schema)
    return jsonschema.Draft7Validator(schema)


def errors(validator: jsonschema.Draft7Validator, document: dict[str, Any]) -> list[str]:
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(document)]


def test_manifest_validates_against_slacks_schema(
    validator: jsonschema.Draft7Validator, manifest: dict[str, Any]
) -> None:
    assert errors(validator, manifest) == []


def test_the_schema_check_catches_a_broken_manifest(
    validator: jsonschema.Draft7Validator, manifest: dict[str, Any]
) -> None:
    broken = copy.deepcopy(manifest)
    broken["settings"]["socket_mode"] = True  # a misspelt key
    del broken["features"]["slash_commands"][0]["description"]
    assert len(errors(validator, broken)) == 2


def test_socket_mode_interactivity_and_app_home_are_on(manifest: dict[str, Any]) -> None:
    settings = manifest["settings"]
    assert settings["socket_mode_enabled"] is True
    assert settings["interactivity"]["is_enabled"] is True
    assert manifest["features"]["app_home"]["home_tab_enabled"] is True


def test_the_nightwatch_command_is_declared(manifest: dict[str, Any]) -> None:
    (command,) = [c for c in manifest["features"]["slash_commands"] if c["command"] == "/nightwatch"]
    assert command["description"]
    assert "ask" in command["usage_hint"]


def test_bot_scopes_are_exactly_the_ones_the_app_uses(manifest: dict[str, Any]) -> None:
    scopes = manifest["oauth_config"]["scopes"]
    assert set(scopes["bot"]) == EXPECTED_BOT_SCOPES
    assert len(scopes["bot"]) == len(EXPECTED_BOT_SCOPES)
    assert "user" not in scopes


def test_bot_events_match_the_listeners(manifest: dict[str, Any]) -> None:
    assert set(manifest["settings"]["event_subscriptions"]["bot_events"]) == EXPECTED_BOT_EVENTS
