# Longest (critical) path through a project network whose events are numbered 1..n. Tuple
# components that are not fresh dummies select arcs: the literal 1 (the start event), the
# param n (the end event), and an expression of the outer dummy (k + 1, the next event).
param n integer, > 1;
set EVENTS = 1..n;
set ARCS within EVENTS cross EVENTS;
param dur {ARCS} >= 0;
param bonus {k in 1..n-1} >= 0, default 0;   # paid when the path steps from k to k + 1

check {(i,j) in ARCS}: i < j;

var Take {ARCS} >= 0, <= 1;

maximize Length:
   sum {(i,j) in ARCS} dur[i,j] * Take[i,j] + sum {k in 1..n-1, (k, k + 1) in ARCS} bonus[k] * Take[k, k + 1];

s.t. Start: sum {(1,j) in ARCS} Take[1,j] = 1;
s.t. Finish: sum {(i,n) in ARCS} Take[i,n] = 1;
s.t. Pass {k in 2..n-1}: sum {(i,k) in ARCS} Take[i,k] = sum {(k,j) in ARCS} Take[k,j];
