# Shortest path as a unit flow from orig to dest; the right-hand side is a conditional
# written with `=` as the comparison.
set NODES;
set ARCS within NODES cross NODES;
param orig symbolic in NODES;
param dest symbolic in NODES, <> orig;
param len {ARCS} >= 0;

var Use {ARCS} >= 0, <= 1;

minimize Length: sum {(i,j) in ARCS} len[i,j] * Use[i,j];

s.t. Flow {k in NODES}:
   sum {(k,j) in ARCS} Use[k,j] - sum {(i,k) in ARCS} Use[i,k]
     = if k = orig then 1 else if k = dest then -1 else 0;
