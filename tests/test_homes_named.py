"""Which homes a run ran in, as --homes names them: ``meta.homes``, the command's ``homes:`` line and the report's
"homes" row (goat_suites.common.home_stats.describe_homes over the episodes' scene ids)."""

from __future__ import annotations

import pytest

from goat_suites.common.home_stats import describe_homes
from goat_suites.common.report import render_html_report
from goat_suites.common.results import SubtaskRecord, summarise
from sim_bridge.embedded.home import HOME_KINDS, HomeConfig, home_config_for
from sim_bridge.embedded.home_config import home_kind
from sim_bridge.embedded.scene_ids import scene_id_for


@pytest.mark.parametrize("kind", HOME_KINDS)
def test_each_kind_is_named_back_from_its_scene_id(kind: str) -> None:
    config = home_config_for(kind)
    expected = {"primitive": "small"}.get(kind, kind)
    assert home_kind(config) == expected
    assert describe_homes([scene_id_for(3, config), scene_id_for(4, config), scene_id_for(3, config)]) \
        == f"{expected}, 2 homes"


def test_the_description_names_mixed_and_custom_homes() -> None:
    scopia = HomeConfig(furniture="furnished", furniture_libraries=("Scopia",))
    ids = [scene_id_for(1, home_config_for("large-furnished")), scene_id_for(2, HomeConfig(num_rooms=3)),
           scene_id_for(5, scopia), "hm3d/00800-TEEsavR23oF"]
    assert describe_homes(ids) == ("large-furnished, 1 home; small (3 rooms), 1 home; furnished (Scopia), 1 home; "
                                   "another simulator's, 1 scene")


def test_the_report_has_a_homes_row() -> None:
    def record(episode: str, scene_id: str) -> SubtaskRecord:
        return SubtaskRecord(episode_id=episode, index=0, modality="object", success=True, spl=1.0, path_length_m=1.0,
                             geodesic_m=1.0, num_actions=4, stop_reason="stop", distance_to_goal_m=0.1,
                             scene_id=scene_id)

    large = home_config_for("large-furnished")
    records = [record("0", scene_id_for(1, large)), record("1", scene_id_for(2, large))]
    page = render_html_report(records, summarise(records), {}, [])
    assert "<tr><td>homes</td><td>large-furnished, 2 homes</td></tr>" in page
