"""The core's object vocabulary is the simulator catalogue's categories, in the catalogue's order (the ROS nodes
name the categories through the core, without importing the simulator)."""

from goat_core.vocabulary import OBJECT_LABELS
from sim_bridge.embedded.catalogue import CATALOGUE


def test_the_vocabulary_is_the_catalogues_categories_in_order() -> None:
    names = tuple(spec.name for spec in CATALOGUE)
    missing = [n for n in names if n not in OBJECT_LABELS]
    extra = [n for n in OBJECT_LABELS if n not in names]
    assert not missing and not extra, (f"goat_core.vocabulary.OBJECT_LABELS lacks {missing} and has {extra} that the "
                                       "catalogue does not: add or remove them there")
    assert OBJECT_LABELS == names  # same order: label ids follow it
    assert len(set(OBJECT_LABELS)) == len(OBJECT_LABELS)
