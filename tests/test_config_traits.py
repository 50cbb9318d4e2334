"""Every engine setting is a documented `Hipo` traitlet, with the engine's default.

`Hipo.memory_config()` builds the `MemoryConfig` from the traits of the same names, so a field
added to the engine without a trait would fail here, not silently keep its default."""

from __future__ import annotations

import dataclasses

from hipo_jupyter.ipython.config import Hipo
from hipo_jupyter.memory import MemoryConfig


def test_every_memory_config_field_has_a_configurable_trait_with_its_default() -> None:
    defaults, traits = MemoryConfig(), Hipo.class_traits(config=True)
    for field in dataclasses.fields(MemoryConfig):
        assert field.name in traits, f"MemoryConfig.{field.name} has no Hipo trait"
        trait = traits[field.name]
        assert trait.help, f"Hipo.{field.name} has no help text"
        default = trait.default()
        if field.name == "team_url":  # dynamic: $HIPO_TEAM (resolve_team_url), "" when unset
            continue
        if isinstance(default, list):  # a List trait for a tuple field
            default = tuple(default)
        assert default == getattr(defaults, field.name), field.name


def test_memory_config_carries_every_trait_value() -> None:
    settings = Hipo(daily_threshold=7, rrf_k=12.0, layer1_budgets={"ROOT": 99})
    config = settings.memory_config()
    assert config.daily_threshold == 7 and config.rrf_k == 12.0
    assert config.layer1_budgets == {**MemoryConfig().layer1_budgets, "ROOT": 99}
