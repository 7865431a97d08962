"""The atoms of the language, one module per family: each atom's DCP facts, its numpy and
torch values and its lowerings (epigraph rows, CVXPY expression), registered in
`registry.ATOMS`, the one table the checker, the evaluator, the reductions and the backends
read."""
