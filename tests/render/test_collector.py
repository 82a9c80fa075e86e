"""The cycle collector is paused while many small objects are made, then resumes as it was, with what was made
meanwhile already out of its youngest generation (so no pass over all of it follows)."""

from __future__ import annotations

import gc

from attntrace.collector import paused


def test_the_collector_is_off_inside_and_as_it_was_after():
    assert gc.isenabled()
    with paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with paused():
            pass
        assert not gc.isenabled()  # a caller's own pause is kept
    finally:
        gc.enable()


def test_what_was_made_inside_leaves_the_youngest_generation():
    with paused():
        made = [[i] for i in range(20_000)]
    assert gc.get_count()[0] < 1_000  # without the move, the 20 000 lists would wait in generation 0
    assert gc.get_freeze_count() == 0  # and nothing stays frozen
    assert len(made) == 20_000


def test_objects_someone_else_froze_stay_frozen():
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with paused():
            [[i] for i in range(100)]
        assert gc.get_freeze_count() == frozen
    finally:
        gc.unfreeze()
