# Single-item lot sizing over ordered periods: a setup allows production in a period; stock
# carries demand forward. A period's production is bounded by the demand still to come,
# summed with `ord`.
set PERIODS ordered;
param demand {PERIODS} >= 0;
param setup_cost {PERIODS} >= 0;
param unit_cost {PERIODS} >= 0;
param hold_cost >= 0;
param inv0 >= 0, default 0;

var Produce {PERIODS} >= 0;
var Setup {PERIODS} binary;
var Stock {PERIODS} >= 0;

minimize Cost: sum {t in PERIODS}
   (setup_cost[t] * Setup[t] + unit_cost[t] * Produce[t] + hold_cost * Stock[t]);

subject to Balance {t in PERIODS}:
   Stock[t] = (if t = first(PERIODS) then inv0 else Stock[prev(t)]) + Produce[t] - demand[t];

subject to Only_If_Setup {t in PERIODS}:
   Produce[t] <= (sum {u in PERIODS: ord(u) >= ord(t)} demand[u]) * Setup[t];
