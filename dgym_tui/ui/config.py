"""The user's settings: a tiny TOML file in the platform's config dir.

`DGYM_TUI_CONFIG_DIR` overrides the directory (tests point it at tmp_path). The file is read with
tomllib and written by hand: it only ever holds a few flat keys (theme = "dgym-dark").
"""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path

ENV_VAR = "DGYM_TUI_CONFIG_DIR"
APP_NAME = "dgym-tui"


def config_dir() -> Path:
    override = os.environ.get(ENV_VAR)
    if override:
        return Path(override)
    from platformdirs import user_config_dir

    return Path(user_config_dir(APP_NAME))


def config_path() -> Path:
    return config_dir() / "config.toml"


def load_config() -> dict:
    """The settings, or {} when the file is missing or unreadable (a broken file must not stop the app)."""
    try:
        with open(config_path(), "rb") as f:
            return tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError):
        return {}


def _toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    # JSON string escapes are valid TOML basic-string escapes.
    return json.dumps(str(value), ensure_ascii=False)


def save_config(**updates) -> Path:
    """Merge updates into the file (flat keys only) and write it atomically."""
    values = {k: v for k, v in load_config().items() if not isinstance(v, (dict, list))}
    values.update(updates)
    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "# dgym-tui settings\n" + "".join(f"{k} = {_toml_value(v)}\n" for k, v in sorted(values.items()))
    tmp = path.with_suffix(".toml.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
    return path
