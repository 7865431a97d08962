"""From a bound instance to canonical forms, by a chain of small reductions."""
