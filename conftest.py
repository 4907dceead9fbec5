"""Shared pytest set-up: `fa` in every doctest and a CI-friendly Hypothesis profile."""

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

import fairanon

# Tables are built per example; wall-clock deadlines only add flakiness on a loaded CI box.
settings.register_profile("ci", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("ci")


@pytest.fixture(autouse=True)
def _doctest_namespace(doctest_namespace):
    doctest_namespace["fa"] = fairanon
    doctest_namespace["np"] = np
