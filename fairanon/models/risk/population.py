"""The population a table was drawn from: a sampling fraction or a population size."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from ..._validation import check_fraction, check_int
from ...exceptions import InvalidParameterError

__all__ = ["PopulationModel", "population_model"]


@dataclass(frozen=True)
class PopulationModel:
    """A sample of n records drawn at random from a population of N records.

    Attributes
    ----------
    sample_size : int
        n, the records of the table.
    population_size : int
        N ≥ n.
    sampling_fraction : Fraction
        π = n / N, exact when the population size was given; when the fraction was
        given, N = round(n / π) and π is kept as given.
    """

    sample_size: int
    population_size: int
    sampling_fraction: Fraction

    def to_dict(self) -> dict:
        return {
            "sample_size": self.sample_size,
            "population_size": self.population_size,
            "sampling_fraction": float(self.sampling_fraction),
        }


#: The largest population the models take: float64 arithmetic on N (the estimators'
#: hypergeometric and log-gamma terms) holds whole numbers exactly up to 2**53, and no
#: population of people comes near 10**15.
MAX_POPULATION = 10**15


def population_model(
    n: int, *, sampling_fraction=None, population_size=None, caller: str = "risk"
) -> PopulationModel | None:
    """The population model of a table of `n` records, or None when neither the
    sampling fraction nor the population size is given.

    >>> population_model(100, sampling_fraction=0.1)
    PopulationModel(sample_size=100, population_size=1000, sampling_fraction=Fraction(1, 10))
    >>> population_model(100, population_size=400).sampling_fraction
    Fraction(1, 4)
    """
    if sampling_fraction is None and population_size is None:
        return None
    if sampling_fraction is not None and population_size is not None:
        raise InvalidParameterError(
            f"Give {caller} either 'sampling_fraction' or 'population_size', not both "
            f"(got {sampling_fraction!r} and {population_size!r})."
        )
    if population_size is not None:
        size = check_int(population_size, "population_size", caller, low=1)
        if size > MAX_POPULATION:
            raise InvalidParameterError(
                f"The 'population_size' parameter of {caller} must be at most "
                f"{MAX_POPULATION:.0e} (the models' arithmetic on N is exact up to there). "
                f"Got {population_size!r} instead."
            )
        if size < n:
            raise InvalidParameterError(
                f"The 'population_size' parameter of {caller} must be at least the {n} records of the "
                f"table. Got {population_size!r} instead."
            )
        return PopulationModel(n, size, Fraction(n, size))
    pi = check_fraction(sampling_fraction, "sampling_fraction", caller, low=0, high=1, low_open=True)
    size = max(n, round(n / pi))
    if size > MAX_POPULATION:
        raise InvalidParameterError(
            f"The 'sampling_fraction' parameter of {caller} gives a population of "
            f"{float(size):.3g} records, more than the {MAX_POPULATION:.0e} the models take: "
            f"give a fraction of at least {n}/{MAX_POPULATION:.0e}. Got {sampling_fraction!r} instead."
        )
    return PopulationModel(n, int(size), pi)
