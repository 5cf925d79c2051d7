"""The collector pause around bulk loads: nested pauses end with the last one, and a collector someone else
switched off stays off."""

import gc

import pytest

from skillorchestra_core.gc_pause import gc_paused


@pytest.fixture
def collector_on():
    was = gc.isenabled()
    gc.enable()
    yield
    (gc.enable if was else gc.disable)()


def test_nested_pauses_switch_the_collector_back_on_at_the_end(collector_on):
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer load is still running
    assert gc.isenabled()


def test_the_collector_comes_back_after_an_error(collector_on):
    with pytest.raises(RuntimeError), gc_paused():
        raise RuntimeError("load failed")
    assert gc.isenabled()


def test_a_collector_switched_off_elsewhere_stays_off(collector_on):
    gc.disable()
    with gc_paused():
        assert not gc.isenabled()
    assert not gc.isenabled()
