"""The reductions that take a model to the forms the backends accept, one small step each
(as CVXPY's reductions and MathOptInterface's bridges): `accepts` says whether a step applies,
`apply` rewrites the problem, `invert` maps a solution and its duals back.

    SymbolicBounds   rows whose bounds hold variables or params -> body - bound
    RiskMeasures     mean / cvar / worst -> averaged, Rockafellar–Uryasev and epigraph rows
    ScenarioSplit    uncertain params -> each scenario's copy of a row, their mean in the
                     objective
    Epigraphs        convex atoms -> epigraph variables and rows (linear, or a QP's)
    RowsToBounds     single-variable rows -> column bounds (on the assembled LinearForm)
"""
